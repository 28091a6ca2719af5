// Benchmark: zkagent's Groth16 prover (src/prover, build/prover.wasm) against
// snarkjs, on the agent circuit and on Semaphore v4 (the stock artifacts of
// @zk-kit/semaphore-artifacts, depths 10, 16 and 20, a group of 1,000), in
// one run (bun run bench:prover = bun bench/prover.ts).
//
// Per circuit:
//   createProver                 zkey parse + checks + window tables + witness calculator, once
//                                (and the same with precompute: false, and with a tableCache
//                                directory: once writing it, once reading it)
//   zkagent prove()              Prover.prove (witness + proof) after that one createProver
//   zkagent prove(), N threads   the same with createProver({ threads: N }) (src/prover/threads.ts:
//                                helpers sum ranges of the MSMs); N from --threads, default the
//                                machine's cores (none when that is 1). The single-thread figure
//                                is the one the targets are stated for. Both builds: the other build's
//                                row runs its calling thread and helpers on that build (option build).
//   snarkjs fullProve, single    groth16.fullProve(…, { singleThread: true }): the SDK's old path,
//                                which rebuilds the curve and the witness calculator every call
//   snarkjs fullProve, curve once  the same with a single-threaded curve cached where snarkjs
//                                looks for it (globalThis.curve_bn128), as test/support does
//   breakdown                    the test build (build/prover-test.wasm) stage by stage,
//                                alternating with whole proofs in the last block: witness
//                                (circom), checks (witness copied and checked), evaluate (A_T, B_T,
//                                C_T), cosetA/B/C (each: INTT, shift, NTT), combine (a·b − c), each
//                                MSM, finish (blinding, affine, encoding), selfCheck (verification)
//
// The machine is shared: zkagent and the two snarkjs variants alternate in
// blocks, every figure is a median, and --rounds repeats the whole thing.
// Options: --circuits agent,10,16,20 (default all four), --iterations N
// (zkagent proofs per round for the agent circuit, default 40; Semaphore gets
// a quarter, at least 6; snarkjs a quarter of zkagent's, at least 3),
// --rounds N (default 1), --threads N (default availableParallelism()), --json (one object on stdout: { circuits: [...] }).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import * as snarkjs from "snarkjs";
// @ts-ignore — untyped nested dependency (the copy snarkjs itself uses)
import { buildBn128 } from "ffjavascript";
import { buildPath, buildWasm, isStale, PROVER_TEST_WASM_PATH, PROVER_WASM_PATH } from "../scripts/asc-build";
import { identityCommitment } from "../src/identity/commitment";
import { type CircuitInput, createProver, type Prover, randomScalar, writeProveInput } from "../src/prover";
import { BaseSet, type ProverTestExports } from "../src/prover/wasm";
import type { WitnessCalculator } from "../src/prover/witness";
import { parseZkey } from "../src/prover/zkey";
import { semaphoreArtifacts, semaphoreStatement } from "../test/prover/semaphore";
import { WASM_BUILD, type WasmBuild, wideArithmeticSupported } from "../src/wasm-engine";
import { median } from "./support";

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const iterations = option("--iterations", 40);
const rounds = option("--rounds", 1);
const json = args.includes("--json");
const threads = option("--threads", availableParallelism());
const selected = (args.includes("--circuits") ? args[args.indexOf("--circuits") + 1]! : "agent,10,16,20").split(",");
const log = (line: string) => (json ? process.stderr : process.stdout).write(`${line}\n`);

const root = join(import.meta.dir, "..");
const quiet = { debug() {}, info() {}, warn() {}, error() {} };
// The test build is not made by postinstall (only what `start` needs is): built here when missing or stale.
if (isStale(PROVER_TEST_WASM_PATH)) buildWasm(PROVER_TEST_WASM_PATH);
const testModule = await WebAssembly.compile(readFileSync(buildPath(PROVER_TEST_WASM_PATH, WASM_BUILD)));
// The other WebAssembly build (src/wasm-engine.ts), proving side by side with
// the process's own: the portable one when this engine runs the wide one.
const otherBuild: WasmBuild | undefined = WASM_BUILD === "wide" ? "portable" : wideArithmeticSupported() ? "wide" : undefined;
const otherModule = otherBuild ? await WebAssembly.compile(readFileSync(buildPath(PROVER_WASM_PATH, otherBuild))) : undefined;

interface Circuit {
  name: string;
  zkey: Uint8Array;
  wasm: Uint8Array;
  inputs: CircuitInput[];
  iterations: number;
}

async function agentCircuit(): Promise<Circuit> {
  const f = () => randomScalar().toString(); // already < r
  const input = async () => {
    const secret = f();
    return { secret, identity_commitment: (await identityCommitment(BigInt(secret))).toString(), nonce: f(), action_hash: f(), context_hash: f() };
  };
  return {
    name: "agent_identity",
    zkey: new Uint8Array(readFileSync(join(root, "circuits/artifacts/agent_identity.zkey"))),
    wasm: new Uint8Array(readFileSync(join(root, "circuits/artifacts/agent_identity.wasm"))),
    inputs: await Promise.all(Array.from({ length: 8 }, input)),
    iterations,
  };
}

function semaphoreCircuit(depth: number): Circuit {
  const { zkey, wasm } = semaphoreArtifacts(depth);
  // Members of a group of 1,000 (the prover at a random index), random message and scope.
  return {
    name: `semaphore-${depth}`,
    zkey,
    wasm,
    inputs: Array.from({ length: 4 }, () => semaphoreStatement(depth, 1000).input),
    iterations: Math.max(6, iterations >> 2),
  };
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

const STAGES = [
  "witness",
  "checks",
  "evaluate",
  "cosetA",
  "cosetB",
  "cosetC",
  "combine",
  "msmA",
  "msmB1",
  "msmB2",
  "msmC",
  "msmH",
  "finish",
  "selfCheck",
] as const;
type Breakdown = Record<(typeof STAGES)[number], number>;
const MSMS = [
  ["msmA", BaseSet.A],
  ["msmB1", BaseSet.B1],
  ["msmB2", BaseSet.B2],
  ["msmC", BaseSet.C],
  ["msmH", BaseSet.H],
] as const;

async function bench(c: Circuit) {
  let t = performance.now();
  const prover: Prover = await createProver({ zkey: c.zkey, wasm: c.wasm });
  const loadMs = performance.now() - t;
  const other: Prover | undefined = otherModule ? await createProver({ zkey: c.zkey, wasm: c.wasm }, { module: otherModule }) : undefined;
  const threaded: Prover | undefined = threads > 1 ? await createProver({ zkey: c.zkey, wasm: c.wasm }, { threads }) : undefined;
  // The same threads on the other build (calling thread and helpers alike).
  const otherThreaded: Prover | undefined =
    threads > 1 && otherBuild ? await createProver({ zkey: c.zkey, wasm: c.wasm }, { threads, build: otherBuild }) : undefined;
  t = performance.now();
  await createProver({ zkey: c.zkey, wasm: c.wasm }, { precompute: false });
  const loadNoTablesMs = performance.now() - t;
  // The disk cache of the tables: a first createProver that writes it, a second that reads it.
  const tableCache = mkdtempSync(join(tmpdir(), "zkagent-bench-tables-"));
  t = performance.now();
  await createProver({ zkey: c.zkey, wasm: c.wasm }, { tableCache });
  const loadCacheColdMs = performance.now() - t;
  t = performance.now();
  await createProver({ zkey: c.zkey, wasm: c.wasm }, { tableCache });
  const loadCacheWarmMs = performance.now() - t;
  rmSync(tableCache, { recursive: true, force: true });
  const staged = (await createProver({ zkey: c.zkey, wasm: c.wasm }, { module: testModule })) as unknown as {
    wasm: ProverTestExports;
    witness: WitnessCalculator;
  };
  const z = parseZkey(c.zkey);
  const nonZero = (section: Uint8Array, size: number) => {
    let k = 0;
    for (let i = 0; i < section.length; i += size) if (section.subarray(i, i + size).some((b) => b !== 0)) k++;
    return k;
  };
  const msmSizes = { A: nonZero(z.A, 64), B1: nonZero(z.B1, 64), B2: nonZero(z.B2, 128), C: nonZero(z.C, 64), H: nonZero(z.H, 64) };
  const windows = Object.fromEntries(Object.entries(BaseSet).map(([name, set]) => [name, staged.wasm.basesWindow(set)]));
  const { inputs } = c;

  const zkagentRun =
    (n: number, p: Prover = prover) =>
    async () => {
      const times: number[] = [];
      for (let i = 0; i < n; i++) times.push(await time(() => p.prove(inputs[i % inputs.length]!)));
      return times;
    };
  const snarkjsRun = (n: number, singleThread: boolean) => async () => {
    const times: number[] = [];
    for (let i = 0; i < n; i++) {
      const input = inputs[i % inputs.length];
      const args = [input, { type: "mem", data: c.wasm }, { type: "mem", data: c.zkey }, quiet, {}, { singleThread }];
      times.push(await time(() => (snarkjs.groth16.fullProve as any)(...args)));
    }
    // snarkjs leaves a curve's worth of WebAssembly memory per call behind: collect it here, and
    // let zkagent's next block start warm, so neither is charged for the other's garbage.
    Bun.gc(true);
    await zkagentRun(2)();
    return times;
  };
  async function breakdown(n: number): Promise<Breakdown> {
    const acc = Object.fromEntries(STAGES.map((k) => [k, [] as number[]])) as Record<keyof Breakdown, number[]>;
    const w = staged.wasm;
    const timed = (stage: keyof Breakdown, fn: () => unknown) => {
      const t0 = performance.now();
      const r = fn();
      acc[stage].push(performance.now() - t0);
      return r;
    };
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const witness = await staged.witness.calculate(inputs[i % inputs.length]!);
      acc.witness.push(performance.now() - t0);
      writeProveInput(w, witness, randomScalar(), randomScalar());
      if (timed("checks", () => w.stageWitness()) !== 0) throw new Error("stageWitness");
      (["evaluate", "cosetA", "cosetB", "cosetC", "combine"] as const).forEach((stage, part) => timed(stage, () => w.stageQuotientPart(part)));
      for (const [stage, set] of MSMS) timed(stage, () => w.stageMsm(set));
      if (timed("finish", () => w.stageFinish()) !== 0) throw new Error("stageFinish");
      if (timed("selfCheck", () => w.stageSelfCheck()) !== 0) throw new Error("stageSelfCheck: the proof did not verify");
    }
    return Object.fromEntries(Object.entries(acc).map(([k, v]) => [k, median(v)])) as Breakdown;
  }

  // Warm-up: JIT tiers of both, and the snarkjs curve for the "curve once" variant.
  await zkagentRun(Math.min(10, c.iterations))();
  if (other) await zkagentRun(Math.min(10, c.iterations), other)();
  if (threaded) await zkagentRun(Math.min(10, c.iterations), threaded)();
  if (otherThreaded) await zkagentRun(Math.min(10, c.iterations), otherThreaded)();
  await snarkjsRun(1, true)();
  await breakdown(2);

  const results: {
    zkagent: number[];
    other: number[];
    threads: number[];
    otherThreads: number[];
    single: number[];
    curveOnce: number[];
    breakdown: Breakdown[];
  } = {
    zkagent: [],
    other: [],
    threads: [],
    otherThreads: [],
    single: [],
    curveOnce: [],
    breakdown: [],
  };
  const snarkjsIterations = Math.max(3, c.iterations >> 2);
  for (let round = 0; round < rounds; round++) {
    const zk: number[] = [];
    const oth: number[] = [];
    const par: number[] = [];
    const otherPar: number[] = [];
    const single: number[] = [];
    const once: number[] = [];
    // Blocks: zkagent, snarkjs single, zkagent, snarkjs curve-once, zkagent alternating with the breakdown.
    const block = Math.max(1, Math.floor(c.iterations / 3));
    zk.push(...(await zkagentRun(block)()));
    if (other) oth.push(...(await zkagentRun(block, other)()));
    if (threaded) par.push(...(await zkagentRun(block, threaded)()));
    if (otherThreaded) otherPar.push(...(await zkagentRun(block, otherThreaded)()));
    single.push(...(await snarkjsRun(snarkjsIterations, true)()));
    zk.push(...(await zkagentRun(block)()));
    if (other) oth.push(...(await zkagentRun(block, other)()));
    if (threaded) par.push(...(await zkagentRun(block, threaded)()));
    if (otherThreaded) otherPar.push(...(await zkagentRun(block, otherThreaded)()));
    (globalThis as any).curve_bn128 ??= await buildBn128(true);
    once.push(...(await snarkjsRun(snarkjsIterations, false)()));
    // The last block interleaves whole proofs with the staged breakdown, so both see the same load.
    const stagedRuns: Breakdown[] = [];
    for (let i = 0; i < Math.max(1, c.iterations - 2 * block); i++) {
      zk.push(...(await zkagentRun(1)()));
      if (other) oth.push(...(await zkagentRun(1, other)()));
      stagedRuns.push(await breakdown(1));
    }
    results.zkagent.push(median(zk));
    if (other) results.other.push(median(oth));
    if (threaded) results.threads.push(median(par));
    if (otherThreaded) results.otherThreads.push(median(otherPar));
    results.single.push(median(single));
    results.curveOnce.push(median(once));
    results.breakdown.push(Object.fromEntries(STAGES.map((k) => [k, median(stagedRuns.map((b) => b[k]))])) as Breakdown);
  }

  const zkagentMs = median(results.zkagent);
  const otherMs = other ? median(results.other) : undefined;
  const singleMs = median(results.single);
  const threadsMs = threaded ? median(results.threads) : undefined;
  const otherThreadsMs = otherThreaded ? median(results.otherThreads) : undefined;
  threaded?.close();
  otherThreaded?.close();
  const onceMs = median(results.curveOnce);
  const parts = Object.fromEntries(STAGES.map((k) => [k, median(results.breakdown.map((b) => b[k]))])) as Breakdown;
  return {
    circuit: c.name,
    nVars: z.nVars,
    nPublic: z.nPublic,
    domainSize: z.domainSize,
    msmSizes,
    windows,
    iterations: c.iterations,
    rounds,
    load_ms: Math.round(loadMs),
    load_no_tables_ms: Math.round(loadNoTablesMs),
    load_table_cache_cold_ms: Math.round(loadCacheColdMs),
    load_table_cache_warm_ms: Math.round(loadCacheWarmMs),
    zkagent_median_ms: +zkagentMs.toFixed(2),
    snarkjs_fullprove_single_median_ms: +singleMs.toFixed(1),
    snarkjs_fullprove_curve_once_median_ms: +onceMs.toFixed(1),
    speedup_vs_single: +(singleMs / zkagentMs).toFixed(2),
    speedup_vs_curve_once: +(onceMs / zkagentMs).toFixed(2),
    build: WASM_BUILD,
    ...(otherMs === undefined
      ? {}
      : {
          other_build: otherBuild,
          zkagent_other_build_median_ms: +otherMs.toFixed(2),
          other_build_speedup_vs_single: +(singleMs / otherMs).toFixed(2),
        }),
    ...(threadsMs === undefined
      ? {}
      : { threads, zkagent_threads_median_ms: +threadsMs.toFixed(2), threads_speedup_vs_single: +(singleMs / threadsMs).toFixed(2) }),
    ...(otherThreadsMs === undefined
      ? {}
      : {
          zkagent_other_build_threads_median_ms: +otherThreadsMs.toFixed(2),
          other_build_threads_speedup_vs_single: +(singleMs / otherThreadsMs).toFixed(2),
        }),
    breakdown_median_ms: Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, +v.toFixed(2)])),
    per_round: {
      zkagent: results.zkagent.map((x) => +x.toFixed(2)),
      other: results.other.map((x) => +x.toFixed(2)),
      threads: results.threads.map((x) => +x.toFixed(2)),
      otherThreads: results.otherThreads.map((x) => +x.toFixed(2)),
      single: results.single.map((x) => +x.toFixed(1)),
      curveOnce: results.curveOnce.map((x) => +x.toFixed(1)),
    },
  };
}

const out: Awaited<ReturnType<typeof bench>>[] = [];
for (const name of selected) {
  const c = name === "agent" ? await agentCircuit() : semaphoreCircuit(Number(name));
  const r = await bench(c);
  out.push(r);
  log(`${r.circuit}: nVars ${r.nVars}, domain ${r.domainSize}; non-zero bases ${JSON.stringify(r.msmSizes)}; windows ${JSON.stringify(r.windows)}`);
  log(
    `  createProver (zkey parse + tables + witness calculator): ${r.load_ms} ms; without tables ${r.load_no_tables_ms} ms; ` +
      `with tableCache: ${r.load_table_cache_cold_ms} ms writing it, ${r.load_table_cache_warm_ms} ms reading it`,
  );
  log(`  zkagent prove            median ${r.zkagent_median_ms} ms   (${r.build} build; rounds: ${r.per_round.zkagent.join(", ")})`);
  if (r.zkagent_other_build_median_ms !== undefined) {
    log(
      `  zkagent prove, ${r.other_build} build  median ${r.zkagent_other_build_median_ms} ms   (rounds: ${r.per_round.other.join(", ")}); ` +
        `${r.other_build_speedup_vs_single}× snarkjs single; the ${r.build} build is ${(r.zkagent_other_build_median_ms / r.zkagent_median_ms).toFixed(2)}× faster`,
    );
  }
  if (r.zkagent_threads_median_ms !== undefined) {
    log(`  zkagent prove, ${r.threads} threads  median ${r.zkagent_threads_median_ms} ms   (${r.build} build; rounds: ${r.per_round.threads.join(", ")})`);
  }
  if (r.zkagent_other_build_threads_median_ms !== undefined) {
    log(
      `  zkagent prove, ${r.threads} threads, ${r.other_build} build  median ${r.zkagent_other_build_threads_median_ms} ms   ` +
        `(rounds: ${r.per_round.otherThreads.join(", ")}); ${r.other_build_threads_speedup_vs_single}× snarkjs single; ` +
        `the ${r.build} build is ${(r.zkagent_other_build_threads_median_ms / r.zkagent_threads_median_ms!).toFixed(2)}× faster on ${r.threads} threads`,
    );
  }
  log(
    `  snarkjs fullProve single median ${r.snarkjs_fullprove_single_median_ms} ms  → zkagent ${r.speedup_vs_single}× faster` +
      (r.threads_speedup_vs_single === undefined ? "" : ` (${r.threads_speedup_vs_single}× on ${r.threads} threads)`),
  );
  log(`  snarkjs fullProve, curve built once  median ${r.snarkjs_fullprove_curve_once_median_ms} ms  → zkagent ${r.speedup_vs_curve_once}× faster`);
  log(
    `  breakdown (test build, medians, ms): ${Object.entries(r.breakdown_median_ms)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  );
}
if (json) console.log(JSON.stringify({ circuits: out }));
process.exit(0);
