// bench:poseidon — the group trees' hash, Poseidon over two inputs (issue 32):
// µs per hash for poseidon-lite (what Semaphore's packages use), circomlibjs's
// buildPoseidon, and the project's WebAssembly (src/groups/poseidon.ts: one
// call per hash, and poseidonLevel: one call per tree level), then the time to
// build a LeanIMT of --leaves members with poseidon-lite and with ours. One
// run each, after a short warm-up; the same random pairs for every contender.
//
//   bun bench/poseidon.ts [--pairs 5000] [--leaves 20000] [--json]
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { LeanIMT } from "@zk-kit/lean-imt";
import { buildPoseidon } from "circomlibjs";
import { poseidon2 as litePoseidon2 } from "poseidon-lite/poseidon2";
import { poseidon2, poseidonBackend, poseidonLevel } from "../src/groups/poseidon";
import { semaphoreTree } from "../src/groups/tree";
import { FIELD_ORDER_R as R } from "../src/identity/field";

const { values } = parseArgs({ options: { pairs: { type: "string" }, leaves: { type: "string" }, json: { type: "boolean" } } });
const PAIRS = Number(values.pairs ?? 5_000);
const LEAVES = Number(values.leaves ?? 20_000);

const element = () => BigInt(`0x${randomBytes(32).toString("hex")}`) % R;
const inputs = Array.from({ length: 2 * PAIRS }, element);

function usPerHash(hash: (a: bigint, b: bigint) => unknown): number {
  for (let i = 0; i < Math.min(500, PAIRS); i++) hash(inputs[2 * i]!, inputs[2 * i + 1]!);
  const t0 = performance.now();
  for (let i = 0; i < PAIRS; i++) hash(inputs[2 * i]!, inputs[2 * i + 1]!);
  return ((performance.now() - t0) * 1000) / PAIRS;
}

const circom = await buildPoseidon();
const rows: Record<string, number> = {
  "poseidon-lite": usPerHash((a, b) => litePoseidon2([a, b])),
  circomlibjs: usPerHash((a, b) => circom.F.toObject(circom([a, b]))),
  "ours (poseidon2)": usPerHash(poseidon2),
};
poseidonLevel(inputs.slice(0, 1_000));
const t0 = performance.now();
poseidonLevel(inputs);
rows["ours (poseidonLevel)"] = ((performance.now() - t0) * 1000) / PAIRS;

const leaves = inputs.slice(0, LEAVES);
const t1 = performance.now();
const liteTree = new LeanIMT<bigint>((a, b) => litePoseidon2([a, b]), leaves);
const liteTreeMs = performance.now() - t1;
const t2 = performance.now();
const ourTree = semaphoreTree(leaves);
const ourTreeMs = performance.now() - t2;
if (ourTree.root !== liteTree.root) throw new Error("the trees' roots differ");

if (values.json) {
  console.log(JSON.stringify({ backend: poseidonBackend(), pairs: PAIRS, usPerHash: rows, leaves: leaves.length, liteTreeMs, ourTreeMs }));
} else {
  const lite = rows["poseidon-lite"]!;
  console.log(`backend: ${poseidonBackend()}; ${PAIRS} random pairs, one run`);
  for (const [name, us] of Object.entries(rows))
    console.log(`${name.padEnd(22)} ${us.toFixed(1).padStart(7)} µs/hash  ×${(lite / us).toFixed(2)} vs poseidon-lite`);
  console.log(
    `LeanIMT of ${leaves.length} leaves: poseidon-lite ${(liteTreeMs / 1000).toFixed(2)} s, ours ${(ourTreeMs / 1000).toFixed(2)} s (×${(liteTreeMs / ourTreeMs).toFixed(2)}), same root`,
  );
}
