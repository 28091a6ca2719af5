// bench:field — the field primitives of the two WebAssembly builds side by
// side in one process (src/wasm-engine.ts): the portable build (9 × 29-bit
// limb products) and the wide build (assembly/wide.wat, on i64.mul_wide_u).
// fpMul, fp2Mul, frMul, fpSqr, frSqr, and what is built on them in the
// verifier (fp2Sqr, fp12Mul, fp12Sqr, the cyclotomic squaring, the final
// exponentiation), from the test builds' benchmark loops (assembly/testing.ts
// benchOp, assembly/prover-testing.ts benchMul). The builds alternate in
// short blocks (≈ 0.5 ms each), --blocks of them per build and primitive
// (default 200), so the machine's load falls on both alike; each figure is
// the minimum over blocks (the least disturbed), with the 10th percentile
// beside it. Last, a whole Groth16 verify() of the agent circuit on each
// build's production module, alternating call by call (one block = one call),
// and a whole proof of the agent circuit (Prover.prove, witness included, one
// thread) the same way, --proofs of them per build (default 30). (Long blocks, tried first, let one build catch a burst of load
// the other missed: identical code differed by 20 % between the builds.)
//
// Poseidon (poseidonHash, and poseidonLevel per hash) runs the same way.
//
// --optimized-splice: the left column is the wide build with binaryen -O3 run
// on the spliced functions, as scripts/asc-splice.ts did before (it no longer
// does: measure that choice again on a new engine or binaryen).
//
// --without fpSqr,fp2Sqr,… measures what replacements of assembly/wide.wat
// gain: the left column is then not the portable build but a wide build
// without them (asc's text of each module, spliced here with the rest of
// scripts/asc-wide.ts's functions), so each piece is kept only if it measures
// faster in one run.
//
//   bun bench/field.ts [--blocks 200] [--proofs 30] [--without name,…] [--optimized-splice] [--json]
import { parseArgs } from "node:util";
import { instantiate } from "@assemblyscript/loader";
import { ascCommand, buildPath, buildWasm, isStale, PROVER_TEST_WASM_PATH, TEST_WASM_PATH } from "../scripts/asc-build";
import { spliceWide } from "../scripts/asc-splice";
import { WIDE_FUNCTIONS, wideText } from "../scripts/asc-wide";
import { Groth16Verifier } from "../src/verifier/index.ts";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { PROVER_WASM_PATH } from "../scripts/asc-build";
import { identityCommitment } from "../src/identity/commitment";
import { createProver, randomScalar, writeProveInput } from "../src/prover";
import { BaseSet, type ProverTestExports } from "../src/prover/wasm";
import { type WasmBuild, wideArithmeticSupported } from "../src/wasm-engine";
import { agentIdentity, proofPool } from "../test/verifier/pool.ts";

const { values } = parseArgs({
  options: {
    blocks: { type: "string" },
    proofs: { type: "string" },
    without: { type: "string" },
    "optimized-splice": { type: "boolean" },
    json: { type: "boolean" },
  },
});
const PROOFS = Number(values.proofs ?? 30);
const ROUNDS = Number(values.blocks ?? 200);
if (!wideArithmeticSupported()) throw new Error("this engine does not run the wide build (WebAssembly wide arithmetic): nothing to compare");
for (const path of [TEST_WASM_PATH, PROVER_TEST_WASM_PATH]) if (isStale(path)) buildWasm(path);

type Loops = { memory: WebAssembly.Memory; io(size: number): number; benchOp(op: number, n: number): void; benchMul(field: number, n: number): void };
const load = async (path: string): Promise<Loops> =>
  (await instantiate<Loops>(await WebAssembly.compile(await Bun.file(path).arrayBuffer()), {})).exports as unknown as Loops;
// The left column: the portable build, or (--without) the wide build without the named replacements.
const without = (values.without ?? "")
  .split(",")
  .filter(Boolean)
  .map((n) => {
    const name = Object.keys(WIDE_FUNCTIONS).find((f) => f.endsWith(`/${n}`));
    if (!name) throw new Error(`--without: no replacement named ${n} (${Object.keys(WIDE_FUNCTIONS).join(", ")})`);
    return name;
  });
// --optimized-splice: the left column is the wide build with binaryen's optimiser run on the spliced functions (scripts/asc-splice.ts).
const optimizedSplice = values["optimized-splice"] === true;
const LEFT = without.length ? `wide − ${without.map((n) => n.split("/").pop()).join(", ")}` : optimizedSplice ? "wide, binaryen -O3" : "portable";
const variantDir = mkdtempSync(join(tmpdir(), "zkagent-field-"));
/** The wide module of path without the --without replacements (compiled and spliced here), or the build's own module. */
function modulePath(path: string, build: WasmBuild): string {
  if (build === "wide" || (!without.length && !optimizedSplice)) return buildPath(path, build);
  const out = join(variantDir, `${basename(path)}`);
  if (existsSync(out)) return out;
  const text = join(variantDir, `${basename(path)}.wat`);
  const r = Bun.spawnSync(ascCommand(path, join(variantDir, "portable.wasm"), text), { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(r.stderr.toString());
  const keep = Object.keys(WIDE_FUNCTIONS).filter((n) => !without.includes(n));
  writeFileSync(out, spliceWide(readFileSync(text, "utf8"), wideText(keep), { optimize: optimizedSplice }));
  return out;
}
const modules = async (build: WasmBuild) => ({
  verifier: await load(modulePath(TEST_WASM_PATH, build)),
  prover: await load(modulePath(PROVER_TEST_WASM_PATH, build)),
});
const builds = { portable: await modules("portable"), wide: await modules("wide") };
// frMul's operands: two reduced elements as raw limbs (small values, Montgomery form or not, are both elements).
for (const { prover } of Object.values(builds)) {
  const view = new Uint32Array(prover.memory.buffer, prover.io(108), 27);
  for (let i = 0; i < 18; i++) view[i] = (0x1234567 * (i + 3)) & 0x1fffffff;
  view[8] = view[17] = 0x1234;
}

type Primitive = { name: string; n: number; run: (m: Awaited<ReturnType<typeof modules>>, n: number) => void };
const primitives: Primitive[] = [
  { name: "fpMul", n: 10_000, run: (m, n) => m.verifier.benchOp(0, n) },
  { name: "fp2Mul", n: 4_000, run: (m, n) => m.verifier.benchOp(3, n) },
  { name: "frMul", n: 10_000, run: (m, n) => m.prover.benchMul(1, n) },
  { name: "fpSqr", n: 10_000, run: (m, n) => m.verifier.benchOp(17, n) },
  { name: "frSqr", n: 10_000, run: (m, n) => m.prover.benchMul(3, n) },
  { name: "fp2Sqr", n: 4_000, run: (m, n) => m.verifier.benchOp(4, n) },
  { name: "fp6Mul", n: 400, run: (m, n) => m.verifier.benchOp(14, n) },
  { name: "fp12Mul", n: 150, run: (m, n) => m.verifier.benchOp(5, n) },
  { name: "fp12Sqr", n: 200, run: (m, n) => m.verifier.benchOp(6, n) },
  { name: "fp12CyclotomicSqr", n: 400, run: (m, n) => m.verifier.benchOp(7, n) },
  { name: "finalExponentiation", n: 1, run: (m, n) => m.verifier.benchOp(8, n) },
];
// Poseidon on the prover's test module: one hash of a fixed pair, and a level of 64 nodes (per hash).
type PoseidonLoops = { poseidonHash(): number; poseidonLevel(n: number): number };
const poseidonInput = (m: Loops, n: number) => {
  const view = new Uint8Array(m.memory.buffer, m.io(32 * n), 32 * n);
  for (let i = 0; i < view.length; i++) view[i] = (i * 131 + 7) & 0xff;
  for (let i = 31; i < view.length; i += 32) view[i] = 0x0f; // below r
};
primitives.push(
  {
    name: "poseidonHash",
    n: 20,
    run: (m, n) => {
      const p = m.prover as unknown as PoseidonLoops;
      for (let i = 0; i < n; i++) {
        poseidonInput(m.prover, 2);
        if (p.poseidonHash() !== 0) throw new Error("poseidonHash");
      }
    },
  },
  {
    name: "poseidonLevel (/hash)",
    n: 32,
    run: (m) => {
      poseidonInput(m.prover, 64);
      if ((m.prover as unknown as PoseidonLoops).poseidonLevel(64) !== 32) throw new Error("poseidonLevel");
    },
  },
);
const pool = await proofPool(agentIdentity, 8);
const verifiers = {
  portable: await Groth16Verifier.fromVerificationKey(agentIdentity.vkey, { build: "portable" }),
  wide: await Groth16Verifier.fromVerificationKey(agentIdentity.vkey, { build: "wide" }),
};
let call = 0;
// verify() loads its module through src/verifier (either build, no variant): left out with --without.
if (!without.length && !optimizedSplice)
  primitives.push({
    name: "verify() (agent)",
    n: 1,
    run: (m) => {
      const e = pool[call++ % pool.length]!;
      if (!verifiers[m === builds.wide ? "wide" : "portable"].verify(e.proof, e.publicSignals).ok) throw new Error("a valid proof was rejected");
    },
  });

const ns = (p: Primitive, build: WasmBuild): number => {
  const t = performance.now();
  p.run(builds[build], p.n);
  return ((performance.now() - t) * 1e6) / p.n;
};
for (const p of primitives) for (let i = 0; i < 20; i++) for (const b of ["portable", "wide"] as const) ns(p, b); // warm-up (JIT tiers)
const samples = Object.fromEntries(primitives.map((p) => [p.name, { portable: [] as number[], wide: [] as number[] }]));
for (const p of primitives) {
  for (let r = 0; r < ROUNDS; r++) {
    const order: WasmBuild[] = r % 2 === 0 ? ["portable", "wide"] : ["wide", "portable"];
    for (const b of order) samples[p.name]![b].push(ns(p, b));
  }
}

// Whole proofs, alternating call by call.
const root = join(import.meta.dir, "..");
const artifacts = {
  zkey: new Uint8Array(readFileSync(join(root, "circuits/artifacts/agent_identity.zkey"))),
  wasm: new Uint8Array(readFileSync(join(root, "circuits/artifacts/agent_identity.wasm"))),
};
const provers = {
  portable: await createProver(artifacts, { module: await WebAssembly.compile(readFileSync(modulePath(PROVER_WASM_PATH, "portable"))) }),
  wide: await createProver(artifacts, { module: await WebAssembly.compile(readFileSync(modulePath(PROVER_WASM_PATH, "wide"))) }),
};
const proofInputs = await Promise.all(
  Array.from({ length: 4 }, async () => {
    const secret = randomScalar();
    const f = () => randomScalar().toString();
    return { secret: secret.toString(), identity_commitment: (await identityCommitment(secret)).toString(), nonce: f(), action_hash: f(), context_hash: f() };
  }),
);
const proofSamples = { portable: [] as number[], wide: [] as number[] };
for (let i = -3; i < PROOFS; i++) {
  const order: WasmBuild[] = i % 2 === 0 ? ["portable", "wide"] : ["wide", "portable"];
  for (const b of order) {
    const t = performance.now();
    await provers[b].prove(proofInputs[(i + 4) % proofInputs.length]!);
    if (i >= 0) proofSamples[b].push((performance.now() - t) * 1e6); // the first three of each: warm-up
  }
}
samples["prove() (agent)"] = proofSamples;
primitives.push({ name: "prove() (agent)", n: 1, run: () => {} });

// The agent proof's MSMs one at a time (the test build's stageMsm), alternating call by call like the proofs.
const staged = {} as Record<WasmBuild, ProverTestExports>;
for (const b of ["portable", "wide"] as const) {
  const p = (await createProver(artifacts, { module: await WebAssembly.compile(readFileSync(modulePath(PROVER_TEST_WASM_PATH, b))) })) as unknown as {
    wasm: ProverTestExports;
    witness: { calculate(input: unknown): Promise<Uint8Array> };
  };
  writeProveInput(p.wasm, await p.witness.calculate(proofInputs[0]!), 5n, 7n);
  p.wasm.stageWitness();
  p.wasm.stageQuotient();
  staged[b] = p.wasm;
}
for (const [name, set] of [
  ["msm H (agent)", BaseSet.H],
  ["msm B2 (agent)", BaseSet.B2],
] as const) {
  const s = { portable: [] as number[], wide: [] as number[] };
  for (let i = -3; i < PROOFS; i++)
    for (const b of (i % 2 === 0 ? ["portable", "wide"] : ["wide", "portable"]) as WasmBuild[]) {
      const t = performance.now();
      staged[b].stageMsm(set);
      if (i >= 0) s[b].push((performance.now() - t) * 1e6);
    }
  samples[name] = s;
  primitives.push({ name, n: 1, run: () => {} });
}

const rows = primitives.map((p) => {
  const s = samples[p.name]!;
  const portable = Math.min(...s.portable);
  const wide = Math.min(...s.wide);
  const p10 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 10)]!;
  return { name: p.name, portable_ns: portable, wide_ns: wide, ratio: portable / wide, portable_p10_ns: p10(s.portable), wide_p10_ns: p10(s.wide) };
});
rmSync(variantDir, { recursive: true, force: true });
if (values.json) console.log(JSON.stringify({ blocks: ROUNDS, left: LEFT, rows }));
else {
  const fmt = (x: number) => (x >= 1e7 ? `${(x / 1e6).toFixed(2)} ms` : x >= 10_000 ? `${(x / 1000).toFixed(1)} µs` : `${x.toFixed(1)} ns`).padStart(10);
  console.log(`field primitives, both builds in one process, ${ROUNDS} alternating blocks each (proofs: ${PROOFS}): minimum (10th percentile)`);
  console.log(`${"".padEnd(20)} ${LEFT.padStart(22)} ${"wide".padStart(22)}   left/wide`);
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(20)} ${fmt(r.portable_ns)} (${fmt(r.portable_p10_ns).trim()}) ${fmt(r.wide_ns)} (${fmt(r.wide_p10_ns).trim()})   ${r.ratio.toFixed(2)}×`,
    );
  }
}
