// verifyBatch: one randomised pairing equation per batch, bisection to find
// the bad items, verdicts identical to verify() item by item.
import { beforeAll, describe, expect, test } from "bun:test";
import { Groth16Verifier, type BatchItem } from "../../src/verifier/index.ts";
import { agentIdentity, sevenInputs, proofPool, type PoolEntry } from "./pool.ts";
import * as S from "../assembly/support.ts";

let pool: PoolEntry[];
let verifier: Groth16Verifier;
beforeAll(async () => {
  pool = await proofPool(agentIdentity, 24);
  verifier = await Groth16Verifier.fromVerificationKey(agentIdentity.vkey);
}, 120_000);

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x));
const batch = (n: number): BatchItem[] => Array.from({ length: n }, (_, i) => clone(pool[i % pool.length]!));
/** Swaps in the public inputs of another proof: well-formed, pairing equation false. */
const spoil = (items: BatchItem[], i: number) => {
  items[i] = { proof: items[i]!.proof, publicSignals: pool[(i + 1) % pool.length]!.publicSignals };
};
const badIndices = (results: { ok: boolean }[]) => results.flatMap((r, i) => (r.ok ? [] : [i]));

describe("verifyBatch", () => {
  test("all-valid batches pass (1, 8, 64)", () => {
    for (const n of [1, 8, 64]) {
      const results = verifier.verifyBatch(batch(n));
      expect(results).toHaveLength(n);
      expect(results.every((r) => r.ok)).toBe(true);
    }
    expect(verifier.verifyBatch([])).toEqual([]);
  }, 30_000);

  test("one or two bad proofs among 8 and 64 are identified exactly", () => {
    for (const [n, bad] of [
      [8, [3]],
      [8, [0, 7]],
      [64, [41]],
      [64, [5, 62]],
    ] as [number, number[]][]) {
      const items = batch(n);
      for (const i of bad) spoil(items, i);
      const results = verifier.verifyBatch(items);
      expect(badIndices(results)).toEqual(bad);
      for (const i of bad) expect(results[i]).toEqual({ ok: false, reason: "proof_rejected" });
    }
  }, 30_000);

  test("malformed items get their own reasons without failing the others", () => {
    const items = batch(10);
    items[1] = { proof: "not a proof", publicSignals: items[1]!.publicSignals };
    const offCurve = clone(items[2]!.proof) as any;
    offCurve.pi_a[0] = (BigInt(offCurve.pi_a[0]) + 1n).toString();
    items[2] = { proof: offCurve, publicSignals: items[2]!.publicSignals };
    items[3] = { proof: items[3]!.proof, publicSignals: ["1"] };
    spoil(items, 4);
    items[5] = null as any;
    const results = verifier.verifyBatch(items);
    expect(results[1]).toEqual({ ok: false, reason: "invalid_proof_format" });
    expect(results[2]).toEqual({ ok: false, reason: "invalid_curve_point" });
    expect(results[3]).toEqual({ ok: false, reason: "invalid_public_input" });
    expect(results[4]).toEqual({ ok: false, reason: "proof_rejected" });
    expect(results[5]!.ok).toBe(false);
    expect(badIndices(results)).toEqual([1, 2, 3, 4, 5]);
  }, 30_000);

  test("batch verdicts equal single verdicts, across chunk boundaries (> 128 items)", () => {
    const items = batch(150);
    spoil(items, 130);
    spoil(items, 2);
    const results = verifier.verifyBatch(items);
    expect(results).toEqual(items.map((it) => verifier.verify(it.proof, it.publicSignals)));
    expect(badIndices(results)).toEqual([2, 130]);
  }, 30_000);

  test("errors that cancel under equal weights are caught: (A, B, C + G) and (A, B, C − G)", () => {
    // With unit weights the product of the two equations is the square of a
    // valid one, so an unrandomised batch would accept both forgeries.
    const { proof, publicSignals } = pool[0]!;
    const C = { x: BigInt(proof.pi_c[0]), y: BigInt(proof.pi_c[1]) };
    const withC = (c: S.G1) => ({ ...clone(proof), pi_c: [c!.x.toString(), c!.y.toString(), "1"] });
    const plus = withC(S.g1Add(C, S.G1_GEN));
    const minus = withC(S.g1Add(C, { x: 1n, y: S.P - 2n }));
    expect(verifier.verify(plus, publicSignals).ok).toBe(false);
    expect(verifier.verify(minus, publicSignals).ok).toBe(false);
    const items = [...batch(6), { proof: plus, publicSignals }, { proof: minus, publicSignals }];
    expect(badIndices(verifier.verifyBatch(items))).toEqual([6, 7]);
    expect(
      badIndices(
        verifier.verifyBatch([
          { proof: plus, publicSignals },
          { proof: minus, publicSignals },
        ]),
      ),
    ).toEqual([0, 1]);
  }, 30_000);

  test("works for another key (7 public inputs)", async () => {
    const v = await Groth16Verifier.fromVerificationKey(sevenInputs.vkey);
    const p = await proofPool(sevenInputs, 8);
    const items = p.map((e) => ({ proof: e.proof, publicSignals: e.publicSignals }));
    expect(v.verifyBatch(items).every((r) => r.ok)).toBe(true);
    items[4] = { proof: items[4]!.proof, publicSignals: items[5]!.publicSignals };
    expect(badIndices(v.verifyBatch(items))).toEqual([4]);
  }, 60_000);
});
