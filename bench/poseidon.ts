// bench:poseidon — the group trees' hash, Poseidon over two inputs (issue 32):
// µs per hash for poseidon-lite (what Semaphore's packages use), circomlibjs's
// buildPoseidon, and the project's WebAssembly (src/groups/poseidon.ts: one
// call per hash, and poseidonLevel: one call per tree level), then the time to
// build a LeanIMT of --leaves members with poseidon-lite and with ours. One
// run, the contenders taking turns over five slices of the same random pairs
// (median of the five); then the trees, once each. The module is timed on
// both WebAssembly builds (src/wasm-engine.ts) through its ABI, side by side:
// "wide build" and "portable build" rows (one call per hash, one per level);
// the ours (…) rows are src/groups/poseidon.ts on the process's own build.
//
//   bun bench/poseidon.ts [--pairs 5000] [--leaves 20000] [--json]
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { LeanIMT } from "@zk-kit/lean-imt";
import { buildPoseidon } from "circomlibjs";
import { poseidon2 as litePoseidon2 } from "poseidon-lite/poseidon2";
import { readFileSync } from "node:fs";
import { buildPath, PROVER_WASM_PATH } from "../scripts/asc-build";
import { poseidon2, poseidonBackend, poseidonLevel, poseidonLevelBytes } from "../src/groups/poseidon";
import { LeanTree } from "../src/groups/lean-tree";
import type { ProverExports } from "../src/prover/wasm";
import { type WasmBuild, WASM_BUILD, wideArithmeticSupported } from "../src/wasm-engine";
import { FIELD_ORDER_R as R } from "../src/identity/field";

const { values } = parseArgs({ options: { pairs: { type: "string" }, leaves: { type: "string" }, json: { type: "boolean" } } });
const PAIRS = Number(values.pairs ?? 5_000);
const LEAVES = Number(values.leaves ?? 20_000);

const element = () => BigInt(`0x${randomBytes(32).toString("hex")}`) % R;
const inputs = Array.from({ length: 2 * PAIRS }, element);

const circom = await buildPoseidon();
/** 32 big-endian bytes per node, as the agent keeps a level. */
const nodeBytes = (xs: bigint[]) => new Uint8Array(Buffer.concat(xs.map((x) => Buffer.from(x.toString(16).padStart(64, "0"), "hex"))));
const contenders: Record<string, (pairs: bigint[], bytes: Uint8Array) => void> = {
  "poseidon-lite": (xs) => {
    for (let i = 0; i < xs.length; i += 2) litePoseidon2([xs[i]!, xs[i + 1]!]);
  },
  circomlibjs: (xs) => {
    for (let i = 0; i < xs.length; i += 2) circom.F.toObject(circom([xs[i]!, xs[i + 1]!]));
  },
  "ours (poseidon2)": (xs) => {
    for (let i = 0; i < xs.length; i += 2) poseidon2(xs[i]!, xs[i + 1]!);
  },
  "ours (poseidonLevel)": (xs) => {
    poseidonLevel(xs);
  },
  "ours (poseidonLevelBytes)": (_, bytes) => {
    poseidonLevelBytes(bytes);
  },
};
// The module's own entry points on each build: 32-byte little-endian words in its I/O buffer.
for (const build of (wideArithmeticSupported() ? ["wide", "portable"] : ["portable"]) as WasmBuild[]) {
  const w = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(buildPath(PROVER_WASM_PATH, build))), {
    env: {
      abort() {
        throw new Error("abort");
      },
    },
  }).exports as unknown as ProverExports;
  const put = (words: BigUint64Array, at: number, x: bigint) => {
    for (let k = 0; k < 4; k++) words[at + k] = x >> BigInt(64 * k);
  };
  contenders[`${build} build (poseidonHash)`] = (xs) => {
    for (let i = 0; i < xs.length; i += 2) {
      const words = new BigUint64Array(w.memory.buffer, w.io(64), 8);
      put(words, 0, xs[i]!);
      put(words, 4, xs[i + 1]!);
      if (w.poseidonHash() !== 0) throw new Error("poseidonHash");
    }
  };
  contenders[`${build} build (poseidonLevel)`] = (xs) => {
    const words = new BigUint64Array(w.memory.buffer, w.io(32 * xs.length), 4 * xs.length);
    xs.forEach((x, i) => put(words, 4 * i, x));
    if (w.poseidonLevel(xs.length) < 0) throw new Error("poseidonLevel");
  };
}
// The machine is shared: the contenders take turns over ROUNDS slices of the
// pairs, so a burst of load from elsewhere falls on all of them, and each
// figure is the median of its rounds.
const ROUNDS = 5;
const slice = Math.max(2, Math.floor((2 * PAIRS) / ROUNDS / 2) * 2);
const warm = inputs.slice(0, Math.min(1_000, inputs.length));
for (const run of Object.values(contenders)) run(warm, nodeBytes(warm)); // warm-up
const samples: Record<string, number[]> = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
for (let round = 0; round < ROUNDS; round++) {
  const xs = inputs.slice(round * slice, (round + 1) * slice);
  const bytes = nodeBytes(xs);
  for (const [name, run] of Object.entries(contenders)) {
    const t0 = performance.now();
    run(xs, bytes);
    samples[name]!.push(((performance.now() - t0) * 1000) / (xs.length / 2));
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const rows = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));

const leaves = Array.from({ length: LEAVES }, element);
const t1 = performance.now();
const liteTree = new LeanIMT<bigint>((a, b) => litePoseidon2([a, b]), leaves);
const liteTreeMs = performance.now() - t1;
const t2 = performance.now();
const ourTree = LeanTree.fromLeaves(leaves);
const ourTreeMs = performance.now() - t2;
if (ourTree.root !== liteTree.root) throw new Error("the trees' roots differ");

if (values.json) {
  console.log(JSON.stringify({ backend: poseidonBackend(), build: WASM_BUILD, pairs: PAIRS, usPerHash: rows, leaves: leaves.length, liteTreeMs, ourTreeMs }));
} else {
  const lite = rows["poseidon-lite"]!;
  console.log(`backend: ${poseidonBackend()} (${WASM_BUILD} build); ${PAIRS} random pairs, one run (median of ${ROUNDS} interleaved slices)`);
  for (const [name, us] of Object.entries(rows))
    console.log(`${name.padEnd(26)} ${us.toFixed(1).padStart(7)} µs/hash  ×${(lite / us).toFixed(2)} vs poseidon-lite`);
  console.log(
    `LeanIMT of ${leaves.length} leaves: poseidon-lite ${(liteTreeMs / 1000).toFixed(2)} s, ours ${(ourTreeMs / 1000).toFixed(2)} s (×${(liteTreeMs / ourTreeMs).toFixed(2)}), same root`,
  );
}
