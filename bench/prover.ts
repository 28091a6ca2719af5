// Benchmark: zkagent's Groth16 prover (src/prover, build/prover.wasm) against
// snarkjs on the agent circuit, in one run (bun run bench:prover = bun
// bench/prover.ts).
//
//   zkagent prove()              createProver once, then Prover.prove (witness + proof)
//   snarkjs fullProve, single    groth16.fullProve(…, { singleThread: true }): the SDK's old path,
//                                which rebuilds the curve and the witness calculator every call
//   snarkjs fullProve, curve once  the same with a single-threaded curve cached where snarkjs
//                                looks for it (globalThis.curve_bn128), as test/support does
//   breakdown                    the test build (build/prover-test.wasm) stage by stage,
//                                alternating with whole proofs in the last block:
//                                witness (circom), quotient (witness checks + NTTs), each MSM,
//                                finish (blinding, encoding, the self-check verification)
//
// The machine is shared: zkagent and the two snarkjs variants alternate in
// blocks, every figure is a median, and --rounds repeats the whole thing.
// Options: --iterations N (zkagent proofs per round, default 40; snarkjs gets
// a quarter), --rounds N (default 1), --json (one object on stdout).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as snarkjs from "snarkjs";
// @ts-ignore — untyped nested dependency (the copy snarkjs itself uses)
import { buildBn128 } from "ffjavascript";
import { identityCommitment } from "../src/identity/commitment";
import { type CircuitInput, createProver, writeProveInput, randomScalar } from "../src/prover";
import { BaseSet, type ProverTestExports } from "../src/prover/wasm";
import type { WitnessCalculator } from "../src/prover/witness";
import { parseZkey } from "../src/prover/zkey";
import { median } from "./support";

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const iterations = option("--iterations", 40);
const rounds = option("--rounds", 1);
const json = args.includes("--json");
const log = (line: string) => (json ? process.stderr : process.stdout).write(`${line}\n`);

const root = join(import.meta.dir, "..");
const zkey = new Uint8Array(readFileSync(join(root, "circuits/artifacts/agent_identity.zkey")));
const wasm = new Uint8Array(readFileSync(join(root, "circuits/artifacts/agent_identity.wasm")));
const quiet = { debug() {}, info() {}, warn() {}, error() {} };

async function randomInput(): Promise<Record<string, string>> {
  const f = () => randomScalar().toString(); // already < r
  const secret = f();
  return { secret, identity_commitment: (await identityCommitment(BigInt(secret))).toString(), nonce: f(), action_hash: f(), context_hash: f() };
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

// --- set-up -------------------------------------------------------------------------
const loadStarted = performance.now();
const prover = await createProver({ zkey, wasm });
const loadMs = performance.now() - loadStarted;
const testModule = await WebAssembly.compile(readFileSync(join(root, "build/prover-test.wasm")));
const staged = (await createProver({ zkey, wasm }, { module: testModule })) as unknown as { wasm: ProverTestExports; witness: WitnessCalculator };
const z = parseZkey(zkey);
const nonZero = (section: Uint8Array, size: number) => {
  let k = 0;
  for (let i = 0; i < section.length; i += size) if (section.subarray(i, i + size).some((b) => b !== 0)) k++;
  return k;
};
const msmSizes = { A: nonZero(z.A, 64), B1: nonZero(z.B1, 64), B2: nonZero(z.B2, 128), C: nonZero(z.C, 64), H: nonZero(z.H, 64) };
const windows = Object.fromEntries(Object.entries(BaseSet).map(([name, set]) => [name, staged.wasm.basesWindow(set)]));
const inputs = await Promise.all(Array.from({ length: 8 }, randomInput));

function zkagentRun(n: number) {
  return async () => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) times.push(await time(() => prover.prove(inputs[i % inputs.length] as CircuitInput)));
    return times;
  };
}
const snarkjsRun = (n: number, singleThread: boolean) => async () => {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    times.push(
      await time(() =>
        (snarkjs.groth16.fullProve as any)(inputs[i % inputs.length], { type: "mem", data: wasm }, { type: "mem", data: zkey }, quiet, {}, { singleThread }),
      ),
    );
  }
  // snarkjs leaves a curve's worth of WebAssembly memory per call behind: collect it here, and
  // let zkagent's next block start warm, so neither is charged for the other's garbage.
  Bun.gc(true);
  await zkagentRun(3)();
  return times;
};

type Breakdown = Record<"witness" | "quotient" | "msmA" | "msmB1" | "msmB2" | "msmC" | "msmH" | "finish", number>;
async function breakdown(n: number): Promise<Breakdown> {
  const acc: Record<keyof Breakdown, number[]> = { witness: [], quotient: [], msmA: [], msmB1: [], msmB2: [], msmC: [], msmH: [], finish: [] };
  const w = staged.wasm;
  for (let i = 0; i < n; i++) {
    let t = performance.now();
    const witness = await staged.witness.calculate(inputs[i % inputs.length] as CircuitInput);
    acc.witness.push(performance.now() - t);
    writeProveInput(w, witness, randomScalar(), randomScalar());
    t = performance.now();
    if (w.stageWitness() !== 0) throw new Error("stageWitness");
    w.stageQuotient();
    acc.quotient.push(performance.now() - t);
    for (const [name, set] of [
      ["msmA", BaseSet.A],
      ["msmB1", BaseSet.B1],
      ["msmB2", BaseSet.B2],
      ["msmC", BaseSet.C],
      ["msmH", BaseSet.H],
    ] as const) {
      t = performance.now();
      w.stageMsm(set);
      acc[name].push(performance.now() - t);
    }
    t = performance.now();
    if (w.stageFinish() !== 0) throw new Error("stageFinish: the proof did not verify");
    acc.finish.push(performance.now() - t);
  }
  return Object.fromEntries(Object.entries(acc).map(([k, v]) => [k, median(v)])) as Breakdown;
}

// Warm-up: JIT tiers of both, and the snarkjs curve for the "curve once" variant.
await zkagentRun(10)();
await snarkjsRun(2, true)();
await breakdown(5);

const results: { zkagent: number[]; single: number[]; curveOnce: number[]; breakdown: Breakdown[] } = { zkagent: [], single: [], curveOnce: [], breakdown: [] };
const snarkjsIterations = Math.max(4, iterations >> 2);
for (let round = 0; round < rounds; round++) {
  const zk: number[] = [];
  const single: number[] = [];
  const once: number[] = [];
  // Blocks: zkagent, snarkjs single, zkagent, snarkjs curve-once, zkagent alternating with the breakdown.
  const block = Math.max(1, Math.floor(iterations / 3));
  zk.push(...(await zkagentRun(block)()));
  single.push(...(await snarkjsRun(snarkjsIterations, true)()));
  zk.push(...(await zkagentRun(block)()));
  (globalThis as any).curve_bn128 ??= await buildBn128(true);
  once.push(...(await snarkjsRun(snarkjsIterations, false)()));
  // The last block interleaves whole proofs with the staged breakdown, so both see the same load.
  const staged: Breakdown[] = [];
  for (let i = 0; i < iterations - 2 * block; i++) {
    zk.push(...(await zkagentRun(1)()));
    staged.push(await breakdown(1));
  }
  results.zkagent.push(median(zk));
  results.single.push(median(single));
  results.curveOnce.push(median(once));
  results.breakdown.push(Object.fromEntries(Object.keys(staged[0]!).map((k) => [k, median(staged.map((b) => b[k as keyof Breakdown]))])) as Breakdown);
}

const zkagentMs = median(results.zkagent);
const singleMs = median(results.single);
const onceMs = median(results.curveOnce);
const parts = Object.fromEntries(
  Object.keys(results.breakdown[0]!).map((k) => [k, median(results.breakdown.map((b) => b[k as keyof Breakdown]))]),
) as Breakdown;
const out = {
  circuit: { nVars: z.nVars, nPublic: z.nPublic, domainSize: z.domainSize, constraints: "see docs/performance.md", msmSizes, windows },
  iterations,
  rounds,
  load_ms: Math.round(loadMs),
  zkagent_median_ms: +zkagentMs.toFixed(2),
  snarkjs_fullprove_single_median_ms: +singleMs.toFixed(1),
  snarkjs_fullprove_curve_once_median_ms: +onceMs.toFixed(1),
  speedup_vs_single: +(singleMs / zkagentMs).toFixed(2),
  speedup_vs_curve_once: +(onceMs / zkagentMs).toFixed(2),
  breakdown_median_ms: Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, +v.toFixed(2)])),
  per_round: {
    zkagent: results.zkagent.map((x) => +x.toFixed(2)),
    single: results.single.map((x) => +x.toFixed(1)),
    curveOnce: results.curveOnce.map((x) => +x.toFixed(1)),
  },
};
if (json) console.log(JSON.stringify(out));
else {
  log(`agent_identity: nVars ${z.nVars}, domain ${z.domainSize}; non-zero bases ${JSON.stringify(msmSizes)}; windows ${JSON.stringify(windows)}`);
  log(`createProver (zkey parse + tables + witness calculator): ${out.load_ms} ms`);
  log(`zkagent prove            median ${out.zkagent_median_ms} ms   (rounds: ${out.per_round.zkagent.join(", ")})`);
  log(`snarkjs fullProve single median ${out.snarkjs_fullprove_single_median_ms} ms  → zkagent ${out.speedup_vs_single}× faster`);
  log(`snarkjs fullProve, curve built once  median ${out.snarkjs_fullprove_curve_once_median_ms} ms  → zkagent ${out.speedup_vs_curve_once}× faster`);
  log(
    `breakdown (test build, medians, ms): ${Object.entries(out.breakdown_median_ms)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  );
}
process.exit(0);
