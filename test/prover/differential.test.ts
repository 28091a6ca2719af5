// Point-by-point against snarkjs where the prover is deterministic, through
// the test build (build/prover-test.wasm, assembly/prover-testing.ts), which
// runs prove()'s stages one by one:
// on the agent circuit, a seven-input fixture and Semaphore v4 (depth 3):
//   - the witness against snarkjs's wtns.calculate;
//   - the H scalars against a BigInt computation of snarkjs's formula
//     (groth16_prove.js: INTT, ·g^i with g = ffjavascript's w[log n + 1],
//     NTT, a·b − c), with the roots taken from ffjavascript itself;
//   - every MSM (A, B1, B2, C, H) against ffjavascript's multiExpAffine on
//     the same zkey section and scalars, plus the fixed terms the prover
//     folds into them (α₁ + r·δ₁ in A, β₁ + s·δ₁ in B1, β₂ + s·δ₂ in B2,
//     −r·s·δ₁ in C) computed with ffjavascript's own point arithmetic.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { snarkjs } from "../support/snarkjs";
// @ts-ignore — untyped nested dependency (the copy snarkjs itself uses)
import { buildBn128 } from "ffjavascript";
import { identityCommitment } from "../../src/identity/commitment";
import { createProver, writeProveInput } from "../../src/prover";
import { BaseSet, type ProverTestExports, ProverStatus } from "../../src/prover/wasm";
import type { WitnessCalculator } from "../../src/prover/witness";
import { parseZkey } from "../../src/prover/zkey";
import { fp2FromBytes, fromBytes32 } from "../../src/verifier/encoding";
import { semaphoreArtifacts, semaphoreStatement } from "./semaphore";
import { agentCircuit, type CircuitFiles, R, ROOT, randomField, sevenInputs } from "./support";
import { buildPath, PROVER_TEST_WASM_PATH } from "../../scripts/asc-build";
import { WASM_BUILD } from "../../src/wasm-engine";

setDefaultTimeout(120_000);

let testModule: WebAssembly.Module;
let curve: any;
beforeAll(async () => {
  testModule = await WebAssembly.compile(readFileSync(buildPath(PROVER_TEST_WASM_PATH, WASM_BUILD)));
  curve = await buildBn128(true);
});

const mod = (a: bigint) => ((a % R) + R) % R;
const pow = (b: bigint, e: bigint) => {
  let r = 1n;
  b = mod(b);
  while (e > 0n) {
    if (e & 1n) r = (r * b) % R;
    b = (b * b) % R;
    e >>= 1n;
  }
  return r;
};
const leToBigInt = (b: Uint8Array, offset: number) => {
  let x = 0n;
  for (let i = 31; i >= 0; i--) x = (x << 8n) | BigInt(b[offset + i]!);
  return x;
};

/** Recursive radix-2 DFT in BigInt: out[i] = Σ a[j]·ω^(ij). A different algorithm from assembly/ntt.ts's. */
function dft(a: bigint[], w: bigint): bigint[] {
  const n = a.length;
  if (n === 1) return [a[0]!];
  const even = dft(
    a.filter((_, i) => i % 2 === 0),
    (w * w) % R,
  );
  const odd = dft(
    a.filter((_, i) => i % 2 === 1),
    (w * w) % R,
  );
  const out = new Array<bigint>(n);
  let x = 1n;
  for (let i = 0; i < n / 2; i++) {
    const t = (x * odd[i]!) % R;
    out[i] = mod(even[i]! + t);
    out[i + n / 2] = mod(even[i]! - t);
    x = (x * w) % R;
  }
  return out;
}

interface Run {
  wasm: ProverTestExports;
  witness: Uint8Array;
  z: ReturnType<typeof parseZkey>;
  r: bigint;
  s: bigint;
}

async function stagedRun(circuit: CircuitFiles, input: Record<string, unknown>, precompute = true): Promise<Run> {
  const prover = (await createProver(circuit, { module: testModule, precompute })) as unknown as { wasm: ProverTestExports; witness: WitnessCalculator };
  const witness = await prover.witness.calculate(input as any);
  const [r, s] = [randomField() || 1n, randomField() || 1n];
  writeProveInput(prover.wasm, witness, r, s);
  expect(prover.wasm.stageWitness()).toBe(ProverStatus.OK);
  prover.wasm.stageQuotient();
  return { wasm: prover.wasm, witness, z: parseZkey(circuit.zkey), r, s };
}

const agentInput = async () => {
  const secret = randomField();
  return {
    secret,
    identity_commitment: await identityCommitment(secret),
    nonce: randomField(),
    action_hash: randomField(),
    context_hash: randomField(),
  };
};

describe.each([
  ["agent_identity", agentCircuit, agentInput],
  ["seven_inputs", sevenInputs, async () => ({ w: randomField(), x: Array.from({ length: 7 }, randomField) })],
  // Semaphore v4's stock artifacts at depth 3 (2,255 signals, domain 4,096), a group of 2 to 8: the same checks at Semaphore's shape.
  ["semaphore-3", { name: "semaphore-3", ...semaphoreArtifacts(3) }, async () => semaphoreStatement(3, 2 + Math.floor(Math.random() * 7)).input],
] as const)("%s", (_name, circuit, input) => {
  let run: Run;
  let data: Record<string, unknown>;
  beforeAll(async () => {
    data = await input();
    run = await stagedRun(circuit, data);
  });

  test("the witness equals snarkjs wtns.calculate's", async () => {
    const wtns = { type: "mem" } as any;
    await snarkjs.wtns.calculate(data, { type: "mem", data: circuit.wasm }, wtns);
    const expected: bigint[] = await snarkjs.wtns.exportJson(wtns);
    const ours = Array.from({ length: run.z.nVars }, (_, i) => leToBigInt(run.witness, 32 * i));
    expect(ours).toEqual(expected.map(BigInt));
  });

  test("the H scalars equal snarkjs's formula computed in BigInt", () => {
    const { z, witness } = run;
    const n = z.domainSize;
    const w = Array.from({ length: z.nVars }, (_, i) => leToBigInt(witness, 32 * i));
    const a = new Array<bigint>(n).fill(0n);
    const b = new Array<bigint>(n).fill(0n);
    const unMont = pow(pow(2n, 512n), R - 2n); // the zkey stores c·2^512
    const view = new DataView(z.coefs.buffer, z.coefs.byteOffset, z.coefs.byteLength);
    for (let i = 0; i < z.nCoef; i++) {
      const at = i * 44;
      const target = view.getUint32(at, true) === 0 ? a : b;
      const row = view.getUint32(at + 4, true);
      const coef = (leToBigInt(z.coefs, at + 12) * unMont) % R;
      target[row] = mod(target[row]! + coef * w[view.getUint32(at + 8, true)]!);
    }
    const c = a.map((x, i) => (x * b[i]!) % R);
    const root = (k: number) => BigInt(curve.Fr.toObject(curve.Fr.w[k]));
    const omega = root(z.domainLog);
    const g = root(z.domainLog + 1);
    const nInv = pow(BigInt(n), R - 2n);
    const onCoset = (evals: bigint[]) => {
      const coeffs = dft(evals, pow(omega, R - 2n)).map((x) => (x * nInv) % R);
      return dft(
        coeffs.map((x, i) => (x * pow(g, BigInt(i))) % R),
        omega,
      );
    };
    const [A, B, C] = [onCoset(a), onCoset(b), onCoset(c)];
    const expected = A.map((x, i) => mod(x * B[i]! - C[i]!));
    expect(run.wasm.readQuotient()).toBe(n);
    const out = new Uint8Array(run.wasm.memory.buffer, run.wasm.io(0), n * 32);
    const ours = Array.from({ length: n }, (_, i) => leToBigInt(out, 32 * i));
    expect(ours).toEqual(expected);
    expect(ours.some((h) => h !== 0n)).toBe(true);
  });

  test.each([
    ["with precomputed tables", true],
    ["without tables (one bucket set per window)", false],
  ])("each MSM equals ffjavascript's multiExpAffine on the same section and scalars, plus its fixed terms — %s", async (_mode, precompute) => {
    const { z, witness, wasm, r, s } = precompute ? run : await stagedRun(circuit, data, false);
    const { G1, G2 } = curve;
    // α₁ β₁ β₂ γ₂ δ₁ δ₂ as the zkey stores them (Montgomery, little-endian).
    const hp = z.headerPoints.slice();
    const [alpha1, beta1, beta2, delta1, delta2] = [
      G1.fromRprLEM(hp, 0),
      G1.fromRprLEM(hp, 64),
      G2.fromRprLEM(hp, 128),
      G1.fromRprLEM(hp, 384),
      G2.fromRprLEM(hp, 448),
    ];
    const fixed = [
      G1.add(alpha1, G1.timesScalar(delta1, r)),
      G1.add(beta1, G1.timesScalar(delta1, s)),
      G2.add(beta2, G2.timesScalar(delta2, s)),
      G1.timesScalar(delta1, mod(-r * s)),
      G1.zero,
    ];
    wasm.readQuotient();
    const hScalars = new Uint8Array(wasm.memory.buffer, wasm.io(0), z.domainSize * 32).slice();
    const sets = [
      [BaseSet.A, z.A, witness, false],
      [BaseSet.B1, z.B1, witness, false],
      [BaseSet.B2, z.B2, witness, true],
      [BaseSet.C, z.C, witness.slice((z.nPublic + 1) * 32), false],
      [BaseSet.H, z.H, hScalars, false],
    ] as const;
    for (const [set, bases, scalars, g2] of sets) {
      wasm.stageMsm(set);
      const size = wasm.readMsm(set);
      const out = new Uint8Array(wasm.memory.buffer, wasm.io(0), size).slice();
      const group = g2 ? G2 : G1;
      const sum = group.add(await group.multiExpAffine(bases.slice(), scalars.slice()), fixed[set]);
      const p = group.toObject(group.toAffine(sum));
      if (g2) {
        expect([fp2FromBytes(out, 0), fp2FromBytes(out, 64)]).toEqual([p[0], p[1]]);
      } else {
        expect([fromBytes32(out, 0), fromBytes32(out, 32)]).toEqual([p[0], p[1]]);
      }
    }
    expect(wasm.stageFinish()).toBe(ProverStatus.OK);
    expect(wasm.stageSelfCheck()).toBe(ProverStatus.OK);
  });
});
