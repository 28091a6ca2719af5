// What an attacker might try against the proof endpoint: another key's
// challenge, replaying a proof, moving a proof to another action, amount or
// agent, revoked and unknown agents, forged signatures, and a race of 50
// submissions for one challenge.
import { beforeAll, describe, expect, test } from "bun:test";
import { sign, type AgentIdentity } from "../../src/agent";
import { createHarness, type Harness } from "../support/harness";
import { identity, SAMPLE, sampleProof, type SampleProof } from "../support/proofs";
import { keyIdOf, proveFor, readStatus, registerAgent, requestChallenge, seedChallenge, submitProof } from "./flow";

let h: Harness;
let key: string;
let stranger: string;
let alice: AgentIdentity;
let bob: AgentIdentity;
let sample: SampleProof;

beforeAll(async () => {
  h = await createHarness();
  key = await h.newKey("owner");
  stranger = await h.newKey("stranger");
  [alice, bob, sample] = await Promise.all([identity("alice"), identity("bob"), sampleProof()]);
  await registerAgent(h, key, "alice", alice, true);
  await registerAgent(h, key, "bob", bob); // no signing key
  await registerAgent(h, key, "sample", sample.identity);
  // The stranger registers the same agent under its own key: still not theirs to use.
  await registerAgent(h, stranger, "alice", alice, true);
});

async function expectFailed(response: { status: number; body: any }, reason: string, sessionId: string) {
  expect(response.status).toBe(400);
  expect(response.body).toEqual({ verified: false, error: "Proof verification failed", reason, receipt: expect.any(String) });
  const status = await readStatus(h, key, sessionId);
  expect(status.body.status).toBe("failed");
  expect(status.body.confidence).toBeNull();
  expect(status.body.verified_at).toBeNull();
}

describe("cross-key isolation", () => {
  test("a foreign key cannot read status nor submit a proof, and the challenge stays usable by its owner", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase");
    const proof = await proveFor(alice, challenge, "purchase");

    const read = await readStatus(h, stranger, challenge.challenge_id);
    expect(read.status).toBe(403);
    expect(read.body).toEqual({ error: "Unauthorized access to session" });
    const submit = await submitProof(h, stranger, challenge.challenge_id, proof);
    expect(submit.status).toBe(403);
    expect(submit.body).toEqual({ error: "Unauthorized access to session" });

    const stored = await h.store.getChallenge(challenge.challenge_id);
    expect(stored!.status).toBe("pending");
    expect(stored!.decidedAt).toBeNull();
    expect((await h.store.usage(keyIdOf(stranger)))!.verified + (await h.store.usage(keyIdOf(stranger)))!.failed).toBe(0);

    const owner = await submitProof(h, key, challenge.challenge_id, proof);
    expect(owner.status).toBe(200);
    expect(owner.body.verified).toBe(true);
  });

  test("the 403 does not reveal the session's state or agent", async () => {
    const challenge = await requestChallenge(h, key, "alice", "secret-action");
    const response = await readStatus(h, stranger, challenge.challenge_id);
    expect(JSON.stringify(response.body)).not.toContain("alice");
    expect(JSON.stringify(response.body)).not.toContain("secret-action");
  });
});

describe("binding: a proof verifies only for its own challenge", () => {
  test("replaying a valid proof on a second challenge fails with proof_rejected", async () => {
    const first = await requestChallenge(h, key, "alice", "purchase");
    const proof = await proveFor(alice, first, "purchase");
    expect((await submitProof(h, key, first.challenge_id, proof)).status).toBe(200);

    const second = await requestChallenge(h, key, "alice", "purchase");
    await expectFailed(await submitProof(h, key, second.challenge_id, proof), "proof_rejected", second.challenge_id);
  });

  test("a proof for action A fails on a challenge for action B", async () => {
    const challenge = await requestChallenge(h, key, "alice", "refund");
    const proof = await proveFor(alice, challenge, "purchase");
    await expectFailed(await submitProof(h, key, challenge.challenge_id, proof), "proof_rejected", challenge.challenge_id);
  });

  test("a proof for amount 20 fails on a challenge for amount 21 (same action)", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase", { amount: 21, currency: "EUR" });
    const proof = await proveFor(alice, challenge, "purchase", { amount: 20, currency: "EUR" });
    await expectFailed(await submitProof(h, key, challenge.challenge_id, proof), "proof_rejected", challenge.challenge_id);
  });

  test("a proof without context fails on a challenge with context", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase", { amount: 20 });
    const proof = await proveFor(alice, challenge, "purchase");
    await expectFailed(await submitProof(h, key, challenge.challenge_id, proof), "proof_rejected", challenge.challenge_id);
  });

  test("agent X's proof on agent Y's challenge fails", async () => {
    const challenge = await requestChallenge(h, key, "bob", "purchase");
    const proof = await proveFor(alice, challenge, "purchase"); // alice proves with bob's nonce
    await expectFailed(await submitProof(h, key, challenge.challenge_id, proof), "proof_rejected", challenge.challenge_id);
  });
});

describe("agent registry", () => {
  test("a challenge for an unregistered agent fails with unknown_agent", async () => {
    const id = await seedChallenge(h, key, "nobody", SAMPLE);
    await expectFailed(await submitProof(h, key, id, sample.proof), "unknown_agent", id);
  });

  test("an agent registered only under another key is unknown to this key", async () => {
    const carol = await identity("carol");
    await registerAgent(h, stranger, "carol", carol);
    const challenge = await requestChallenge(h, key, "carol", "purchase");
    const proof = await proveFor(carol, challenge, "purchase");
    await expectFailed(await submitProof(h, key, challenge.challenge_id, proof), "unknown_agent", challenge.challenge_id);
  });

  test("a revoked agent's valid proof fails with agent_revoked", async () => {
    const fresh = await createHarness();
    const freshKey = await fresh.newKey();
    const [dave] = [await identity("dave")];
    await registerAgent(fresh, freshKey, "dave", dave);
    const challenge = await requestChallenge(fresh, freshKey, "dave", "purchase");
    const proof = await proveFor(dave, challenge, "purchase");
    expect((await fresh.call("DELETE", "/v1/agents/dave", { key: freshKey })).body.status).toBe("revoked");
    const response = await submitProof(fresh, freshKey, challenge.challenge_id, proof);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ verified: false, error: "Proof verification failed", reason: "agent_revoked", receipt: expect.any(String) });
    expect((await readStatus(fresh, freshKey, challenge.challenge_id)).body.status).toBe("failed");
  });
});

describe("agent_signature fails closed", () => {
  test("a signature for an agent without a signing key → signature_not_verifiable", async () => {
    const challenge = await requestChallenge(h, key, "bob", "purchase");
    const proof = await proveFor(bob, challenge, "purchase");
    const signature = sign({ signingSecret: bob.signing_secret, challengeId: challenge.challenge_id, nonce: challenge.nonce, action: "purchase" });
    await expectFailed(await submitProof(h, key, challenge.challenge_id, proof, signature), "signature_not_verifiable", challenge.challenge_id);
  });

  test("a signature by the wrong key → invalid_signature, although the proof is valid", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase");
    const proof = await proveFor(alice, challenge, "purchase");
    const signature = sign({ signingSecret: bob.signing_secret, challengeId: challenge.challenge_id, nonce: challenge.nonce, action: "purchase" });
    await expectFailed(await submitProof(h, key, challenge.challenge_id, proof, signature), "invalid_signature", challenge.challenge_id);
  });

  test("a signature over another challenge's message → invalid_signature", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase", { amount: 20 });
    const proof = await proveFor(alice, challenge, "purchase", { amount: 20 });
    const signature = sign({
      signingSecret: alice.signing_secret,
      challengeId: challenge.challenge_id,
      nonce: challenge.nonce,
      action: "purchase",
      context: { amount: 21 },
    });
    await expectFailed(await submitProof(h, key, challenge.challenge_id, proof, signature), "invalid_signature", challenge.challenge_id);
  });

  test("a malformed signature → invalid_signature", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase");
    const proof = await proveFor(alice, challenge, "purchase");
    await expectFailed(await submitProof(h, key, challenge.challenge_id, proof, "not*base64url"), "invalid_signature", challenge.challenge_id);
  });

  test("an invalid proof fails on the proof, whatever the signature", async () => {
    const id = await seedChallenge(h, key, "alice", SAMPLE);
    await expectFailed(await submitProof(h, key, id, sample.proof, "x"), "proof_rejected", id);
  });
});

describe("one-time use under concurrency", () => {
  test("50 concurrent submissions of a valid proof: exactly one 200, 49 × Challenge already used (verified)", async () => {
    const fresh = await createHarness();
    const freshKey = await fresh.newKey();
    await registerAgent(fresh, freshKey, "alice", alice);
    const challenge = await requestChallenge(fresh, freshKey, "alice", "purchase");
    const proof = await proveFor(alice, challenge, "purchase");

    const responses = await Promise.all(Array.from({ length: 50 }, () => submitProof(fresh, freshKey, challenge.challenge_id, proof)));
    const ok = responses.filter((r) => r.status === 200);
    const used = responses.filter((r) => r.status === 400);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.body.verified).toBe(true);
    expect(used).toHaveLength(49);
    for (const r of used) expect(r.body).toEqual({ error: "Challenge already used", verified: false, previous_status: "verified" });

    expect(await fresh.store.usage(keyIdOf(freshKey))).toEqual({ challenges: 1, verified: 1, failed: 0 });
    expect((await readStatus(fresh, freshKey, challenge.challenge_id)).body.status).toBe("verified");
  });

  test("a race between a valid and an invalid proof decides once; the loser learns the winner's status", async () => {
    const fresh = await createHarness();
    const freshKey = await fresh.newKey();
    await registerAgent(fresh, freshKey, "sample", sample.identity);
    const id = await seedChallenge(fresh, freshKey, "sample", SAMPLE);
    const responses = await Promise.all([
      ...Array.from({ length: 10 }, () => submitProof(fresh, freshKey, id, sample.proof)),
      ...Array.from({ length: 10 }, () => submitProof(fresh, freshKey, id, "garbage")),
    ]);
    const decided = responses.filter((r) => r.body.error !== "Challenge already used");
    expect(decided).toHaveLength(1);
    const final = (await readStatus(fresh, freshKey, id)).body.status;
    for (const r of responses) if (r !== decided[0]) expect(r.body.previous_status).toBe(final);
    const usage = (await fresh.store.usage(keyIdOf(freshKey)))!;
    expect(usage.verified + usage.failed).toBe(1);
  });
});
