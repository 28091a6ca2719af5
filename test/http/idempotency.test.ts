// Idempotency-Key on both POST endpoints (src/http/idempotency.ts), and the
// audit trail those requests leave (request ids included).
import { beforeAll, describe, expect, test } from "bun:test";
import { createIdentity, prove } from "../../src/agent";
import { createHarness, type Harness } from "../support/harness";

let h: Harness;
let key: string;
let identity: Awaited<ReturnType<typeof createIdentity>>;

beforeAll(async () => {
  h = await createHarness();
  key = await h.newKey("idem");
  identity = await createIdentity();
  const registered = await h.call("POST", "/v1/agents", { key, body: { agent_id: "idem-agent", identity_commitment: identity.identity_commitment } });
  expect(registered.status).toBe(201);
});

const challengeBody = { agent_id: "idem-agent", action: "purchase", context: { amount: 5 } };
const countChallenges = async () => (await h.call("GET", "/v1/usage", { key })).body.challenges as number;

describe("challenge creation", () => {
  test("a retry with the same key and body returns the first challenge and creates nothing", async () => {
    const before = await countChallenges();
    const first = await h.call("POST", "/v1/verify/challenge", { key, body: challengeBody, headers: { "idempotency-key": "c-1" } });
    const retry = await h.call("POST", "/v1/verify/challenge", { key, body: challengeBody, headers: { "idempotency-key": "c-1" } });
    expect(first.status).toBe(200);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(await countChallenges()).toBe(before + 1);
  });

  test("the same body under another idempotency key is a new challenge", async () => {
    const a = await h.call("POST", "/v1/verify/challenge", { key, body: challengeBody, headers: { "idempotency-key": "c-2a" } });
    const b = await h.call("POST", "/v1/verify/challenge", { key, body: challengeBody, headers: { "idempotency-key": "c-2b" } });
    expect(a.body.challenge_id).not.toBe(b.body.challenge_id);
  });

  test("key order in the body does not make it a different request", async () => {
    const first = await h.call("POST", "/v1/verify/challenge", {
      key,
      body: { action: "purchase", agent_id: "idem-agent" },
      headers: { "idempotency-key": "c-3" },
    });
    const retry = await h.call("POST", "/v1/verify/challenge", {
      key,
      body: { agent_id: "idem-agent", action: "purchase" },
      headers: { "idempotency-key": "c-3" },
    });
    expect(retry.body.challenge_id).toBe(first.body.challenge_id);
  });

  test("the same key with a different body is a 422 and creates nothing", async () => {
    await h.call("POST", "/v1/verify/challenge", { key, body: challengeBody, headers: { "idempotency-key": "c-4" } });
    const before = await countChallenges();
    const other = await h.call("POST", "/v1/verify/challenge", { key, body: { ...challengeBody, action: "refund" }, headers: { "idempotency-key": "c-4" } });
    expect(other.status).toBe(422);
    expect(other.body.error).toBe("Idempotency key reused");
    expect(await countChallenges()).toBe(before);
  });

  test("idempotency keys are private to the API key", async () => {
    const otherKey = await h.newKey("other");
    await h.call("POST", "/v1/agents", { key: otherKey, body: { agent_id: "idem-agent", identity_commitment: identity.identity_commitment } });
    const mine = await h.call("POST", "/v1/verify/challenge", { key, body: challengeBody, headers: { "idempotency-key": "shared" } });
    const theirs = await h.call("POST", "/v1/verify/challenge", { key: otherKey, body: challengeBody, headers: { "idempotency-key": "shared" } });
    expect(theirs.status).toBe(200);
    expect(theirs.body.challenge_id).not.toBe(mine.body.challenge_id);
  });

  test("a malformed idempotency key is a 400 naming the header; validation errors are not saved", async () => {
    const bad = await h.call("POST", "/v1/verify/challenge", { key, body: challengeBody, headers: { "idempotency-key": "has space" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("Idempotency-Key");
    const invalid = await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "idem-agent" }, headers: { "idempotency-key": "c-5" } });
    expect(invalid.status).toBe(400);
    const fixed = await h.call("POST", "/v1/verify/challenge", {
      key,
      body: { agent_id: "idem-agent", action: "purchase" },
      headers: { "idempotency-key": "c-5" },
    });
    expect(fixed.status).toBe(200);
  });

  test("a 429 is not saved: the retry after Retry-After succeeds", async () => {
    const limited = await h.newKey("limited", 1);
    await h.call("POST", "/v1/agents", { key: limited, body: { agent_id: "idem-agent", identity_commitment: identity.identity_commitment } });
    expect((await h.call("POST", "/v1/verify/challenge", { key: limited, body: challengeBody })).status).toBe(200);
    const refused = await h.call("POST", "/v1/verify/challenge", { key: limited, body: challengeBody, headers: { "idempotency-key": "rl" } });
    expect(refused.status).toBe(429);
    // The retry Retry-After asks for (a sliding minute: the minute's two attempts still count a minute later).
    h.clock.advance(Number(refused.headers.get("retry-after")) * 1000);
    const retried = await h.call("POST", "/v1/verify/challenge", { key: limited, body: challengeBody, headers: { "idempotency-key": "rl" } });
    expect(retried.status).toBe(200);
    expect(retried.body.challenge_id).toStartWith("ch_");
  });
});

describe("proof submission", () => {
  test("a client that lost the answer retries and gets the same verdict without burning the challenge", async () => {
    const challenge = (await h.call("POST", "/v1/verify/challenge", { key, body: challengeBody })).body;
    const proof = await prove({ secret: identity.secret, nonce: challenge.nonce, action: "purchase", context: { amount: 5 } });
    const body = { challenge_id: challenge.challenge_id, proof };
    const first = await h.call("POST", "/v1/verify/proof", { key, body, headers: { "idempotency-key": "p-1" } });
    const retry = await h.call("POST", "/v1/verify/proof", { key, body, headers: { "idempotency-key": "p-1" } });
    expect(first.status).toBe(200);
    expect(first.body.verified).toBe(true);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);
    // Without the key the same submission is a second use.
    const plain = await h.call("POST", "/v1/verify/proof", { key, body });
    expect(plain.status).toBe(400);
    expect(plain.body).toEqual({ error: "Challenge already used", verified: false, previous_status: "verified" });
  });

  test("a failed verification is replayed as the same 400 with its reason", async () => {
    const challenge = (await h.call("POST", "/v1/verify/challenge", { key, body: challengeBody })).body;
    const body = { challenge_id: challenge.challenge_id, proof: "not a proof" };
    const first = await h.call("POST", "/v1/verify/proof", { key, body, headers: { "idempotency-key": "p-2" } });
    const retry = await h.call("POST", "/v1/verify/proof", { key, body, headers: { "idempotency-key": "p-2" } });
    expect(first.status).toBe(400);
    expect(first.body.reason).toBe("invalid_proof_format");
    expect(retry.status).toBe(400);
    expect(retry.body).toEqual(first.body);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("audit trail", () => {
  test("records creation and decision with the request ids the client saw", async () => {
    const created = await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "idem-agent", action: "audit-me" } });
    const decided = await h.call("POST", "/v1/verify/proof", { key, body: { challenge_id: created.body.challenge_id, proof: "{}" } });
    expect(decided.status).toBe(400);
    const entries = (await h.store.listAudit({ limit: 10_000 })).filter((e) => e.sessionId === created.body.challenge_id);
    expect(entries.map((e) => [e.event, e.result, e.reason, e.requestId])).toEqual([
      ["challenge.created", "pending", null, created.headers.get("x-request-id")],
      ["verification.decided", "failed", "invalid_proof_format", decided.headers.get("x-request-id")],
    ]);
    expect(entries.every((e) => e.action === "audit-me" && e.agentId === "idem-agent")).toBe(true);
  });

  test("holds no API key or secret", async () => {
    const dump = JSON.stringify(await h.store.listAudit({ limit: 10_000 }));
    expect(dump).not.toContain(key);
    // The secret part is everything after "zka_<16 hex id>_" (it may itself contain "_").
    const secretPart = key.slice("zka_".length + 16 + 1);
    expect(secretPart).toHaveLength(43);
    expect(dump).not.toContain(secretPart);
    expect(dump).not.toContain(identity.secret);
  });
});
