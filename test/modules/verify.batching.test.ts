// Proof submissions under concurrency through the whole service, with the
// batching verifier main.ts wires: every response, every stored decision and
// every counter is what the one-at-a-time verifier gives, also for the bad
// proofs that were verified inside a batch of good ones.
import { beforeAll, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { observed } from "../support/contract";
import { BatchingVerifier, type VerifyEngine } from "../../src/verifier/batching";
import type { Groth16Verifier } from "../../src/verifier/index";
import { serviceVerifier } from "../../src/verifier/service";
import type { VerifyResult } from "../../src/verifier/types";
import { BASE, createHarness, withoutRequestId, type Harness } from "../support/harness";
import { identity, proofFor, SAMPLE } from "../support/proofs";
import { keyIdOf, registerAgent, seedChallenge } from "./flow";

let h: Harness;
let key: string;
let valid: string;
let foreign: string;
let offCurve: string;

beforeAll(async () => {
  h = await createHarness();
  key = await h.newKey("batching");
  const agent = await identity("batching-http");
  await registerAgent(h, key, "batcher", agent);
  valid = await proofFor({ secret: agent.secret, ...SAMPLE });
  // Well-formed, by the same agent, for another nonce: fails only the pairing check.
  foreign = await proofFor({ secret: agent.secret, ...SAMPLE, nonce: "ef".repeat(31) });
  const bent = JSON.parse(valid);
  bent.pi_c[1] = (BigInt(bent.pi_c[1]) + 1n).toString();
  offCurve = JSON.stringify(bent);
}, 120_000);

/** Valid, with a pairing-invalid proof every fifth and an off-curve one every eleventh submission. */
const proofAt = (i: number) => (i % 11 === 7 ? offCurve : i % 5 === 2 ? foreign : valid);

type App = ReturnType<typeof createApp>;

/** Seeds n challenges for the SAMPLE statement and submits proofAt(i) to each, all at once. */
async function submitAll(app: App, n: number) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await seedChallenge(h, key, "batcher", SAMPLE));
  const responses = await Promise.all(
    ids.map(async (id, i) => {
      const response = await app.handle(
        new Request(`${BASE}/v1/verify/proof`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify({ challenge_id: id, proof: proofAt(i) }),
        }),
      );
      const body = withoutRequestId(response, await response.text());
      return { status: response.status, verified: body.verified, reason: body.reason ?? null };
    }),
  );
  const stored = await Promise.all(ids.map(async (id) => (await h.store.getChallenge(id))!.status));
  return { responses, stored };
}

/** The real verifier, recording the verdicts of every batch it is given. */
function recording(verifier: Groth16Verifier): VerifyEngine & { batches: VerifyResult[][] } {
  const batches: VerifyResult[][] = [];
  return {
    batches,
    verify: (proof, signals) => verifier.verify(proof, signals),
    verifyBatch: (items) => {
      const results = verifier.verifyBatch(items);
      batches.push(results);
      return results;
    },
  };
}

describe("POST /v1/verify/proof with the batching verifier", () => {
  test("concurrent mixed submissions: the same responses, decisions and counters as one at a time", async () => {
    const n = 40;
    const single = await submitAll(observed(createApp({ ...h.deps, verifier: await serviceVerifier() })), n);
    const usageBefore = (await h.store.usage(keyIdOf(key)))!;

    const engine = recording(await serviceVerifier());
    const batching = new BatchingVerifier([engine]);
    const batched = await submitAll(observed(createApp({ ...h.deps, verifier: batching })), n);

    expect(batched).toEqual(single);
    // The expected mix, so the comparison covers every path.
    const reasons = single.responses.map((r) => (r.status === 200 ? "verified" : r.reason));
    expect(reasons.filter((r) => r === "verified").length).toBe(30);
    expect(reasons.filter((r) => r === "proof_rejected").length).toBe(7);
    expect(reasons.filter((r) => r === "invalid_curve_point").length).toBe(3);
    for (const r of single.responses) expect(r.status).toBe(r.reason === null ? 200 : 400);
    expect(single.stored).toEqual(reasons.map((r) => (r === "verified" ? "verified" : "failed")));

    // Bad proofs were verified inside batches of good ones and failed alone.
    expect(engine.batches.some((b) => b.length > 1 && b.some((r) => r.ok) && b.some((r) => !r.ok))).toBe(true);
    expect(batching.stats.batchedItems).toBeGreaterThan(n / 2);

    const usageAfter = (await h.store.usage(keyIdOf(key)))!;
    expect(usageAfter.verified - usageBefore.verified).toBe(30);
    expect(usageAfter.failed - usageBefore.failed).toBe(10);
  }, 120_000);

  test("a verifier fault is a 500 that decides nothing: the challenge stays pending and the proof verifies on retry", async () => {
    const real = await serviceVerifier();
    let broken = true;
    const engine: VerifyEngine = {
      verify: (proof, signals) => {
        if (broken) throw new Error("verifier thread died");
        return real.verify(proof, signals);
      },
      verifyBatch: (items) => real.verifyBatch(items),
    };
    const app = observed(createApp({ ...h.deps, verifier: new BatchingVerifier([engine]) }));
    const id = await seedChallenge(h, key, "batcher", SAMPLE);
    const submit = () =>
      app.handle(
        new Request(`${BASE}/v1/verify/proof`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify({ challenge_id: id, proof: valid }),
        }),
      );
    const faulted = await submit();
    expect(faulted.status).toBe(500);
    expect((await h.store.getChallenge(id))!.status).toBe("pending");
    broken = false;
    await Bun.sleep(1); // the engine is released on the next loop turn
    const retried = await submit();
    expect(retried.status).toBe(200);
    expect((await h.store.getChallenge(id))!.status).toBe("verified");
  }, 60_000);
});
