// Poseidon over two inputs, the hash of Semaphore v4's group trees, computed
// by the project's own WebAssembly (assembly/poseidon.ts in build/prover.wasm)
// instead of poseidon-lite's BigInt JavaScript: the same function (tested
// against poseidon-lite and circomlibjs), ≈ 3× faster per hash (bench/poseidon.ts,
// docs/performance.md), which is most of the cost of building a large group's tree
// in the service and in the agent.
//
// LeanIMT calls its hash synchronously, so the module is compiled and
// instantiated synchronously, once per thread, on first use. When it cannot be
// (a runtime without WebAssembly, a missing file, a module built before it had
// these exports) the hash falls back to poseidon-lite: the same results,
// slower; poseidonBackend() says which one is in use.
//
// Inputs are reduced modulo r first, as poseidon-lite does (it works mod r
// throughout): poseidon2(a + r, b) = poseidon2(a, b), and a negative input
// counts as its residue.
import { poseidon2 as litePoseidon2 } from "poseidon-lite/poseidon2";
import { FIELD_ORDER_R as R } from "../identity/field";
import { type ProverExports, proverModuleSync } from "../prover/wasm";

type PoseidonExports = Pick<ProverExports, "memory" | "io" | "poseidonHash" | "poseidonLevel">;

const NODE_BYTES = 32;
/** Nodes per poseidonLevel call: bounds the module's I/O buffer (2 MiB); even, so pairs never straddle two calls. */
const LEVEL_CHUNK = 65_536;

let wasm: PoseidonExports | null | undefined;
/** Eight u64 words over the I/O buffer (a ‖ b in, the hash out); rebuilt when the buffer moves or the memory grows. */
let pairWords: BigUint64Array | undefined;

function load(): PoseidonExports | null {
  try {
    const made = new WebAssembly.Instance(proverModuleSync(), {
      env: {
        abort() {
          throw new Error("build/prover.wasm aborted in Poseidon");
        },
      },
    });
    const exports = made.exports as unknown as PoseidonExports;
    if (typeof exports.poseidonHash !== "function" || typeof exports.poseidonLevel !== "function") return null;
    return exports;
  } catch {
    return null;
  }
}

function instance(): PoseidonExports | null {
  if (wasm === undefined) wasm = load();
  return wasm;
}

/** Which implementation poseidon2 uses in this thread: the project's WebAssembly, or poseidon-lite when the module could not be loaded. */
export function poseidonBackend(): "wasm" | "poseidon-lite" {
  return instance() ? "wasm" : "poseidon-lite";
}

const reduce = (x: bigint): bigint => (x >= 0n && x < R ? x : ((x % R) + R) % R);

function writeWord4(words: BigUint64Array, at: number, x: bigint): void {
  // A BigUint64Array element keeps its value's low 64 bits.
  words[at] = x;
  words[at + 1] = x >> 64n;
  words[at + 2] = x >> 128n;
  words[at + 3] = x >> 192n;
}

const readWord4 = (words: BigUint64Array, at: number): bigint => (words[at + 3]! << 192n) | (words[at + 2]! << 128n) | (words[at + 1]! << 64n) | words[at]!;

function wordsAt(w: PoseidonExports, nodes: number): BigUint64Array {
  const ptr = w.io(nodes * NODE_BYTES); // first: growing the buffer may grow the memory
  return new BigUint64Array(w.memory.buffer, ptr, nodes * 4);
}

/** Poseidon(a, b) over BN254's scalar field, as poseidon-lite's poseidon2([a, b]) and Semaphore's trees compute it. */
export function poseidon2(a: bigint, b: bigint): bigint {
  const w = instance();
  if (!w) return litePoseidon2([a, b]);
  let words = pairWords;
  // poseidonLevel, the only other user of the buffer, drops pairWords (it may move the buffer).
  if (!words || words.buffer !== w.memory.buffer) words = pairWords = wordsAt(w, 2);
  writeWord4(words, 0, reduce(a));
  writeWord4(words, 4, reduce(b));
  if (w.poseidonHash() !== 0) throw new Error("Poseidon: an input was not reduced below r");
  return readWord4(words, 0);
}

/**
 * One level of a LeanIMT: node 2i and 2i+1 hash into parent i, and a lone
 * last node is carried up unhashed, as LeanIMT builds its levels. In one call
 * into the module per `chunk` nodes (default 65,536) rather than one per pair.
 */
export function poseidonLevel(nodes: readonly bigint[], chunk = LEVEL_CHUNK): bigint[] {
  if (!Number.isInteger(chunk) || chunk < 2 || chunk % 2 !== 0) throw new RangeError("poseidonLevel: the chunk must be an even number ≥ 2");
  const w = instance();
  const parents: bigint[] = [];
  if (!w) {
    for (let i = 0; i + 1 < nodes.length; i += 2) parents.push(litePoseidon2([nodes[i]!, nodes[i + 1]!]));
    if (nodes.length % 2 === 1) parents.push(nodes[nodes.length - 1]!);
    return parents;
  }
  for (let from = 0; from < nodes.length; from += chunk) {
    const count = Math.min(chunk, nodes.length - from);
    const words = wordsAt(w, count);
    for (let i = 0; i < count; i++) writeWord4(words, 4 * i, reduce(nodes[from + i]!));
    const made = w.poseidonLevel(count);
    if (made < 0) throw new Error("Poseidon: a node was not reduced below r");
    for (let i = 0; i < made; i++) parents.push(readWord4(words, 4 * i));
  }
  pairWords = undefined;
  return parents;
}

/** Copies `count` 32-byte nodes from `from` to `to`, reversing each node's bytes (big-endian ⇄ the module's little-endian). */
function swapNodes(to: Uint8Array, toAt: number, from: Uint8Array, fromAt: number, count: number): void {
  for (let n = 0; n < count; n++) {
    const src = fromAt + n * NODE_BYTES;
    const dst = toAt + n * NODE_BYTES + NODE_BYTES - 1;
    for (let i = 0; i < NODE_BYTES; i++) to[dst - i] = from[src + i]!;
  }
}

const nodeValue = (bytes: Uint8Array, at: number): bigint => {
  let x = 0n;
  for (let i = 0; i < NODE_BYTES; i++) x = (x << 8n) | BigInt(bytes[at + i]!);
  return x;
};

/**
 * poseidonLevel for a level kept as bytes, 32 big-endian bytes per node (how
 * the agent's tree keeps its levels on disk): the parents in the same form,
 * without turning a node into a bigint. Nodes must be below r (a tree's nodes
 * always are); one that is not makes it throw.
 */
export function poseidonLevelBytes(nodes: Uint8Array, chunk = LEVEL_CHUNK): Uint8Array {
  if (nodes.length % NODE_BYTES !== 0) throw new RangeError("poseidonLevelBytes: a level is a whole number of 32-byte nodes");
  if (!Number.isInteger(chunk) || chunk < 2 || chunk % 2 !== 0) throw new RangeError("poseidonLevelBytes: the chunk must be an even number ≥ 2");
  const count = nodes.length / NODE_BYTES;
  const parents = new Uint8Array(Math.ceil(count / 2) * NODE_BYTES);
  const w = instance();
  if (!w) {
    for (let p = 0; 2 * p < count; p++) {
      const left = 2 * p * NODE_BYTES;
      if (2 * p + 1 === count) {
        parents.set(nodes.subarray(left, left + NODE_BYTES), p * NODE_BYTES);
        continue;
      }
      let h = litePoseidon2([nodeValue(nodes, left), nodeValue(nodes, left + NODE_BYTES)]);
      for (let i = NODE_BYTES - 1; i >= 0; i--, h >>= 8n) parents[p * NODE_BYTES + i] = Number(h & 0xffn);
    }
    return parents;
  }
  for (let from = 0; from < count; from += chunk) {
    const n = Math.min(chunk, count - from);
    const ptr = w.io(n * NODE_BYTES);
    const io = new Uint8Array(w.memory.buffer, ptr, n * NODE_BYTES);
    swapNodes(io, 0, nodes, from * NODE_BYTES, n);
    const made = w.poseidonLevel(n);
    if (made < 0) throw new RangeError("poseidonLevelBytes: a node is not below r");
    swapNodes(parents, (from / 2) * NODE_BYTES, io, 0, made);
  }
  pairWords = undefined;
  return parents;
}
