// The group tree without a store: batches, removals and replays give the
// stock Semaphore group's root; the internal nodes each change reports, kept
// as a store keeps them (the last value per level and index), load into the
// same tree without hashing.
import { expect, test } from "bun:test";
import { Group } from "@semaphore-protocol/group";
import { GroupTree, type Leaf, type TreeNode } from "../../src/groups/tree";

const commitment = (i: number) => String(7n + BigInt(i) * 1_000_003n);

/** The stock group for these leaves ("0" removed): placeholders removed, as a client must with Group 4.14.2. */
function stock(leaves: string[]): Group {
  const group = new Group(leaves.map((v) => (v === "0" ? 1n : BigInt(v))));
  leaves.forEach((v, i) => v === "0" && group.removeMember(i));
  return group;
}

test("batches of uneven sizes and removals (right children, the last leaf, the first) keep the stock root, and the reported nodes reload the tree", () => {
  const tree = new GroupTree();
  const stored = new Map<string, TreeNode>();
  const leaves: string[] = [];
  const keep = (nodes: TreeNode[]) => {
    for (const node of nodes) stored.set(`${node.level}:${node.index}`, node);
  };
  const apply = (changed: Leaf[]) => {
    for (const leaf of changed) leaves[leaf.index] = leaf.value;
    keep(tree.nodesAbove(changed));
  };
  let next = 0;
  for (const size of [1, 2, 5, 1, 13, 64, 3]) {
    const added = tree.add(Array.from({ length: size }, () => commitment(next++)));
    if (!added.ok) throw new Error(added.problem);
    apply(added.leaves);
    expect(tree.state.root).toBe(stock(leaves).root.toString());
  }
  for (const index of [1, leaves.length - 1, 0, 37]) {
    const removed = tree.remove(leaves[index]!);
    apply([removed!]);
    expect(tree.state.root).toBe(stock(leaves).root.toString());
  }
  expect(tree.remove(leaves[1]!)).toBeNull();

  const depth = tree.state.depth;
  const levels = Array.from({ length: depth }, (_, l) =>
    [...stored.values()]
      .filter((n) => n.level === l + 1)
      .sort((a, b) => a.index - b.index)
      .map((n) => n.value),
  );
  // Complete: every node of every level was reported at some change.
  for (const [l, level] of levels.entries()) expect(level.length).toBe(Math.ceil(leaves.length / 2 ** (l + 1)));
  const loaded = GroupTree.load(leaves, levels, tree.version);
  expect(loaded.state).toEqual(tree.state);
  // And it goes on like the original: a member added and one removed.
  const more = loaded.add([commitment(next)]);
  expect(more.ok).toBe(true);
  loaded.remove(leaves[5]!);
  const replayed = new GroupTree();
  replayed.replay([...leaves.map((value, index) => ({ index, value: index === 5 ? "0" : value })), { index: leaves.length, value: commitment(next) }], 9);
  expect(loaded.state).toEqual(replayed.state);
  expect(loaded.indexOf(leaves[5]!)).toBeUndefined();
  expect(loaded.indexOf(commitment(next))).toBe(leaves.length);
});
