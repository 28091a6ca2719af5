// A group's tree, as every process that changes the group keeps it: a
// Semaphore v4 group (a Lean incremental Merkle tree, @zk-kit/lean-imt, with
// Poseidon over two inputs, exactly as @semaphore-protocol/group builds it),
// plus where each active commitment sits.
//
// Why LeanIMT ≥ 2.2.5 and not the Group class of @semaphore-protocol/group
// 4.14.2: that Group pins lean-imt 2.2.4, whose insertMany treats a 0 right
// leaf as absent (not hashed) while update() and the circuit hash it; a tree
// rebuilt from leaves with removed members would get another root than the
// tree the removals made. 2.2.5 hashes 0 leaves on both paths. What it hides:
// nothing (the leaves are public, GET /v1/groups/{id}/members). What it is
// for: computing the new root of a change without rebuilding the tree.
//
// The store is the source of truth. A cached tree carries the group version
// it reflects; a change (inside the store's transaction, the group row
// locked) first brings the cache to the stored version with only the leaves
// changed since (catchUp), then applies itself. A process that never changes
// a group never builds its tree; one that is behind replays what it missed.
import { LeanIMT } from "@zk-kit/lean-imt";
import { poseidon2 } from "poseidon-lite/poseidon2";
import { FIELD_ORDER_R as R } from "../identity/field";

/**
 * A Semaphore v4 tree (lean-imt with Poseidon over two inputs) over `leaves`:
 * the one construction the service's group trees and the agent's rebuilt
 * trees share, so both compute the same roots.
 */
export const semaphoreTree = (leaves: bigint[] = []): LeanIMT<bigint> => new LeanIMT<bigint>((a, b) => poseidon2([a, b]), leaves);

/** One leaf as the store keeps it: its index and its value (decimal; "0" once removed). */
export interface Leaf {
  index: number;
  value: string;
}

/** The facts of a tree that the group row and the root history keep. */
export interface TreeState {
  size: number;
  depth: number;
  /** Decimal; "0" for an empty tree. */
  root: string;
}

export const REMOVED_LEAF = "0";

/** An internal node (level ≥ 1) as the store keeps it beside the leaves, so that a process without the tree loads it instead of hashing it. */
export interface TreeNode {
  level: number;
  index: number;
  /** Decimal. */
  value: string;
}

/**
 * The tree's levels, leaves first. LeanIMT 2.2.5 keeps them in `_nodes` and
 * offers no accessor for one internal node (export() serialises them all);
 * the stored nodes are read from, and a loaded tree written to, this one
 * field, and a loaded tree's root is checked against the stored root.
 */
const levelsOf = (tree: LeanIMT<bigint>): bigint[][] => (tree as unknown as { _nodes: bigint[][] })._nodes;

/** Why a decimal text is not a commitment a group can hold, or null. */
export function commitmentProblem(text: string): string | null {
  if (!/^(0|[1-9][0-9]{0,77})$/.test(text)) return "must be a decimal integer without sign or leading zeros";
  const value = BigInt(text);
  if (value === 0n) return "must not be 0 (a removed leaf)";
  if (value >= R) return "must be below the BN254 scalar field order r";
  return null;
}

export class GroupTree {
  readonly tree = semaphoreTree();
  /** Active commitment → leaf index. */
  private readonly at = new Map<string, number>();
  /** Leaf index → its value, the same strings as `at` holds (the tree's own leaves are private to it). */
  private readonly values: string[] = [];

  constructor(public version = 0) {}

  get state(): TreeState {
    const size = this.tree.size;
    return { size, depth: this.tree.depth, root: size === 0 ? "0" : this.tree.root.toString() };
  }

  indexOf(commitment: string): number | undefined {
    return this.at.get(commitment);
  }

  get active(): number {
    return this.at.size;
  }

  /**
   * Applies leaves changed in the store after this tree's version, in index
   * order: an index past the end is appended (removed ones as 0, as they
   * stand), one inside is overwritten (a removal).
   */
  replay(leaves: readonly Leaf[], version: number): void {
    let appended: Leaf[] = [];
    const flush = () => {
      if (appended.length === 0) return;
      this.tree.insertMany(appended.map((leaf) => BigInt(leaf.value)));
      for (const leaf of appended) {
        this.values.push(leaf.value);
        if (leaf.value !== REMOVED_LEAF) this.at.set(leaf.value, leaf.index);
      }
      appended = [];
    };
    for (const leaf of leaves) {
      if (leaf.index >= this.tree.size + appended.length) {
        appended.push(leaf);
        continue;
      }
      flush();
      const before = this.values[leaf.index]!;
      if (before === leaf.value) continue;
      this.at.delete(before);
      this.values[leaf.index] = leaf.value;
      this.tree.update(leaf.index, BigInt(leaf.value));
      if (leaf.value !== REMOVED_LEAF) this.at.set(leaf.value, leaf.index);
    }
    flush();
    this.version = version;
  }

  /** A tree at `version` from its stored leaves and internal nodes (levels 1…depth, each complete), without hashing. */
  static load(leaves: readonly string[], levels: readonly (readonly string[])[], version: number): GroupTree {
    const tree = new GroupTree(version);
    const stored = levelsOf(tree.tree);
    stored.length = 0;
    stored.push(leaves.map(BigInt), ...levels.map((level) => level.map(BigInt)));
    for (const [index, value] of leaves.entries()) {
      tree.values.push(value);
      if (value !== REMOVED_LEAF) tree.at.set(value, index);
    }
    return tree;
  }

  /** The internal nodes a change of `leaves` (already applied) wrote: their ancestors on every level. */
  nodesAbove(leaves: readonly Leaf[]): TreeNode[] {
    const levels = levelsOf(this.tree);
    const nodes: TreeNode[] = [];
    let indices = new Set(leaves.map((leaf) => leaf.index));
    for (let level = 1; level < levels.length; level++) {
      const parents = new Set<number>();
      for (const index of indices) parents.add(index >> 1);
      indices = parents;
      for (const index of indices) nodes.push({ level, index, value: levels[level]![index]!.toString() });
    }
    return nodes;
  }

  /**
   * Appends `commitments` (each checked by commitmentProblem already), or
   * names the first that is a member or repeated; nothing changes then.
   */
  add(commitments: readonly string[]): { ok: true; leaves: Leaf[] } | { ok: false; index: number; problem: string } {
    const seen = new Set<string>();
    for (const [i, commitment] of commitments.entries()) {
      if (this.at.has(commitment)) return { ok: false, index: i, problem: "is already a member of the group" };
      if (seen.has(commitment)) return { ok: false, index: i, problem: "is repeated in the batch" };
      seen.add(commitment);
    }
    const first = this.tree.size;
    const leaves = commitments.map((value, i) => ({ index: first + i, value }));
    this.replay(leaves, this.version);
    return { ok: true, leaves };
  }

  /** Sets the member's leaf to 0, as Semaphore removes; null when it is not an active member. */
  remove(commitment: string): Leaf | null {
    const index = this.at.get(commitment);
    if (index === undefined) return null;
    const leaf = { index, value: REMOVED_LEAF };
    this.replay([leaf], this.version);
    return leaf;
  }
}
