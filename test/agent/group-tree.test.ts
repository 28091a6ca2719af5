// The agent's byte tree (src/groups/lean-tree.ts) against lean-imt, the tree
// Semaphore and the service use: the same roots and paths for random sizes,
// after random updates, removals and appends, and for every prefix (the
// group as it stood before later additions).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { LeanTree } from "../../src/groups/lean-tree";
import { semaphoreTree } from "../support/lean-imt";

// Thousands of Poseidon hashes on a shared two-core machine.
setDefaultTimeout(60_000);

// A deterministic generator: the cases are the same on every run.
let seed = 12345;
const random = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
const leafValue = () => BigInt(random(1_000_000) + 1) * 1_000_003n;

describe("LeanTree and lean-imt", () => {
  test("the same root, depth and every path for sizes 0–40, and after updates, removals and appends", () => {
    for (let size = 0; size <= 40; size++) {
      const leaves = Array.from({ length: size }, leafValue);
      const ours = LeanTree.fromLeaves(leaves);
      const theirs = semaphoreTree([...leaves]);
      expect(ours.size).toBe(theirs.size);
      expect(ours.depth).toBe(theirs.depth);
      expect(ours.root).toBe(size === 0 ? 0n : theirs.root);
      for (let i = 0; i < size; i++) {
        const path = ours.pathOf(i);
        const reference = theirs.generateProof(i);
        expect({ ...path }).toEqual({ root: reference.root, leaf: reference.leaf, index: reference.index, siblings: reference.siblings });
        expect(ours.verifyPath(path)).toBe(true);
      }
      // Changes: a few updates (some removals) and appends, in index order.
      if (size > 0) {
        const changes: { index: number; value: bigint }[] = [];
        for (let i = 0; i < size; i++) if (random(4) === 0) changes.push({ index: i, value: random(2) === 0 ? 0n : leafValue() });
        const appended = random(9);
        for (let k = 0; k < appended; k++) changes.push({ index: size + k, value: leafValue() });
        ours.apply(changes);
        for (const c of changes) {
          if (c.index < theirs.size) theirs.update(c.index, c.value);
          else theirs.insert(c.value);
        }
        expect(ours.root).toBe(theirs.root);
        expect(ours.active).toBe(theirs.leaves.filter((l) => l !== 0n).length);
        const probe = random(theirs.size);
        expect(ours.pathOf(probe).siblings).toEqual(theirs.generateProof(probe).siblings);
      }
    }
  });

  test("every prefix's root and paths are those of the tree of that prefix alone", () => {
    const leaves = Array.from({ length: 37 }, leafValue);
    leaves[5] = 0n;
    const tree = LeanTree.fromLeaves(leaves);
    for (let size = 1; size <= leaves.length; size++) {
      const reference = semaphoreTree(leaves.slice(0, size));
      expect(tree.rootOf(size)).toBe(reference.root);
      for (const i of [0, size - 1, Math.floor(size / 2)]) {
        expect(tree.pathOf(i, size).siblings).toEqual(reference.generateProof(i).siblings);
        expect(tree.pathOf(i, size).index).toBe(reference.generateProof(i).index);
      }
      expect(tree.activeIn(size)).toBe(leaves.slice(0, size).filter((l) => l !== 0n).length);
    }
  });

  test("the payload round-trips without hashing; a wrong length is refused; active is counted from the leaves", () => {
    const leaves = Array.from({ length: 21 }, leafValue);
    leaves[3] = 0n;
    const tree = LeanTree.fromLeaves(leaves);
    const bytes = Buffer.concat(tree.payload());
    const back = LeanTree.fromPayload(21, bytes)!;
    expect(back.root).toBe(tree.root);
    expect(back.active).toBe(20);
    expect(back.indexOf(leaves[20]!)).toBe(20);
    expect(back.indexOf(12345n)).toBe(-1);
    expect(LeanTree.fromPayload(22, bytes)).toBeNull();
    expect(LeanTree.fromPayload(21, bytes.subarray(1))).toBeNull();
  });

  test("a tampered node off the root shows in the paths that use it: verifyPath is false", () => {
    const leaves = Array.from({ length: 16 }, leafValue);
    const bytes = Buffer.concat(LeanTree.fromLeaves(leaves).payload());
    bytes[16 * 32 + 5] ^= 1; // level 1, node 0: the sibling of leaf 2's parent
    const tampered = LeanTree.fromPayload(16, bytes)!;
    expect(tampered.verifyPath(tampered.pathOf(2))).toBe(false);
  });

  test("a change set with a gap or out of order is refused", () => {
    const tree = LeanTree.fromLeaves([1n, 2n, 3n]);
    expect(() => tree.apply([{ index: 5, value: 9n }])).toThrow("gap");
    expect(() =>
      tree.apply([
        { index: 2, value: 9n },
        { index: 1, value: 9n },
      ]),
    ).toThrow("order");
  });
});

describe("buildTree: the first sync hashed in shares on threads", () => {
  test("the same tree as one thread builds, for sizes around the share boundaries", async () => {
    const { buildTree } = await import("../../src/agent/group/tree");
    for (const size of [2, 3, 64, 65, 1_000, 1_023, 1_025]) {
      const leaves = Array.from({ length: size }, (_, i) => (i % 97 === 5 ? 0n : BigInt(i + 1) * 7_919n));
      const bytes = Buffer.concat(leaves.map((leaf) => Buffer.from(leaf.toString(16).padStart(64, "0"), "hex")));
      const parallel = await buildTree(bytes, size, 4, 1); // shares on threads from 1 leaf up, for the test
      const oneThread = await buildTree(bytes, size, 1);
      const single = LeanTree.fromLeaves(leaves);
      expect(parallel.root).toBe(single.root);
      expect(Buffer.concat(parallel.payload()).equals(Buffer.concat(single.payload()))).toBe(true);
      expect(parallel.active).toBe(single.active);
      expect(oneThread.root).toBe(single.root);
    }
  }, 60_000);
});
