// Peer benchmark, run by bench/verifier.ts under plain Node: snarkjs
// groth16.verify in steady state on the proofs in a JSON file.
//   node bench/verifier-snarkjs.mjs <input.json> <iterations> <default|single>
// default: snarkjs's own multi-threaded curve; single: a single-threaded curve
// cached where snarkjs looks for it (as test/support/snarkjs.ts does).
// Prints {"median_ms": …, "min_ms": …}.
import { readFileSync } from "node:fs";
import * as snarkjs from "snarkjs";

const [file, iterArg, mode] = process.argv.slice(2);
const { vk, items } = JSON.parse(readFileSync(file, "utf8"));
if (mode === "single") {
  const { buildBn128 } = await import("ffjavascript");
  globalThis.curve_bn128 = await buildBn128(true);
}
const quiet = { log() {}, info() {}, debug() {}, warn() {}, error() {} };
const n = Number(iterArg);
for (let i = 0; i < Math.min(20, n); i++) await snarkjs.groth16.verify(vk, items[i % items.length].publicSignals, items[i % items.length].proof, quiet);
const times = [];
for (let i = 0; i < n; i++) {
  const it = items[i % items.length];
  const t = performance.now();
  const ok = await snarkjs.groth16.verify(vk, it.publicSignals, it.proof, quiet);
  times.push(performance.now() - t);
  if (!ok) throw new Error("snarkjs rejected a valid proof");
}
times.sort((a, b) => a - b);
console.log(JSON.stringify({ median_ms: times[times.length >> 1], min_ms: times[0] }));
if (globalThis.curve_bn128?.terminate) await globalThis.curve_bn128.terminate();
process.exit(0);
