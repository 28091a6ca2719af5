// Benchmark: zkagent's wasm Groth16 verifier against its peers, in one run
// on the same proofs (bun run bench:verifier = bun bench/verifier.ts).
//
//   zkagent verify()             Groth16Verifier (this repo), steady state, on both
//                                WebAssembly builds (src/wasm-engine.ts): wide and portable
//   zkagent verifyBatch()        per proof, batch sizes 1, 8, 64
//   snarkjs groth16.verify       under Node (child process), default and single-threaded curve
//   mcl-wasm precomputed         same work as ours: cached e(α,β), precomputed G2
//                                lines for γ and δ, MSM for vk_x, one final exp
//
// The machine is shared, so the figures that matter are ratios taken under
// the same load: zkagent and mcl-wasm alternate call by call; each snarkjs
// run (a child process) is bracketed by zkagent runs just before and after
// it. All of it is repeated --rounds times (default 3) and every figure is
// the median over rounds; the spread across rounds is printed as the noise.
//
// Options: --iterations N (default 300, per round), --rounds N, --quick (fewer iterations),
// --profile (only: where one verify() spends its time, stage by stage and
// per primitive, from the test build's bench operations; see profile()).
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join } from "node:path";
import { Groth16Verifier } from "../src/verifier/index.ts";
import { type WasmBuild, wideArithmeticSupported } from "../src/wasm-engine.ts";
import { agentIdentity, proofPool } from "../test/verifier/pool.ts";
import * as mcl from "mcl-wasm";
import { median } from "./support";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const iterations = Number(args[args.indexOf("--iterations") + 1] || 0) || (quick ? 60 : 300);

function timeIt(n: number, fn: (i: number) => void): number {
  for (let i = 0; i < Math.min(30, n); i++) fn(i); // warm-up (JIT tiers)
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    fn(i);
    times.push(performance.now() - t);
  }
  return median(times);
}

const vk = agentIdentity.vkey;
const pool = await proofPool(agentIdentity, 16);
const items = pool.map((e) => ({ proof: e.proof, publicSignals: e.publicSignals }));

// --- profile -----------------------------------------------------------------
/**
 * Cost breakdown of one verification on the test build: each stage of the
 * last verify() re-run alone (assembly/groth16.ts benchStage), and the
 * primitives (assembly/testing.ts benchOp), minimum over repetitions (the
 * least disturbed run on a shared machine).
 */
async function profile(): Promise<void> {
  const { encodeVerificationKey } = await import("../src/verifier/vkey.ts");
  const { parseProof, toBytes32 } = await import("../src/verifier/encoding.ts");
  const { PROOF_BYTES, SCALAR_BYTES, Status } = await import("../src/verifier/layout.ts");
  const { newWasm } = await import("../test/assembly/support.ts");
  const w = await newWasm();
  const key = encodeVerificationKey(vk);
  const kp = w.io(key.bytes.length);
  new Uint8Array(w.memory.buffer, kp, key.bytes.length).set(key.bytes);
  if (w.loadKey(key.nPublic) !== Status.OK) throw new Error("key");
  const it = items[0]!;
  const parsed = parseProof(it.proof);
  if (!parsed.ok) throw new Error("proof");
  const input = new Uint8Array(PROOF_BYTES + key.nPublic * SCALAR_BYTES);
  input.set(parsed.bytes);
  it.publicSignals.forEach((x, j) => toBytes32(BigInt(x), input, PROOF_BYTES + j * SCALAR_BYTES));
  const run = () => {
    const p = w.io(input.length);
    new Uint8Array(w.memory.buffer, p, input.length).set(input);
    if (w.verify() !== Status.OK) throw new Error("rejected");
  };
  const minOf = (reps: number, fn: () => void) => {
    for (let i = 0; i < 20; i++) fn();
    let best = Infinity;
    for (let i = 0; i < reps; i++) {
      const t = performance.now();
      fn();
      best = Math.min(best, performance.now() - t);
    }
    return best;
  };
  const total = minOf(200, run);
  run();
  const stages: [number, string][] = [
    [0, "decode + validate proof (G2 subgroup check of B inside)"],
    [4, "  of which: G2 subgroup check of B"],
    [1, "vk_x MSM"],
    [5, "batched y⁻¹ inversion"],
    [2, "projective line coefficients of B"],
    [3, "multi-Miller loop, 3 pairs"],
  ];
  const row = (name: string, ms: number) =>
    console.log(`${name.padEnd(58)} ${(ms * 1000).toFixed(1).padStart(8)} µs  ${((ms / total) * 100).toFixed(0).padStart(3)} %`);
  console.log(`verify() on the test build, minimum of 200: ${(total * 1000).toFixed(1)} µs`);
  for (const [stage, name] of stages)
    row(
      name,
      minOf(200, () => w.benchStage(stage)),
    );
  const N = 1000;
  const op = (code: number, n = N) => minOf(30, () => w.benchOp(code, n)) / n;
  row("final exponentiation", op(8, 1));
  console.log("primitives (per call):");
  const prims: [number, string][] = [
    [0, "fpMul"],
    [1, "fpAdd"],
    [3, "fp2Mul"],
    [4, "fp2Sqr"],
    [5, "fp12Mul"],
    [6, "fp12Sqr"],
    [7, "fp12CyclotomicSqr"],
    [11, "fp12ExpByU"],
    [12, "fp12Frobenius"],
    [13, "fp12Inv"],
    [14, "fp6Mul"],
    [15, "fp6MulBy01"],
    [16, "fpAddLazy"],
  ];
  for (const [code, name] of prims) {
    const n = code === 11 || code === 13 ? 20 : code >= 5 && code <= 15 ? 200 : N;
    console.log(`  ${name.padEnd(20)} ${(op(code, n) * 1e6).toFixed(0).padStart(7)} ns`);
  }
}
if (args.includes("--profile")) {
  await profile();
  process.exit(0);
}

// --- measurement ----------------------------------------------------------------
const rounds = Number(args[args.indexOf("--rounds") + 1] || 0) || 3;
// Both builds, side by side (the wide one where the engine runs it); "ours"
// below is the process's own build, the one the service would load.
const BUILDS: WasmBuild[] = wideArithmeticSupported() ? ["wide", "portable"] : ["portable"];
const verifiers = Object.fromEntries(
  await Promise.all(BUILDS.map(async (build) => [build, await Groth16Verifier.fromVerificationKey(vk, { build })] as const)),
) as Record<WasmBuild, Groth16Verifier>;
const onceOf = (build: WasmBuild) => (i: number) => {
  const it = items[i % items.length]!;
  if (!verifiers[build].verify(it.proof, it.publicSignals).ok) throw new Error(`zkagent (${build}) rejected a valid proof`);
};
const oursOnce = onceOf(BUILDS[0]!);
const otherOnce = BUILDS[1] ? onceOf(BUILDS[1]) : undefined;

// mcl-wasm, precomputed Groth16
await mcl.init(mcl.BN_SNARK1);
mcl.verifyOrderG2(true); // subgroup check on G2 input, as ours does
const g1 = (p: string[]) => {
  const P = new mcl.G1();
  P.setStr(`1 ${p[0]} ${p[1]}`, 10);
  return P;
};
const g2 = (p: string[][]) => {
  const Q = new mcl.G2();
  Q.setStr(`1 ${p[0]![0]} ${p[0]![1]} ${p[1]![0]} ${p[1]![1]}`, 10);
  return Q;
};
const alpha = g1(vk.vk_alpha_1);
const beta = g2(vk.vk_beta_2);
const eAB = mcl.pairing(alpha, beta);
const gammaPre = new mcl.PrecomputedG2(g2(vk.vk_gamma_2));
const deltaPre = new mcl.PrecomputedG2(g2(vk.vk_delta_2));
const ic = vk.IC.map(g1);
const mclVerify = (proof: any, signals: string[]) => {
  const A = g1(proof.pi_a);
  const B = g2(proof.pi_b);
  const C = g1(proof.pi_c);
  const s = signals.map((x) => {
    const f = new mcl.Fr();
    f.setStr(x, 10);
    return f;
  });
  const vkx = mcl.add(ic[0]!, mcl.mulVec(ic.slice(1), s));
  const f = mcl.mul(mcl.precomputedMillerLoop2mixed(A, B, mcl.neg(vkx), gammaPre), mcl.precomputedMillerLoop(mcl.neg(C), deltaPre));
  return mcl.finalExp(f).isEqual(eAB);
};
const mclOnce = (i: number) => {
  const it = items[i % items.length]!;
  if (!mclVerify(it.proof, it.publicSignals)) throw new Error("mcl rejected a valid proof");
};

/**
 * zkagent and mcl-wasm alternating in blocks of BLOCK calls (close enough in
 * time to share the load, far enough apart that neither runs inside the
 * other's allocation and JIT churn), n calls each: the medians of both.
 */
const BLOCK = 10;
function interleaved(n: number): { ours: number; mcl: number; other: number } {
  for (let i = 0; i < Math.min(30, n); i++) {
    oursOnce(i);
    otherOnce?.(i);
    mclOnce(i);
  }
  const a: number[] = [];
  const b: number[] = [];
  const c: number[] = [];
  for (let i = 0; i < n; i += BLOCK) {
    if (otherOnce) {
      for (let j = i; j < Math.min(n, i + BLOCK); j++) {
        const t = performance.now();
        otherOnce(j);
        c.push(performance.now() - t);
      }
    }
    for (let j = i; j < Math.min(n, i + BLOCK); j++) {
      const t = performance.now();
      oursOnce(j);
      a.push(performance.now() - t);
    }
    for (let j = i; j < Math.min(n, i + BLOCK); j++) {
      const t = performance.now();
      mclOnce(j);
      b.push(performance.now() - t);
    }
  }
  return { ours: median(a), mcl: median(b), other: c.length ? median(c) : Number.NaN };
}

// snarkjs under Node
const dir = mkdtempSync(join(tmpdir(), "zkagent-bench-"));
const input = join(dir, "input.json");
writeFileSync(input, JSON.stringify({ vk, items }));
const snark = (mode: string) => {
  const r = Bun.spawnSync(["node", join(import.meta.dir, "verifier-snarkjs.mjs"), input, String(Math.max(30, iterations / 3)), mode], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`snarkjs bench failed: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString().trim().split("\n").at(-1)!).median_ms as number;
};

type Round = {
  ours: number;
  /** The other build's verify(), alternating with ours (NaN when the engine runs only the portable build). */
  other: number;
  /** Per build: each snarkjs figure over the bracketing runs of that build. */
  snarkOther: number;
  singleOther: number;
  mcl: number;
  mclRatio: number;
  snark: number;
  snarkRatio: number;
  single: number;
  singleRatio: number;
  batch: Record<number, number>;
};
const results: Round[] = [];
const bracket = Math.max(30, Math.round(iterations / 5));
for (let r = 0; r < rounds; r++) {
  const pair = interleaved(iterations);
  const before = timeIt(bracket, oursOnce);
  const beforeOther = otherOnce ? timeIt(bracket, otherOnce) : Number.NaN;
  const snarkDefault = snark("default");
  const mid = timeIt(bracket, oursOnce);
  const midOther = otherOnce ? timeIt(bracket, otherOnce) : Number.NaN;
  const snarkSingle = snark("single");
  const after = timeIt(bracket, oursOnce);
  const afterOther = otherOnce ? timeIt(bracket, otherOnce) : Number.NaN;
  const batch: Record<number, number> = {};
  for (const size of [1, 8, 64]) {
    const list = Array.from({ length: size }, (_, i) => items[i % items.length]!);
    const reps = Math.max(5, Math.round((iterations * 2) / size));
    for (const build of BUILDS) {
      batch[build === BUILDS[0] ? size : -size] =
        timeIt(reps, () => {
          if (!verifiers[build].verifyBatch(list).every((x) => x.ok)) throw new Error("batch rejected valid proofs");
        }) / size;
    }
  }
  results.push({
    other: pair.other,
    snarkOther: snarkDefault / ((beforeOther + midOther) / 2),
    singleOther: snarkSingle / ((midOther + afterOther) / 2),
    ours: pair.ours,
    mcl: pair.mcl,
    mclRatio: pair.mcl / pair.ours,
    snark: snarkDefault,
    snarkRatio: snarkDefault / ((before + mid) / 2),
    single: snarkSingle,
    singleRatio: snarkSingle / ((mid + after) / 2),
    batch,
  });
}
rmSync(dir, { recursive: true, force: true });

// --- report -----------------------------------------------------------------------
const med = (f: (r: Round) => number) => median(results.map(f));
const spread = (f: (r: Round) => number) => {
  const xs = results.map(f);
  return `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;
};
const ms = (x: number) => `${x.toFixed(3)} ms`;
const x = (r: number) => `${r.toFixed(1)}×`;
const ours = med((r) => r.ours);
console.log(`Groth16 BN254 verification, agent_identity (4 public inputs), ${rounds} rounds of ${iterations} runs, medians over rounds`);
console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, bun ${Bun.version}, node ${Bun.spawnSync(["node", "--version"]).stdout.toString().trim()}`,
);
console.log("");
console.log(`zkagent verify()                 ${ms(ours)}   (${BUILDS[0]} build)`);
if (BUILDS[1]) {
  const other = med((r) => r.other);
  console.log(
    `zkagent verify(), ${BUILDS[1]} build   ${ms(other)}   the ${BUILDS[0]} build is ${x(other / ours)} faster (rounds: ${spread((r) => r.other / r.ours)}); ` +
      `against snarkjs: ${x(med((r) => r.snarkOther))} (default curve), ${x(med((r) => r.singleOther))} (single-threaded)`,
  );
}
for (const size of [1, 8, 64]) {
  const b = med((r) => r.batch[size]!);
  const other = BUILDS[1] ? `; ${BUILDS[1]} build ${ms(med((r) => r.batch[-size]!))}` : "";
  console.log(`zkagent verifyBatch(${String(size).padEnd(2)}) /proof   ${ms(b)}   (${x(ours / b)} cheaper than single${other})`);
}
console.log(
  `mcl-wasm precomputed (Bun)       ${ms(med((r) => r.mcl))}   zkagent is ${x(med((r) => r.mclRatio))} faster (rounds: ${spread((r) => r.mclRatio)})`,
);
console.log(
  `snarkjs (Node, default curve)    ${ms(med((r) => r.snark))}   zkagent is ${x(med((r) => r.snarkRatio))} faster (rounds: ${spread((r) => r.snarkRatio)})`,
);
console.log(
  `snarkjs (Node, single-threaded)  ${ms(med((r) => r.single))}   zkagent is ${x(med((r) => r.singleRatio))} faster (rounds: ${spread((r) => r.singleRatio)})`,
);
process.exit(0);
