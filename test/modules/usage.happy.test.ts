// Usage counting (docs/api.md, "Limits"):
// successful challenge requests count; rejected ones do not; verified and
// failed verifications are counted apart; status reads count nothing.
import { beforeAll, describe, expect, test } from "bun:test";
import type { AgentIdentity } from "../../src/agent";
import { createHarness, type Harness } from "../support/harness";
import { identity, SAMPLE, sampleProof, type SampleProof } from "../support/proofs";
import { keyIdOf, readStatus, registerAgent, requestChallenge, seedChallenge, submitProof } from "./flow";

let h: Harness;
let sample: SampleProof;
let alice: AgentIdentity;

beforeAll(async () => {
  h = await createHarness();
  [sample, alice] = await Promise.all([sampleProof(), identity("alice")]);
});

const usage = async (key: string) => {
  const response = await h.call("GET", "/v1/usage", { key });
  expect(response.status).toBe(200);
  return response.body;
};

describe("GET /v1/usage", () => {
  test("a new key reports zero counters, its name, id and rate limit", async () => {
    const key = await h.newKey("fresh", 7);
    expect(await usage(key)).toEqual({
      key_id: keyIdOf(key),
      name: "fresh",
      challenges: 0,
      verifications: { verified: 0, failed: 0 },
      rate_limit_per_minute: 7,
    });
  });

  test("each successful challenge increments challenges, in the endpoint and in the store", async () => {
    const key = await h.newKey("counting");
    for (let i = 1; i <= 3; i++) {
      await requestChallenge(h, key, "a", "x");
      expect((await usage(key)).challenges).toBe(i);
      expect((await h.store.usage(keyIdOf(key)))!.challenges).toBe(i);
    }
  });

  test("rejected challenge requests (400, 415, 429) do not count", async () => {
    const key = await h.newKey("rejected", 1);
    await requestChallenge(h, key, "a", "x");
    expect((await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "a" } })).status).toBe(400);
    expect((await h.call("POST", "/v1/verify/challenge", { key, body: "{}", headers: { "content-type": "text/plain" } })).status).toBe(415);
    expect((await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "a", action: "x" } })).status).toBe(429);
    expect((await usage(key)).challenges).toBe(1);
  });

  test("verified and failed verifications are counted separately; status reads count nothing", async () => {
    const key = await h.newKey("verifications");
    await registerAgent(h, key, "sample", sample.identity);
    const good = await seedChallenge(h, key, "sample", SAMPLE);
    const bad1 = await requestChallenge(h, key, "sample", "x");
    const bad2 = await requestChallenge(h, key, "sample", "x");
    const before = await usage(key);

    expect((await submitProof(h, key, good, sample.proof)).status).toBe(200);
    expect((await submitProof(h, key, bad1.challenge_id, sample.proof)).status).toBe(400);
    expect((await submitProof(h, key, bad2.challenge_id, "garbage")).status).toBe(400);
    expect((await submitProof(h, key, good, sample.proof)).status).toBe(400); // already used: not a new verification
    for (let i = 0; i < 5; i++) await readStatus(h, key, good);

    const after = await usage(key);
    expect(after.verifications).toEqual({ verified: 1, failed: 2 });
    expect(after.challenges).toBe(before.challenges);
  });

  test("counters are per key", async () => {
    const a = await h.newKey("a");
    const b = await h.newKey("b");
    await requestChallenge(h, a, "x", "y");
    await requestChallenge(h, a, "x", "y");
    expect((await usage(a)).challenges).toBe(2);
    expect((await usage(b)).challenges).toBe(0);
  });

  test("a successful real flow counts one challenge and one verified", async () => {
    const key = await h.newKey("flow");
    await registerAgent(h, key, "alice", alice);
    const challenge = await requestChallenge(h, key, "alice", "login");
    const { proofFor } = await import("../support/proofs");
    const proof = await proofFor({ secret: alice.secret, nonce: challenge.nonce, action: "login" });
    expect((await submitProof(h, key, challenge.challenge_id, proof)).status).toBe(200);
    expect(await usage(key)).toMatchObject({ challenges: 1, verifications: { verified: 1, failed: 0 } });
  });
});
