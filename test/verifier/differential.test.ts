// Differential tests against snarkjs's own verifier: real proofs from three
// circuits (4, 7 and 0 public inputs) and hundreds of cases derived from
// them by mutation. Verdicts must be identical; where zkagent is stricter
// by design (non-canonical coordinates, G2 outside the subgroup, infinity)
// see strict.test.ts.
import { beforeAll, describe, expect, test } from "bun:test";
import { Groth16Verifier } from "../../src/verifier/index.ts";
import { agentIdentity, sevenInputs, noInputs, proofPool, reference, R, type Circuit, type PoolEntry } from "./pool.ts";
import * as S from "../assembly/support.ts";

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x));
const referenceFor = (c: Circuit, signals: string[], proof: unknown) => reference(c.vkey, signals, proof).catch(() => false);

type Case = { name: string; proof: any; signals: string[] };

/** Mutations of pool entry i: each must get the same verdict from both verifiers. */
function mutations(pool: PoolEntry[], i: number): Case[] {
  const { proof, publicSignals } = pool[i]!;
  const other = pool[(i + 1) % pool.length]!;
  const cases: Case[] = [{ name: "valid", proof, signals: publicSignals }];
  // Every coordinate perturbed by one.
  const coords: [string, (p: any) => void][] = [
    ["A.x", (p) => (p.pi_a[0] = (BigInt(p.pi_a[0]) + 1n).toString())],
    ["A.y", (p) => (p.pi_a[1] = (BigInt(p.pi_a[1]) + 1n).toString())],
    ["B.x.c0", (p) => (p.pi_b[0][0] = (BigInt(p.pi_b[0][0]) + 1n).toString())],
    ["B.x.c1", (p) => (p.pi_b[0][1] = (BigInt(p.pi_b[0][1]) + 1n).toString())],
    ["B.y.c0", (p) => (p.pi_b[1][0] = (BigInt(p.pi_b[1][0]) + 1n).toString())],
    ["B.y.c1", (p) => (p.pi_b[1][1] = (BigInt(p.pi_b[1][1]) + 1n).toString())],
    ["C.x", (p) => (p.pi_c[0] = (BigInt(p.pi_c[0]) + 1n).toString())],
    ["C.y", (p) => (p.pi_c[1] = (BigInt(p.pi_c[1]) + 1n).toString())],
  ];
  for (const [name, f] of coords) {
    const p = clone(proof);
    f(p);
    cases.push({ name: `${name} + 1`, proof: p, signals: publicSignals });
  }
  const swapped = clone(proof);
  [swapped.pi_a, swapped.pi_c] = [swapped.pi_c, swapped.pi_a];
  cases.push({ name: "A and C swapped", proof: swapped, signals: publicSignals });
  const negA = clone(proof);
  negA.pi_a[1] = S.mod(-BigInt(negA.pi_a[1])).toString();
  cases.push({ name: "A negated (on curve, wrong equation)", proof: negA, signals: publicSignals });
  const fp2Swapped = clone(proof);
  fp2Swapped.pi_b = [
    [proof.pi_b[0][1], proof.pi_b[0][0]],
    [proof.pi_b[1][1], proof.pi_b[1][0]],
    ["1", "0"],
  ];
  cases.push({ name: "B with Fp2 halves exchanged", proof: fp2Swapped, signals: publicSignals });
  if (publicSignals.length > 0) {
    const j = i % publicSignals.length;
    const changed = [...publicSignals];
    changed[j] = ((BigInt(changed[j]!) + 1n) % R).toString();
    cases.push({ name: `public input ${j} changed`, proof, signals: changed });
    cases.push({ name: "proof for other inputs", proof: other.proof, signals: publicSignals });
    const plusR = [...publicSignals];
    plusR[j] = (BigInt(plusR[j]!) + R).toString();
    cases.push({ name: `public input ${j} + r`, proof, signals: plusR });
  }
  return cases;
}

for (const [circuit, size] of [
  [agentIdentity, 24],
  [sevenInputs, 12],
  [noInputs, 4],
] as const) {
  describe(`differential vs snarkjs: ${circuit.name} (nPublic = ${circuit.vkey.nPublic})`, () => {
    let pool: PoolEntry[];
    let verifier: Groth16Verifier;
    beforeAll(async () => {
      pool = await proofPool(circuit, size);
      verifier = await Groth16Verifier.fromVerificationKey(circuit.vkey);
    }, 120_000); // first run only: generates and caches the proof pool

    test(`${size} real proofs and their mutations get snarkjs's verdict`, async () => {
      let count = 0;
      let accepted = 0;
      for (let i = 0; i < pool.length; i++) {
        for (const c of mutations(pool, i)) {
          const ours = verifier.verify(c.proof, c.signals);
          const theirs = await referenceFor(circuit, c.signals, c.proof);
          if (ours.ok !== theirs) throw new Error(`${circuit.name} #${i} ${c.name}: zkagent ${JSON.stringify(ours)}, snarkjs ${theirs}`);
          if (c.name === "valid") expect(ours).toEqual({ ok: true });
          if (ours.ok) accepted++;
          count++;
        }
      }
      expect(accepted).toBe(pool.length); // only the unmodified proofs verify
      expect(count).toBeGreaterThanOrEqual(pool.length * (circuit.vkey.nPublic > 0 ? 15 : 12));
    }, 60_000);

    test("rerandomised proofs (A·t, B·t⁻¹, C) stay valid for both", async () => {
      for (const { proof, publicSignals } of pool.slice(0, 2)) {
        const t = S.randomBelow(R - 2n) + 2n;
        const A = S.g1Mul({ x: BigInt(proof.pi_a[0]), y: BigInt(proof.pi_a[1]) }, t)!;
        const B = S.g2Mul(
          { x: [BigInt(proof.pi_b[0][0]), BigInt(proof.pi_b[0][1])], y: [BigInt(proof.pi_b[1][0]), BigInt(proof.pi_b[1][1])] },
          S.invMod(t, R),
        )!;
        const p = clone(proof);
        p.pi_a = [A.x.toString(), A.y.toString(), "1"];
        p.pi_b = [
          [B.x[0].toString(), B.x[1].toString()],
          [B.y[0].toString(), B.y[1].toString()],
          ["1", "0"],
        ];
        expect(p.pi_a).not.toEqual(proof.pi_a);
        expect(await referenceFor(circuit, publicSignals, p)).toBe(true);
        expect(verifier.verify(p, publicSignals)).toEqual({ ok: true });
      }
    }, 30_000);

    test("mutated proofs get specific reasons", () => {
      const { proof, publicSignals } = pool[0]!;
      const offCurve = clone(proof);
      offCurve.pi_a[0] = (BigInt(offCurve.pi_a[0]) + 1n).toString();
      expect(verifier.verify(offCurve, publicSignals)).toEqual({ ok: false, reason: "invalid_curve_point" });
      const negA = clone(proof);
      negA.pi_a[1] = S.mod(-BigInt(negA.pi_a[1])).toString();
      expect(verifier.verify(negA, publicSignals)).toEqual({ ok: false, reason: "proof_rejected" });
      expect(verifier.verify(proof, [...publicSignals, "1"])).toEqual({ ok: false, reason: "invalid_public_input" });
      if (publicSignals.length) {
        expect(verifier.verify(proof, publicSignals.slice(1))).toEqual({ ok: false, reason: "invalid_public_input" });
      }
    });
  });
}
