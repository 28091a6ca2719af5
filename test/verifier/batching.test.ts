// BatchingVerifier: verdicts under concurrency are exactly the verdicts of
// verify() one at a time, whatever lands in a batch next to what; a lone
// submission is verified at once; queued ones go to verifyBatch.
import { beforeAll, describe, expect, test } from "bun:test";
import { verificationKey } from "../../src/verifier/circuit-key";
import { publicSignals } from "../../src/identity/encoding";
import { BatchingVerifier, type BatchItem, type VerifyEngine } from "../../src/verifier/batching";
import { Groth16Verifier } from "../../src/verifier/index";
import { ThreadEngine } from "../../src/verifier/thread";
import type { VerifyResult } from "../../src/verifier/types";
import { identity, proofFor } from "../support/proofs";

const NONCES = ["a1", "b2", "c3", "d4", "e5", "f6"].map((tag) => tag.repeat(31));

let verifier: Groth16Verifier;
let valid: BatchItem[];
let invalid: BatchItem[];

beforeAll(async () => {
  verifier = await Groth16Verifier.fromVerificationKey(verificationKey);
  const agent = await identity("batching");
  valid = await Promise.all(
    NONCES.map(async (nonce) => ({
      proof: await proofFor({ secret: agent.secret, nonce, action: "purchase" }),
      publicSignals: publicSignals({ identityCommitment: BigInt(agent.identity_commitment), nonce, action: "purchase" }),
    })),
  );
  const offCurve = JSON.parse(valid[2]!.proof as string);
  offCurve.pi_a[0] = (BigInt(offCurve.pi_a[0]) + 1n).toString();
  invalid = [
    // Well-formed, but for another statement: only the pairing equation fails.
    { proof: valid[0]!.proof, publicSignals: valid[1]!.publicSignals },
    { proof: valid[3]!.proof, publicSignals: valid[4]!.publicSignals },
    { proof: JSON.stringify(offCurve), publicSignals: valid[2]!.publicSignals },
    { proof: "not a proof", publicSignals: valid[0]!.publicSignals },
    { proof: valid[5]!.proof, publicSignals: ["1", "2"] },
  ];
}, 120_000);

/** The real verifier, recording the size of every call it gets. */
function recording(asynchronous = false): VerifyEngine & { runs: number[] } {
  const runs: number[] = [];
  const later = <T>(x: T): T | Promise<T> => (asynchronous ? Bun.sleep(2).then(() => x) : x);
  return {
    runs,
    verify: (proof, signals) => (runs.push(1), later(verifier.verify(proof, signals))),
    verifyBatch: (items) => (runs.push(items.length), later(verifier.verifyBatch(items))),
  };
}

/** A deterministic mix: valid and invalid interleaved, invalid ones spread through the queue. */
function mixed(n: number): BatchItem[] {
  return Array.from({ length: n }, (_, i) => (i % 4 === 3 ? invalid[(i >> 2) % invalid.length]! : valid[i % valid.length]!));
}

const singly = (items: BatchItem[]): VerifyResult[] => items.map((item) => verifier.verify(item.proof, item.publicSignals));

describe("BatchingVerifier", () => {
  test("a lone submission on an idle verifier is verified at once, not queued", async () => {
    const engine = recording();
    const batching = new BatchingVerifier([engine]);
    const result = batching.verify(valid[0]!.proof, valid[0]!.publicSignals);
    // Synchronous engine: the verdict is there in the same call.
    expect(result).toEqual({ ok: true });
    expect(engine.runs).toEqual([1]);
    await Bun.sleep(0);
    const bad = batching.verify(invalid[0]!.proof, invalid[0]!.publicSignals);
    expect(bad).toEqual({ ok: false, reason: "proof_rejected" });
  });

  test("mixed valid/invalid under concurrency: the same verdicts as verify() one by one, bad ones inside batches", async () => {
    const items = mixed(40);
    const expected = singly(items);
    // The mix holds every kind of failure and most items are valid.
    expect(new Set(expected.map((r) => (r.ok ? "ok" : r.reason)))).toEqual(
      new Set(["ok", "proof_rejected", "invalid_curve_point", "invalid_proof_format", "invalid_public_input"]),
    );
    const engine = recording();
    const batching = new BatchingVerifier([engine], { maxBatch: 16 });
    const results = await Promise.all(items.map((item) => batching.verify(item.proof, item.publicSignals)));
    expect(results).toEqual(expected);
    // The first ran alone at once; the 39 that arrived meanwhile went in batches of ≤ 16.
    expect(engine.runs).toEqual([1, 16, 16, 7]);
    expect(batching.stats).toEqual({ singles: 1, batches: 3, batchedItems: 39, largestBatch: 16 });
  }, 60_000);

  test("one pairing-invalid proof among valid ones fails only itself", async () => {
    const items = [valid[0]!, valid[1]!, valid[2]!, invalid[1]!, valid[3]!, valid[4]!, valid[5]!, valid[1]!, valid[2]!];
    const engine = recording();
    const batching = new BatchingVerifier([engine]);
    const results = await Promise.all(items.map((item) => batching.verify(item.proof, item.publicSignals)));
    expect(engine.runs).toEqual([1, 8]);
    expect(results.map((r) => r.ok)).toEqual([true, true, true, false, true, true, true, true, true]);
    expect(results[3]).toEqual({ ok: false, reason: "proof_rejected" });
  }, 60_000);

  test("submissions arriving over several turns while an asynchronous engine is busy are batched", async () => {
    const engine = recording(true);
    const batching = new BatchingVerifier([engine]);
    const items = mixed(24);
    const expected = singly(items);
    const pending: Promise<VerifyResult>[] = [];
    for (const [i, item] of items.entries()) {
      pending.push(Promise.resolve(batching.verify(item.proof, item.publicSignals)));
      if (i % 6 === 5) await Bun.sleep(0);
    }
    expect(await Promise.all(pending)).toEqual(expected);
    expect(engine.runs[0]).toBe(1);
    expect(engine.runs.reduce((a, b) => a + b, 0)).toBe(24);
    expect(Math.max(...engine.runs)).toBeGreaterThan(1);
  }, 60_000);

  test("two engines verify two lone submissions side by side; the queue is shared", async () => {
    const a = recording(true);
    const b = recording(true);
    const batching = new BatchingVerifier([a, b]);
    const items = mixed(12);
    const results = await Promise.all(items.map((item) => batching.verify(item.proof, item.publicSignals)));
    expect(results).toEqual(singly(items));
    expect(a.runs[0]).toBe(1);
    expect(b.runs[0]).toBe(1);
    expect([...a.runs, ...b.runs].reduce((x, y) => x + y, 0)).toBe(12);
  }, 60_000);

  test("a flood of bad proofs is verified singly once failures dominate, with the same verdicts", async () => {
    const engine = recording();
    const batching = new BatchingVerifier([engine]);
    const flood = Array.from({ length: 70 }, (_, i) => invalid[i % 2]!);
    const results = await Promise.all(flood.map((item) => batching.verify(item.proof, item.publicSignals)));
    expect(results.every((r) => !r.ok && r.reason === "proof_rejected")).toBe(true);
    // Alone, then one batch of 32 that fails and bisects; after that the share
    // of failures is far above FAILING_SHARE and the rest goes one by one.
    expect(engine.runs).toEqual([1, 32, ...Array.from({ length: 37 }, () => 1)]);
  }, 60_000);

  test("verifier threads give the same verdicts as verify() one by one", async () => {
    const engines = [await ThreadEngine.start(), await ThreadEngine.start()];
    try {
      const batching = new BatchingVerifier(engines, { maxBatch: 8 });
      const items = mixed(30);
      const results = await Promise.all(items.map((item) => batching.verify(item.proof, item.publicSignals)));
      expect(results).toEqual(singly(items));
      expect(batching.stats.batches).toBeGreaterThan(0);
    } finally {
      for (const engine of engines) engine.close();
    }
  }, 60_000);

  test("an engine that throws gives its callers an error, never a verdict, and is used again afterwards", async () => {
    let broken = true;
    const engine: VerifyEngine = {
      verify: (proof, signals) => {
        if (broken) throw new Error("engine fault");
        return verifier.verify(proof, signals);
      },
      verifyBatch: async (items) => {
        if (broken) throw new Error("engine fault");
        return verifier.verifyBatch(items);
      },
    };
    const batching = new BatchingVerifier([engine]);
    // A fault is not a verdict: the single path and the queued batch both reject, so no challenge is decided on it.
    const first = await Promise.allSettled(valid.slice(0, 3).map(async (item) => batching.verify(item.proof, item.publicSignals)));
    expect(first.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(first.map((r) => (r.status === "rejected" ? String(r.reason) : ""))).toEqual([0, 1, 2].map(() => "Error: engine fault"));
    broken = false;
    await Bun.sleep(1);
    const again = await Promise.all(valid.slice(0, 3).map((item) => batching.verify(item.proof, item.publicSignals)));
    expect(again).toEqual([0, 1, 2].map(() => ({ ok: true })));
  }, 60_000);

  /** The order in which submissions are answered: tenant A floods 24 proofs behind a busy engine, then B sends one. */
  async function answerOrder(items: { a: BatchItem; b: BatchItem }, maxBatch: number) {
    const batching = new BatchingVerifier([recording(true)], { maxBatch });
    const order: string[] = [];
    const submit = (item: BatchItem, tenant: string, label: string) =>
      Promise.resolve(batching.verify(item.proof, item.publicSignals, { tenant })).then((result) => (order.push(label), result));
    const all = [submit(items.a, "A", "A0")]; // takes the idle engine
    for (let i = 1; i <= 24; i++) all.push(submit(items.a, "A", `A${i}`));
    all.push(submit(items.b, "B", "B"));
    await Promise.all(all);
    return order;
  }

  test("issue 18: queued proofs are served round-robin per tenant: one key's 24 queued proofs do not put another key's one behind them", async () => {
    // Batches of 4: B rides in the first batch after the busy engine frees (FIFO put it in the seventh).
    const batched = await answerOrder({ a: valid[0]!, b: valid[1]! }, 4);
    expect(batched.indexOf("B")).toBeLessThanOrEqual(4);
    // A flood of bad proofs is verified singly: B is next after one of A's (FIFO: after all 24).
    const single = await answerOrder({ a: invalid[0]!, b: valid[1]! }, 32);
    expect(single.indexOf("B")).toBeLessThanOrEqual(2);
    expect(single).toHaveLength(26);
  }, 60_000);
});
