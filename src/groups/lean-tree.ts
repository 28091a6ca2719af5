// A group's tree, the one implementation the agent (src/agent/group/) and
// the service (src/groups/tree.ts, its per-process cache) share: every level
// of the Lean incremental Merkle tree Semaphore v4 uses (@zk-kit/lean-imt's
// rules: a parent is Poseidon(left, right), or its left child alone when it
// has no right one; depth ⌈log2 size⌉), kept as 32-byte big-endian nodes.
// What it hides: nothing (its leaves are public). What it reveals: nothing
// beyond them.
//
// Why all levels, and why bytes: applying k changed leaves hashes k·depth
// nodes and converts only the nodes it touches to numbers; a million-member
// tree (≈ 64 MB of nodes) is never turned into two million bigints (the
// service's LeanIMT of bigints took ≈ 385 B a leaf, this ≈ 64–80) nor
// rehashed. A run of neighbouring parents (appended leaves) is hashed a
// level at a time in the WebAssembly Poseidon. The roots it computes are
// lean-imt's (test/agent/group-tree.test.ts compares both on random trees
// and changes, removals included).
//
// Nothing here trusts what it holds: the path a proof uses is hashed up to the
// root it is proved against (verifyPath) before any proof is made.
import { poseidon2, poseidonLevelBytes } from "../groups/poseidon";

export const NODE_BYTES = 32;

/** Consecutive dirty parents from which apply() hashes a whole run in one call (fewer: one hash call each). */
const RUN_MIN = 4;
/** How much a level's buffer grows when it is full. */
const GROWTH = 1.25;

/** Poseidon over two inputs: the Semaphore v4 tree's hash (the same as src/groups/tree.ts's semaphoreTree). */
export type PairHash = (left: bigint, right: bigint) => bigint;
export const poseidonPair: PairHash = poseidon2;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** 32 big-endian bytes at `offset` as a number. */
export function readNode(bytes: Uint8Array, offset: number): bigint {
  let hex = "0x";
  for (let i = offset; i < offset + NODE_BYTES; i++) hex += HEX[bytes[i]!];
  return BigInt(hex);
}

/** `value` (below 2^256) as 32 big-endian bytes at `offset` (through hex: one conversion, not 32 bigint shifts). */
export function writeNode(bytes: Uint8Array, offset: number, value: bigint): void {
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).write(value.toString(16).padStart(64, "0"), offset, NODE_BYTES, "hex");
}

export const nodeBytes = (value: bigint): Uint8Array => {
  const bytes = new Uint8Array(NODE_BYTES);
  writeNode(bytes, 0, value);
  return bytes;
};

/** Nodes on `level` of a tree of `size` leaves: ⌈size / 2^level⌉. */
export const levelCount = (size: number, level: number): number => (size === 0 ? 0 : Math.ceil(size / 2 ** level));

/** lean-imt's depth: ⌈log2 size⌉ (0 for one leaf or none). */
export const depthOf = (size: number): number => (size <= 1 ? 0 : Math.ceil(Math.log2(size)));

/** A changed leaf: its index and value (0 for a removed member). */
export interface LeafChange {
  index: number;
  value: bigint;
}

/** A member's Merkle path as Semaphore's circuit takes it (lean-imt's generateProof). */
export interface MerklePath {
  root: bigint;
  leaf: bigint;
  /** The left/right bits of the levels that have a sibling, the lowest level first (bit 0). */
  index: number;
  siblings: bigint[];
}

/**
 * Levels 1…upTo of the lean tree over `count` leaves (32-byte nodes in
 * `leaves`), each exactly levelCount(count, level) nodes: a parent hashes its
 * two children, or is its left child alone. The same rule as apply(), for a
 * whole run of leaves at once (a first sync, or one share of it on a thread:
 * src/agent/group/tree.ts).
 */
export function buildLevels(leaves: Uint8Array, count: number, upTo: number, hash: PairHash = poseidonPair): Uint8Array[] {
  const levels: Uint8Array[] = [];
  if (hash === poseidonPair) {
    // The tree's own hash: a whole level per call into the WebAssembly module, the nodes never turned into numbers.
    let level = leaves.subarray(0, levelCount(count, 0) * NODE_BYTES);
    for (let i = 1; i <= upTo; i++) levels.push((level = poseidonLevelBytes(level)));
    return levels;
  }
  let below = leaves;
  for (let level = 1; level <= upTo; level++) {
    const childCount = levelCount(count, level - 1);
    const above = new Uint8Array(levelCount(count, level) * NODE_BYTES);
    for (let parent = 0; 2 * parent < childCount; parent++) {
      const left = 2 * parent * NODE_BYTES;
      if (2 * parent + 1 < childCount) writeNode(above, parent * NODE_BYTES, hash(readNode(below, left), readNode(below, left + NODE_BYTES)));
      else above.set(below.subarray(left, left + NODE_BYTES), parent * NODE_BYTES);
    }
    levels.push(above);
    below = above;
  }
  return levels;
}

export class LeanTree {
  /** levels[0] = leaves; each level's buffer may be longer than its nodes (room to grow). */
  private levels: Uint8Array[] = [];
  private leafCount = 0;
  private activeCount = 0;

  constructor(private readonly hash: PairHash = poseidonPair) {}

  get size(): number {
    return this.leafCount;
  }

  get depth(): number {
    return depthOf(this.leafCount);
  }

  /** Leaves that are not 0: the members a proof hides among. */
  get active(): number {
    return this.activeCount;
  }

  /** The root (0 for an empty tree). */
  get root(): bigint {
    return this.leafCount === 0 ? 0n : this.node(this.depth, 0);
  }

  node(level: number, index: number): bigint {
    return readNode(this.levels[level]!, index * NODE_BYTES);
  }

  leaf(index: number): bigint {
    return this.node(0, index);
  }

  /** The low 32 bits of leaf `index` (a hash key: commitments are Poseidon outputs), read from its bytes. */
  leafKey(index: number): number {
    const leaves = this.levels[0]!;
    const at = index * NODE_BYTES + NODE_BYTES - 4;
    return ((leaves[at]! << 24) | (leaves[at + 1]! << 16) | (leaves[at + 2]! << 8) | leaves[at + 3]!) >>> 0;
  }

  /** Whether leaf `index` is `value` (32 bytes, big-endian), compared in place. */
  leafIs(index: number, value: Uint8Array): boolean {
    const leaves = this.levels[0]!;
    const at = index * NODE_BYTES;
    for (let i = 0; i < NODE_BYTES; i++) if (leaves[at + i] !== value[i]) return false;
    return true;
  }

  /** A tree over `leaves` (size · 1 hashes). */
  static fromLeaves(leaves: readonly bigint[], hash?: PairHash): LeanTree {
    const tree = new LeanTree(hash);
    tree.apply(leaves.map((value, index) => ({ index, value })));
    return tree;
  }

  /**
   * Applies changed leaves in index order: an index inside the tree is
   * overwritten (a removal sets 0), one at the end appends. Only the changed
   * leaves' ancestors are hashed again. Throws on a gap or a disorder: the
   * caller refuses such a change set.
   */
  apply(changes: readonly LeafChange[]): void {
    if (changes.length === 0) return;
    const oldSize = this.leafCount;
    let size = oldSize;
    let last = -1;
    for (const change of changes) {
      if (!Number.isSafeInteger(change.index) || change.index <= last) throw new RangeError(`leaf ${change.index} is out of order`);
      if (change.index > size) throw new RangeError(`leaf ${change.index} leaves a gap after leaf ${size - 1}`);
      if (change.index === size) size++;
      last = change.index;
    }
    this.reserve(size);
    const leaves = this.levels[0]!;
    let dirty: number[] = [];
    for (const { index, value } of changes) {
      const before = index < oldSize ? this.leaf(index) : 0n;
      if (index < oldSize && before === value) continue;
      if (before !== 0n) this.activeCount--;
      if (value !== 0n) this.activeCount++;
      writeNode(leaves, index * NODE_BYTES, value);
      dirty.push(index);
    }
    this.leafCount = size;
    // Parents of the dirty nodes, level by level (indices stay sorted: parents of sorted children are sorted).
    const depth = this.depth;
    for (let level = 0; level < depth; level++) {
      const count = levelCount(size, level);
      const parents: number[] = [];
      for (const index of dirty) {
        const parent = index >> 1;
        if (parents[parents.length - 1] !== parent) parents.push(parent);
      }
      const below = this.levels[level]!;
      const above = this.levels[level + 1]!;
      for (let run = 0; run < parents.length; ) {
        // A run of consecutive parents (appended leaves) in one call into the module: no bigint per node.
        let end = run + 1;
        while (end < parents.length && parents[end] === parents[end - 1]! + 1) end++;
        if (end - run >= RUN_MIN && this.hash === poseidonPair) {
          const first = parents[run]!;
          const children = below.subarray(2 * first * NODE_BYTES, Math.min(2 * (parents[end - 1]! + 1), count) * NODE_BYTES);
          above.set(poseidonLevelBytes(children), first * NODE_BYTES);
          run = end;
          continue;
        }
        for (; run < end; run++) {
          const parent = parents[run]!;
          const left = 2 * parent;
          const right = left + 1;
          if (right < count) {
            writeNode(above, parent * NODE_BYTES, this.hash(readNode(below, left * NODE_BYTES), readNode(below, right * NODE_BYTES)));
          } else {
            above.set(below.subarray(left * NODE_BYTES, left * NODE_BYTES + NODE_BYTES), parent * NODE_BYTES);
          }
        }
      }
      dirty = parents;
    }
  }

  /** Bytes the levels take (their buffers, room to grow included): what a cache of trees counts. */
  get allocatedBytes(): number {
    let total = 0;
    for (const level of this.levels) total += level.byteLength;
    return total;
  }

  /**
   * Room for `size` leaves on every level, growing by a quarter (at least a
   * node): a tree that grows by many small additions copies O(1) bytes per
   * leaf amortised and never holds more than 25 % unused room.
   */
  private reserve(size: number): void {
    const depth = depthOf(size);
    for (let level = 0; level <= depth; level++) {
      const need = levelCount(size, level) * NODE_BYTES;
      const current = this.levels[level];
      if (current && current.length >= need) continue;
      const room = Math.ceil(((current?.length ?? 0) * GROWTH) / NODE_BYTES) * NODE_BYTES;
      const grown = new Uint8Array(Math.max(need, room, NODE_BYTES));
      if (current) grown.set(current);
      this.levels[level] = grown;
    }
  }

  /** The index of the leaf equal to `value` (non-zero), or -1. */
  indexOf(value: bigint): number {
    if (value === 0n || this.leafCount === 0) return -1;
    const leaves = Buffer.from(this.levels[0]!.buffer, this.levels[0]!.byteOffset, this.leafCount * NODE_BYTES);
    const needle = nodeBytes(value);
    let from = 0;
    for (;;) {
      const at = leaves.indexOf(needle, from);
      if (at < 0) return -1;
      if (at % NODE_BYTES === 0) return at / NODE_BYTES;
      from = at + 1;
    }
  }

  /** Active (non-zero) leaves among the first `size`. */
  activeIn(size: number): number {
    let activeAfter = 0;
    for (let i = size; i < this.leafCount; i++) if (this.leaf(i) !== 0n) activeAfter++;
    return this.activeCount - activeAfter;
  }

  /**
   * The tree of the first `size` leaves (the group as it stood before later
   * additions), node (level, index): stored nodes where their leaves all lie
   * in the prefix, recomputed on its right edge (at most one node per level,
   * so at most depth hashes per call, memoised in `memo`).
   */
  private prefixNode(size: number, level: number, index: number, memo: Map<string, bigint>): bigint {
    if ((index + 1) * 2 ** level <= size) return this.node(level, index);
    const key = `${level}:${index}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const left = this.prefixNode(size, level - 1, 2 * index, memo);
    const value = 2 * index + 1 < levelCount(size, level - 1) ? this.hash(left, this.prefixNode(size, level - 1, 2 * index + 1, memo)) : left;
    memo.set(key, value);
    return value;
  }

  /** The root of the first `size` leaves' tree (size ≤ this.size); the whole tree's root when size = this.size. */
  rootOf(size: number = this.leafCount): bigint {
    if (size < 0 || size > this.leafCount) throw new RangeError(`no prefix of ${size} leaves in a tree of ${this.leafCount}`);
    if (size === 0) return 0n;
    return this.prefixNode(size, depthOf(size), 0, new Map());
  }

  /** The Merkle path of leaf `index` in the tree of the first `size` leaves (lean-imt's generateProof on that tree). */
  pathOf(index: number, size: number = this.leafCount): MerklePath {
    if (index < 0 || index >= size || size > this.leafCount) throw new RangeError(`no leaf ${index} among the first ${size}`);
    const memo = new Map<string, bigint>();
    const siblings: bigint[] = [];
    const bits: number[] = [];
    let at = index;
    for (let level = 0; level < depthOf(size); level++) {
      const sibling = at ^ 1;
      if (sibling < levelCount(size, level)) {
        bits.push(at & 1);
        siblings.push(this.prefixNode(size, level, sibling, memo));
      }
      at >>= 1;
    }
    return {
      root: this.prefixNode(size, depthOf(size), 0, memo),
      leaf: this.leaf(index),
      index: bits.reduce((acc, bit, i) => acc + bit * 2 ** i, 0),
      siblings,
    };
  }

  /** Whether the path hashes up to its root (depth hashes): what is checked before a proof is made with it. */
  verifyPath(path: MerklePath): boolean {
    let node = path.leaf;
    for (const [i, sibling] of path.siblings.entries()) {
      node = Math.floor(path.index / 2 ** i) % 2 === 1 ? this.hash(sibling, node) : this.hash(node, sibling);
    }
    return node === path.root;
  }

  /**
   * A tree of `size` leaves from its levels 0…levels.length−1, each exactly
   * levelCount(size, level) nodes (built elsewhere, e.g. in shares on
   * threads); the levels above are hashed here.
   */
  static fromLevels(size: number, levels: Uint8Array[], hash?: PairHash): LeanTree {
    const tree = new LeanTree(hash);
    const depth = depthOf(size);
    const known = Math.min(levels.length - 1, depth);
    tree.levels = levels.slice(0, known + 1);
    tree.levels.push(...buildLevels(levels[known]!, levelCount(size, known), depth - known, tree.hash));
    tree.leafCount = size;
    tree.activeCount = countActive(levels[0]!, size);
    return tree;
  }

  /** Every level's nodes, leaves first, exactly levelCount(size, level) each: the cache file's payload. */
  payload(): Uint8Array[] {
    const parts: Uint8Array[] = [];
    for (let level = 0; level <= this.depth && this.leafCount > 0; level++) {
      parts.push(this.levels[level]!.subarray(0, levelCount(this.leafCount, level) * NODE_BYTES));
    }
    return parts;
  }

  /** A tree from payload() bytes (no hashing: the caller checks the root and every path it uses). Null when the length does not fit `size`. */
  static fromPayload(size: number, bytes: Uint8Array, hash?: PairHash): LeanTree | null {
    if (!Number.isSafeInteger(size) || size < 0) return null;
    let expected = 0;
    for (let level = 0; level <= depthOf(size) && size > 0; level++) expected += levelCount(size, level) * NODE_BYTES;
    if (bytes.length !== expected) return null;
    const tree = new LeanTree(hash);
    let at = 0;
    for (let level = 0; level <= depthOf(size) && size > 0; level++) {
      const length = levelCount(size, level) * NODE_BYTES;
      // Views, not copies (a million leaves are 64 MB): apply() moves a level to a buffer of its own when it grows.
      tree.levels.push(bytes.subarray(at, at + length));
      at += length;
    }
    tree.leafCount = size;
    // Counted, not taken from the file: the anonymity floor must rest on the leaves themselves.
    if (tree.levels[0]) tree.activeCount = countActive(tree.levels[0], size);
    return tree;
  }
}

/** Leaves that are not 0 among the first `count` of `leaves`. */
function countActive(leaves: Uint8Array, count: number): number {
  let active = 0;
  for (let i = 0; i < count; i++) {
    const at = i * NODE_BYTES;
    for (let j = at; j < at + NODE_BYTES; j++) {
      if (leaves[j] !== 0) {
        active++;
        break;
      }
    }
  }
  return active;
}
