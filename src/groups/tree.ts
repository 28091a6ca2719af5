// A group's tree, as every process that changes the group keeps it: the
// shared LeanTree (./lean-tree.ts: Semaphore v4's Lean incremental Merkle
// tree, Poseidon over two inputs, the levels as 32-byte nodes — the agent's
// implementation too), plus where each active commitment sits. What it
// hides: nothing (the leaves are public, GET /v1/groups/{id}/members). What
// it is for: computing the new root of a change without rebuilding the tree.
//
// Why bytes and not @zk-kit/lean-imt's bigint levels: a member costs ≈ 64–80
// bytes of nodes and ≈ 8–16 of index here against ≈ 385 there, so the
// per-process cache (GROUP_TREE_CACHE_MB, 128 MiB by default) holds the
// largest group allowed (GROUP_MAX_MEMBERS, 2^20) instead of dropping it
// and reloading it from the store at every change (issue 37). The roots are
// lean-imt 2.2.5's, 0 leaves hashed like any other (test/groups/tree.test.ts
// against the stock Semaphore group; test/agent/group-tree.test.ts against
// lean-imt).
//
// The store is the source of truth. A cached tree carries the group version
// it reflects; a change (inside the store's transaction, the group row
// locked) first brings the cache to the stored version with only the leaves
// changed since (catchUp), then applies itself. A process that never changes
// a group never builds its tree; one that is behind replays what it missed.
import { FIELD_ORDER_R as R } from "../identity/field";
import { LeanTree, NODE_BYTES, writeNode } from "./lean-tree";

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

/** Why a decimal text is not a commitment a group can hold, or null. */
export function commitmentProblem(text: string): string | null {
  if (!/^(0|[1-9][0-9]{0,77})$/.test(text)) return "must be a decimal integer without sign or leading zeros";
  const value = BigInt(text);
  if (value === 0n) return "must not be 0 (a removed leaf)";
  if (value >= R) return "must be below the BN254 scalar field order r";
  return null;
}

/**
 * Where each commitment sits: an open-addressing table of leaf indices (+1;
 * 0 empty), keyed by the leaf's low 32 bits (Poseidon outputs: uniform),
 * the leaf itself compared in the tree's bytes. 4 bytes a slot, at most half
 * full: 8–16 bytes a member, against ≈ 150 for a Map of decimal strings. A
 * removed leaf's slot stays (its leaf is 0 now, which no commitment equals)
 * until the table is rebuilt.
 */
class LeafIndex {
  private slots = new Int32Array(16);
  private used = 0;

  constructor(private readonly tree: LeanTree) {}

  get bytes(): number {
    return this.slots.byteLength;
  }

  /** The index of the leaf equal to `value` (32 bytes, big-endian), or -1. */
  find(value: Uint8Array): number {
    const mask = this.slots.length - 1;
    const at = NODE_BYTES - 4;
    let slot = (((value[at]! << 24) | (value[at + 1]! << 16) | (value[at + 2]! << 8) | value[at + 3]!) >>> 0) & mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === 0) return -1;
      if (this.tree.leafIs(entry - 1, value)) return entry - 1;
      slot = (slot + 1) & mask;
    }
  }

  /** Records leaf `index` (already written in the tree, not 0). */
  add(index: number): void {
    // Full: a table for every active leaf, this one included (it is in the tree already).
    if ((this.used + 1) * 2 > this.slots.length) this.rebuild(capacityFor(this.tree.active));
    else this.put(index);
  }

  private put(index: number): void {
    const mask = this.slots.length - 1;
    let slot = this.tree.leafKey(index) & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = index + 1;
    this.used++;
  }

  /** A table of `capacity` slots over the tree's active leaves (removed leaves' stale slots go). */
  rebuild(capacity: number): void {
    this.slots = new Int32Array(capacity);
    this.used = 0;
    for (let i = 0; i < this.tree.size; i++) if (!this.tree.leafIs(i, ZERO)) this.put(i);
  }
}

const ZERO = new Uint8Array(NODE_BYTES);

/** Slots for `active` members, at most half full after them. */
const capacityFor = (active: number): number => Math.max(16, 2 ** Math.ceil(Math.log2(Math.max(1, active) * 2 + 1)));

const bytesOf = (decimal: string): Uint8Array => {
  const bytes = new Uint8Array(NODE_BYTES);
  writeNode(bytes, 0, BigInt(decimal));
  return bytes;
};

export class GroupTree {
  readonly tree: LeanTree;
  private readonly index: LeafIndex;

  constructor(
    public version = 0,
    tree: LeanTree = new LeanTree(),
  ) {
    this.tree = tree;
    this.index = new LeafIndex(tree);
    if (tree.size > 0) this.index.rebuild(capacityFor(tree.active));
  }

  get state(): TreeState {
    const size = this.tree.size;
    return { size, depth: this.tree.depth, root: size === 0 ? "0" : this.tree.root.toString() };
  }

  indexOf(commitment: string): number | undefined {
    if (commitment === REMOVED_LEAF) return undefined;
    const found = this.index.find(bytesOf(commitment));
    return found < 0 ? undefined : found;
  }

  get active(): number {
    return this.tree.active;
  }

  /** Bytes this tree takes in memory (its levels and index), what a cache of trees counts. */
  get bytes(): number {
    return this.tree.allocatedBytes + this.index.bytes;
  }

  /**
   * Applies leaves changed in the store after this tree's version, in index
   * order: an index past the end is appended (removed ones as 0, as they
   * stand), one inside is overwritten (a removal).
   */
  replay(leaves: readonly Leaf[], version: number): void {
    const changes = leaves.map((leaf) => ({ index: leaf.index, value: BigInt(leaf.value) }));
    this.tree.apply(changes);
    for (const leaf of leaves) if (leaf.value !== REMOVED_LEAF) this.index.add(leaf.index);
    this.version = version;
  }

  /** A tree at `version` from its stored leaves and internal nodes (levels 1…depth, each complete), without hashing. */
  static load(leaves: readonly string[], levels: readonly (readonly string[])[], version: number): GroupTree {
    const size = leaves.length;
    const all = [leaves, ...levels];
    let total = 0;
    for (const level of all) total += level.length * NODE_BYTES;
    const payload = new Uint8Array(total);
    let at = 0;
    for (const level of all) {
      for (const value of level) {
        writeNode(payload, at, BigInt(value));
        at += NODE_BYTES;
      }
    }
    const loaded = size === 0 ? new LeanTree() : LeanTree.fromPayload(size, payload);
    if (loaded === null) throw new RangeError(`the stored levels do not fit a tree of ${size} leaves`);
    return new GroupTree(version, loaded);
  }

  /** The internal nodes a change of `leaves` (already applied) wrote: their ancestors on every level. */
  nodesAbove(leaves: readonly Leaf[]): TreeNode[] {
    const nodes: TreeNode[] = [];
    let indices = new Set(leaves.map((leaf) => leaf.index));
    for (let level = 1; level <= this.tree.depth; level++) {
      const parents = new Set<number>();
      for (const index of indices) parents.add(index >> 1);
      indices = parents;
      for (const index of indices) nodes.push({ level, index, value: this.tree.node(level, index).toString() });
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
      if (this.indexOf(commitment) !== undefined) return { ok: false, index: i, problem: "is already a member of the group" };
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
    const index = this.indexOf(commitment);
    if (index === undefined) return null;
    const leaf = { index, value: REMOVED_LEAF };
    this.replay([leaf], this.version);
    return leaf;
  }
}
