// The groups' defaults agree (issue 37): the tree cache holds the largest
// group allowed, so a group at GROUP_MAX_MEMBERS is never dropped and
// reloaded from the store at every change; a configuration where the cache
// cannot hold it is refused at start; and TREE_BYTES_PER_LEAF, what the
// budget counts, bounds what a tree really takes.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";
import { GroupTrees } from "../../src/groups/cache";
import { poseidon2 } from "../../src/groups/poseidon";
import { GroupTree } from "../../src/groups/tree";
import { TREE_BYTES_PER_LEAF, treeCacheMbFor } from "../../src/groups/tree-budget";

// A million-leaf tree loaded from its stored levels, and tens of thousands of hashes, on a shared machine.
setDefaultTimeout(180_000);

const commitment = (i: number) => String(7n + BigInt(i) * 1_000_003n);

describe("one group of GROUP_MAX_MEMBERS fits the tree cache", () => {
  test("the default configuration: 1,048,576 members fit GROUP_TREE_CACHE_MB, and a group that size is kept across changes, never reloaded", () => {
    const config = loadConfig({});
    expect(config.groupMaxMembers).toBe(1_048_576);
    const budget = config.groupTreeCacheMb * 2 ** 20;
    expect(config.groupMaxMembers * TREE_BYTES_PER_LEAF).toBeLessThanOrEqual(budget);

    // A stored group of 2^20 − 8 leaves (0s: loading hashes nothing, and their levels are known: Z_k = Poseidon(Z_k−1, Z_k−1)).
    const size = config.groupMaxMembers - 8;
    const zero = ["0"];
    for (let level = 1; level <= 20; level++) zero.push(poseidon2(BigInt(zero[level - 1]!), BigInt(zero[level - 1]!)).toString());
    const levels = Array.from({ length: 20 }, (_, l) => new Array<string>(Math.ceil(size / 2 ** (l + 1))).fill(zero[l + 1]!));
    const trees = new GroupTrees(budget);
    expect(trees.loadNow("big", { version: 1, root: zero[20]!, leaves: new Array<string>(size).fill("0"), levels })).toBe(true);
    for (let change = 0; change < 6; change++) {
      // Each change (the store asks first whether the cached tree is at its version: null means it is, no reload).
      expect(trees.replayFromNow("big", 1 + change)).toBeNull();
      const plan = trees.planNow("big", 1 + change, [], { kind: "add", commitments: [commitment(change)] });
      expect(plan.outcome).toBe("planned");
      expect(trees.has("big")).toBe(true);
    }
  });

  test("a GROUP_TREE_CACHE_MB that cannot hold one group of GROUP_MAX_MEMBERS is refused, naming what it needs; unset, it grows to fit", () => {
    expect(() => loadConfig({ GROUP_TREE_CACHE_MB: "64" })).toThrow(ConfigError);
    expect(() => loadConfig({ GROUP_TREE_CACHE_MB: "64" })).toThrow(`raise it to ${treeCacheMbFor(1_048_576)}`);
    expect(() => loadConfig({ GROUP_MAX_MEMBERS: "4194304", GROUP_TREE_CACHE_MB: "128" })).toThrow(/GROUP_MAX_MEMBERS 4194304/);
    expect(loadConfig({ GROUP_MAX_MEMBERS: "4194304" }).groupTreeCacheMb).toBe(treeCacheMbFor(4_194_304));
    expect(loadConfig({ GROUP_MAX_MEMBERS: "1000", GROUP_TREE_CACHE_MB: "1" }).groupTreeCacheMb).toBe(1);
  });
});

test("TREE_BYTES_PER_LEAF bounds what a tree grown by additions and removals takes (levels, room to grow, commitment index)", () => {
  const tree = new GroupTree();
  let next = 0;
  for (const batch of [1, 3, 100, 1_000, 2_500, 7, 3_389]) {
    const added = tree.add(Array.from({ length: batch }, () => commitment(next++)));
    expect(added.ok).toBe(true);
    expect(tree.bytes).toBeLessThanOrEqual(Math.max(tree.state.size, 64) * TREE_BYTES_PER_LEAF);
  }
  for (let i = 0; i < 100; i++) tree.remove(commitment(i * 7));
  expect(tree.bytes).toBeLessThanOrEqual(tree.state.size * TREE_BYTES_PER_LEAF);
  // And it stays far below what the bigint LeanIMT took (≈ 385 B a leaf).
  expect(tree.bytes / tree.state.size).toBeLessThan(100);
});
