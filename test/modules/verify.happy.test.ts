// The verification flow as an integrator uses it: register → challenge → real
// proof → verdict → status, with the exact fields of docs/api.md.
import { beforeAll, describe, expect, test } from "bun:test";
import type { AgentIdentity } from "../../src/agent";
import { sign } from "../../src/agent";
import { CONFIDENCE_PROOF, CONFIDENCE_PROOF_AND_SIGNATURE } from "../../src/identity/confidence";
import { contextHash } from "../../src/identity/encoding";
import { createHarness, type Harness } from "../support/harness";
import { identity } from "../support/proofs";
import { ISO, proveFor, readStatus, registerAgent, requestChallenge, submitProof } from "./flow";

let h: Harness;
let key: string;
let alice: AgentIdentity;
const context = { amount: 20, currency: "EUR", merchant: "shop-a" };

beforeAll(async () => {
  h = await createHarness();
  key = await h.newKey("happy");
  alice = await identity("alice");
  await registerAgent(h, key, "alice", alice, true);
});

describe("POST /v1/verify/challenge", () => {
  test("returns a challenge id, a 62-hex-digit nonce, expires_in 300 and the clock's time in ms", async () => {
    const response = await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "alice", action: "purchase", context } });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual(["challenge_id", "circuit_id", "expires_in", "nonce", "timestamp"]);
    // Nothing activated another circuit: the shipped one (docs/trust.md).
    expect(response.body.circuit_id).toMatch(/^agent_identity-[0-9a-f]{16}$/);
    expect(response.body.challenge_id).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    expect(response.body.nonce).toMatch(/^[0-9a-f]{62}$/);
    expect(response.body.expires_in).toBe(300);
    expect(response.body.timestamp).toBe(h.clock.now());
    expect(response.headers.get("x-request-id")).toBeTruthy();
  });

  test("issues a fresh id and nonce on every request", async () => {
    const a = await requestChallenge(h, key, "alice", "purchase");
    const b = await requestChallenge(h, key, "alice", "purchase");
    expect(a.challenge_id).not.toBe(b.challenge_id);
    expect(a.nonce).not.toBe(b.nonce);
  });

  test("a new challenge reads as pending with null verified_at and confidence", async () => {
    const challenge = await requestChallenge(h, key, "alice", "refund");
    const status = await readStatus(h, key, challenge.challenge_id);
    expect(status.status).toBe(200);
    expect(status.body).toEqual({
      session_id: challenge.challenge_id,
      status: "pending",
      agent_id: "alice",
      action: "refund",
      created_at: new Date(h.clock.now()).toISOString(),
      verified_at: null,
      confidence: null,
      expires_at: new Date(h.clock.now() + 300_000).toISOString(),
      // Additions for receipts (docs/receipts.md): nothing decided yet.
      reason: null,
      context_hash: contextHash({}).toString(),
      receipt: null,
    });
  });
});

describe("full flow", () => {
  test("a real proof verifies with confidence 0.99 and the session reads verified", async () => {
    const created = h.clock.now();
    const challenge = await requestChallenge(h, key, "alice", "purchase", context);
    const proof = await proveFor(alice, challenge, "purchase", context);
    h.clock.advance(1_234);

    const verdict = await submitProof(h, key, challenge.challenge_id, proof);
    expect(verdict.status).toBe(200);
    expect(verdict.body).toEqual({
      verified: true,
      agent_id: "alice",
      action: "purchase",
      confidence: 0.99,
      timestamp: new Date(created + 1_234).toISOString(),
      session_id: challenge.challenge_id,
      receipt: expect.any(String),
    });
    expect(verdict.body.timestamp).toMatch(ISO);
    expect(CONFIDENCE_PROOF).toBe(0.99);

    h.clock.advance(10_000);
    const status = await readStatus(h, key, challenge.challenge_id);
    expect(status.status).toBe(200);
    expect(status.body).toEqual({
      session_id: challenge.challenge_id,
      status: "verified",
      agent_id: "alice",
      action: "purchase",
      created_at: new Date(created).toISOString(),
      verified_at: new Date(created + 1_234).toISOString(),
      confidence: 0.99,
      expires_at: new Date(created + 300_000).toISOString(),
      reason: null,
      context_hash: contextHash(context).toString(),
      receipt: verdict.body.receipt,
    });
  });

  test("a valid agent_signature raises the confidence to 0.999", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase", context);
    const proof = await proveFor(alice, challenge, "purchase", context);
    const signature = sign({ signingSecret: alice.signing_secret, challengeId: challenge.challenge_id, nonce: challenge.nonce, action: "purchase", context });

    const verdict = await submitProof(h, key, challenge.challenge_id, proof, signature);
    expect(verdict.status).toBe(200);
    expect(verdict.body.verified).toBe(true);
    expect(verdict.body.confidence).toBe(0.999);
    expect(CONFIDENCE_PROOF_AND_SIGNATURE).toBe(0.999);
    expect((await readStatus(h, key, challenge.challenge_id)).body.confidence).toBe(0.999);
  });

  test("a challenge without context is bound to {} and verifies", async () => {
    const challenge = await requestChallenge(h, key, "alice", "login");
    const proof = await proveFor(alice, challenge, "login", {});
    const verdict = await submitProof(h, key, challenge.challenge_id, proof);
    expect(verdict.status).toBe(200);
    expect(verdict.body.action).toBe("login");
  });

  test("context key order does not matter: {a,b} proved, {b,a} requested, verifies", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase", { merchant: "shop-a", amount: 20 });
    const proof = await proveFor(alice, challenge, "purchase", { amount: 20, merchant: "shop-a" });
    expect((await submitProof(h, key, challenge.challenge_id, proof)).status).toBe(200);
  });

  test("__proto__ and constructor keys in context are stored and bound like any other key", async () => {
    const tricky = JSON.parse('{"__proto__": {"polluted": true}, "constructor": "x", "amount": 1}');
    const challenge = await requestChallenge(h, key, "alice", "purchase", tricky);
    const stored = await h.store.getChallenge(challenge.challenge_id);
    expect(stored!.context).toBe('{"__proto__":{"polluted":true},"amount":1,"constructor":"x"}');
    expect(({} as any).polluted).toBeUndefined();

    const proof = await proveFor(alice, challenge, "purchase", JSON.parse('{"constructor": "x", "amount": 1, "__proto__": {"polluted": true}}'));
    expect((await submitProof(h, key, challenge.challenge_id, proof)).status).toBe(200);
  });

  test("a proof submitted at exactly +300 s is still accepted", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase");
    const proof = await proveFor(alice, challenge, "purchase");
    h.clock.advance(300_000);
    const verdict = await submitProof(h, key, challenge.challenge_id, proof);
    expect(verdict.status).toBe(200);
    expect(verdict.body.verified).toBe(true);
  });
});
