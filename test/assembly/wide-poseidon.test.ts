// The wide build's Poseidon (scripts/wide/poseidon.ts: the whole permutation
// on 64-bit words, its constants read from a word table) against the portable
// build and poseidon-lite, through the module's own ABI (32-byte
// little-endian words in the I/O buffer): single hashes and tree levels, edge
// inputs (0, 1, r − 1), inputs ≥ r refused alike, random inputs.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { poseidon2 as litePoseidon2 } from "poseidon-lite/poseidon2";
import { buildPath, PROVER_TEST_WASM_PATH, PROVER_WASM_PATH } from "../../scripts/asc-build.ts";
import { type WasmBuild, wideArithmeticSupported } from "../../src/wasm-engine.ts";

const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const NOT_CANONICAL = -1;

type PoseidonExports = {
  memory: WebAssembly.Memory;
  io(size: number): number;
  poseidonHash(): number;
  poseidonLevel(n: number): number;
};

function load(path: string, build: WasmBuild): PoseidonExports {
  const module = new WebAssembly.Module(readFileSync(buildPath(path, build)));
  return new WebAssembly.Instance(module, {
    env: {
      abort() {
        throw new Error("abort");
      },
    },
  }).exports as unknown as PoseidonExports;
}

const MASK64 = (1n << 64n) - 1n;
function put(w: PoseidonExports, xs: readonly bigint[]): void {
  const at = w.io(32 * xs.length); // may grow the memory: the buffer is read after it
  const words = new BigUint64Array(w.memory.buffer, at, 4 * xs.length);
  xs.forEach((x, i) => {
    for (let k = 0; k < 4; k++) words[4 * i + k] = (x >> BigInt(64 * k)) & MASK64;
  });
}
function get(w: PoseidonExports, n: number): bigint[] {
  const at = w.io(0);
  const words = new BigUint64Array(w.memory.buffer, at, 4 * n);
  return Array.from({ length: n }, (_, i) => words[4 * i]! | (words[4 * i + 1]! << 64n) | (words[4 * i + 2]! << 128n) | (words[4 * i + 3]! << 192n));
}
/** H(a, b) by the module, or NOT_CANONICAL. */
function hash(w: PoseidonExports, a: bigint, b: bigint): bigint | number {
  put(w, [a, b]);
  const status = w.poseidonHash();
  return status === 0 ? get(w, 1)[0]! : status;
}
/** A level's parents by the module, or NOT_CANONICAL. */
function level(w: PoseidonExports, nodes: readonly bigint[]): bigint[] | number {
  put(w, nodes);
  const count = w.poseidonLevel(nodes.length);
  return count < 0 ? count : get(w, count);
}
/** LeanIMT's level rule on poseidon-lite: parent i = H(node 2i, node 2i+1), a lone last node carried up. */
function referenceLevel(nodes: readonly bigint[]): bigint[] {
  const out: bigint[] = [];
  for (let i = 0; i + 1 < nodes.length; i += 2) out.push(litePoseidon2([nodes[i]!, nodes[i + 1]!]));
  if (nodes.length % 2) out.push(nodes[nodes.length - 1]!);
  return out;
}

const random256 = (): bigint => BigInt(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`);
const element = (): bigint => random256() % R;
const EDGES = [0n, 1n, 2n, R - 1n, R - 2n, (1n << 253n) - 1n, 1n << 253n];
const NOT_ELEMENTS = [R, R + 1n, 2n * R - 1n, (1n << 255n) - 1n, (1n << 256n) - 1n];

const builds: WasmBuild[] = ["wide", "portable"];

describe.if(wideArithmeticSupported())("Poseidon(2) on both builds equals poseidon-lite", () => {
  for (const path of [PROVER_WASM_PATH, PROVER_TEST_WASM_PATH]) {
    const name = path.split("/").pop();
    const modules = Object.fromEntries(builds.map((b) => [b, load(path, b)])) as Record<WasmBuild, PoseidonExports>;

    test(`${name}: poseidonHash on every pair of edge inputs (0, 1, 2, r − 1, r − 2, 2^253 ± 1) and on random pairs`, () => {
      const pairs: [bigint, bigint][] = [];
      for (const a of EDGES) for (const b of EDGES) pairs.push([a, b]);
      for (let i = 0; i < 200; i++) pairs.push([element(), element()]);
      for (const [a, b] of pairs) {
        const expected = litePoseidon2([a, b]);
        for (const build of builds) expect({ build, a, b, h: hash(modules[build], a, b) }).toEqual({ build, a, b, h: expected });
      }
    });

    test(`${name}: an input ≥ r (r, r + 1, 2r − 1, 2^255 − 1, 2^256 − 1) is refused by both builds, in either place`, () => {
      for (const bad of NOT_ELEMENTS) {
        for (const build of builds) {
          expect(hash(modules[build], bad, 1n)).toBe(NOT_CANONICAL);
          expect(hash(modules[build], 1n, bad)).toBe(NOT_CANONICAL);
        }
      }
    });

    test(`${name}: poseidonLevel of 1, 2, 3, 4, 17 and 1001 nodes (edges and random) equals LeanIMT's rule on poseidon-lite`, () => {
      for (const n of [1, 2, 3, 4, 17, 1001]) {
        const nodes = Array.from({ length: n }, (_, i) => (i < EDGES.length ? EDGES[(i * 3) % EDGES.length]! : element()));
        const expected = referenceLevel(nodes);
        for (const build of builds) expect({ build, n, parents: level(modules[build], nodes) }).toEqual({ build, n, parents: expected });
      }
    });

    test(`${name}: a level with a node ≥ r anywhere (first, middle, lone last) is refused by both builds`, () => {
      for (const n of [1, 2, 3, 1001]) {
        for (const at of new Set([0, n >> 1, n - 1])) {
          const nodes = Array.from({ length: n }, element);
          nodes[at] = NOT_ELEMENTS[at % NOT_ELEMENTS.length]!;
          for (const build of builds) expect({ build, n, at, r: level(modules[build], nodes) }).toEqual({ build, n, at, r: NOT_CANONICAL });
        }
      }
    });

    test(`${name}: the two builds agree hash for hash on 2000 random pairs (a level of 4000 nodes and single hashes)`, () => {
      const nodes = Array.from({ length: 4000 }, element);
      const wide = level(modules.wide, nodes) as bigint[];
      const portable = level(modules.portable, nodes) as bigint[];
      expect(wide).toEqual(portable);
      for (let i = 0; i < 100; i++) expect(hash(modules.wide, nodes[2 * i]!, nodes[2 * i + 1]!)).toBe(wide[i]!);
    });
  }
});
