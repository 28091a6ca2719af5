// Mandates over HTTP: register with a mandate, PUT/DELETE it, GET the spend,
// and the verdicts at every boundary. One pooled real proof (support/proofs.ts
// SAMPLE: purchase, {amount: 20, currency: "EUR", merchant: "shop-a"}) is
// valid for every challenge seeded with its nonce, so the boundaries cost no
// proving.
import { beforeAll, describe, expect, test } from "bun:test";
import canonicalize from "canonicalize";
import { createHash, createPublicKey, verify } from "node:crypto";
import { createHarness, type Harness } from "../support/harness";
import { SAMPLE, sampleProof, type SampleProof } from "../support/proofs";
import { readStatus, seedChallenge, submitProof } from "./flow";

let h: Harness;
let sample: SampleProof;
const DAY = 86_400_000;

beforeAll(async () => {
  h = await createHarness();
  sample = await sampleProof();
  // Saturday 2026-11-21, 12:00 UTC.
  h.clock.advance(Date.parse("2026-11-21T12:00:00Z") - h.clock.now());
});

/** A fresh key with the sample agent registered under it, with `mandate` if given. */
async function agentWith(mandate?: unknown) {
  const key = await h.newKey("mandates");
  const body: Record<string, unknown> = { agent_id: "buyer", identity_commitment: sample.identity.identity_commitment };
  if (mandate !== undefined) body.mandate = mandate;
  const registered = await h.call("POST", "/v1/agents", { key, body });
  expect(registered.status).toBe(201);
  return { key, registered: registered.body };
}

/** Seeds a challenge for the sample statement and submits the sample proof: one purchase of 20 EUR at shop-a. */
async function purchase(key: string) {
  const id = await seedChallenge(h, key, "buyer", SAMPLE);
  return { id, reply: await submitProof(h, key, id, sample.proof) };
}

const limit = (fields: Record<string, unknown>) => ({ limits: [{ action: "purchase", currency: "EUR", ...fields }] });

describe("mandates over HTTP", () => {
  test("POST /v1/agents takes a mandate; GET shows it, its hash, and each limit's spend in the current period", async () => {
    const mandate = { merchants: ["shop-a"], ...limit({ max_total: "100.00", max_count: 10, period: "day" }) };
    const { key, registered } = await agentWith(mandate);
    expect(registered).toMatchObject({ agent_id: "buyer", principal_key: null, mandate, mandate_jws: null });
    expect(registered.mandate_hash).toBe(`sha256:${createHash("sha256").update(canonicalize(mandate)!).digest("hex")}`);
    expect((await purchase(key)).reply.status).toBe(200);
    const read = await h.call("GET", "/v1/agents/buyer", { key });
    expect(read.status).toBe(200);
    expect(read.body.spend).toEqual([
      {
        limit: 0,
        action: "purchase",
        currency: "EUR",
        period: "day",
        period_start: "2026-11-21T00:00:00.000Z",
        period_end: "2026-11-22T00:00:00.000Z",
        total: "20",
        count: 1,
      },
    ]);
  });

  test("amount = max_amount verifies; one cent less of a limit refuses with detail max_amount", async () => {
    const { key } = await agentWith(limit({ max_amount: "20.00" }));
    expect((await purchase(key)).reply).toMatchObject({ status: 200, body: { verified: true } });
    expect((await h.call("PUT", "/v1/agents/buyer/mandate", { key, body: limit({ max_amount: "19.99" }) })).status).toBe(200);
    const { id, reply } = await purchase(key);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ verified: false, error: "Proof verification failed", reason: "mandate_violation", detail: "max_amount" });
    // Decided for good: the session reads failed, and the same challenge cannot be retried.
    expect((await readStatus(h, key, id)).body.status).toBe("failed");
    expect((await submitProof(h, key, id, sample.proof)).body).toMatchObject({ error: "Challenge already used", previous_status: "failed" });
  });

  test("six purchases of 20 EUR against max_total 100.00: the fifth reaches it exactly and verifies, the sixth is refused", async () => {
    const { key } = await agentWith(limit({ max_total: "100.00", period: "day" }));
    const replies = [];
    for (let i = 0; i < 6; i++) replies.push((await purchase(key)).reply);
    expect(replies.slice(0, 5).map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(replies[5]).toMatchObject({ status: 400, body: { reason: "mandate_violation", detail: "max_total" } });
    expect((await h.call("GET", "/v1/agents/buyer", { key })).body.spend[0]).toMatchObject({ total: "100", count: 5 });
  });

  test("the day rolls over at 00:00 UTC (injected clock)", async () => {
    const { key } = await agentWith(limit({ max_total: "40", period: "day" }));
    const midnight = Date.parse("2026-11-22T00:00:00Z");
    h.clock.advance(midnight - 1 - h.clock.now()); // 23:59:59.999
    expect((await purchase(key)).reply.status).toBe(200);
    expect((await purchase(key)).reply.status).toBe(200);
    expect((await purchase(key)).reply.body.detail).toBe("max_total");
    h.clock.advance(1); // 00:00:00.000, a new day
    expect((await purchase(key)).reply.status).toBe(200);
    const spend = (await h.call("GET", "/v1/agents/buyer", { key })).body.spend[0];
    expect(spend).toMatchObject({ period_start: "2026-11-22T00:00:00.000Z", total: "20", count: 1 });
    h.clock.advance(DAY / 2);
  });

  test("max_count, merchant, action, currency, validity: each refusal names its constraint", async () => {
    const cases: [unknown, string][] = [
      [{ limits: [{ action: "purchase", max_count: 0, period: "week" }] }, "max_count"],
      [{ merchants: ["shop-b"] }, "merchant"],
      [{ actions: ["refund"] }, "action"],
      [limit({ currency: "USD", max_amount: "100" }), "currency"],
      [{ valid_until: "2026-01-01T00:00:00Z" }, "validity"],
      [{ valid_from: "2030-01-01T00:00:00Z" }, "validity"],
    ];
    for (const [mandate, detail] of cases) {
      const { key } = await agentWith(mandate);
      expect((await purchase(key)).reply.body).toMatchObject({ reason: "mandate_violation", detail });
    }
  });

  test("PUT replaces and keeps the period's spend; DELETE leaves the agent unconstrained", async () => {
    const { key } = await agentWith(limit({ max_total: "40", period: "day" }));
    await purchase(key);
    await purchase(key);
    const widened = await h.call("PUT", "/v1/agents/buyer/mandate", {
      key,
      body: { merchants: ["shop-a", "shop-b"], ...limit({ max_total: "40", period: "day" }) },
    });
    expect(widened.status).toBe(200);
    expect(widened.body).toMatchObject({ agent_id: "buyer", spend: [{ total: "40", count: 2 }] });
    expect((await purchase(key)).reply.body.detail).toBe("max_total");
    const removed = await h.call("DELETE", "/v1/agents/buyer/mandate", { key });
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ agent_id: "buyer", mandate: null, mandate_hash: null, spend: [] });
    expect((await purchase(key)).reply.status).toBe(200);
    expect((await h.call("GET", "/v1/agents/buyer", { key })).body.mandate).toBeNull();
  });

  test("without a mandate nothing changes: verified, and no spend is shown", async () => {
    const { key, registered } = await agentWith();
    expect(registered).toMatchObject({ mandate: null, mandate_hash: null, mandate_jws: null, principal_key: null, spend: [] });
    expect((await purchase(key)).reply.status).toBe(200);
  });

  test("the signed receipt names the mandate and what the decision consumed, or the constraint it broke (checked with node:crypto)", async () => {
    const mandate = limit({ max_total: "30.00", period: "day" });
    const { key, registered } = await agentWith(mandate);
    const first = await purchase(key);
    const second = await purchase(key);
    expect(second.reply.body).toMatchObject({ reason: "mandate_violation", detail: "max_total" });

    const jwks = (await h.call("GET", "/.well-known/jwks.json")).body as { keys: Record<string, string>[] };
    const claimsOf = (receipt: string) => {
      const [header, payload, signature] = receipt.split(".") as [string, string, string];
      const jwk = jwks.keys.find((k) => k.kid === JSON.parse(Buffer.from(header, "base64url").toString()).kid)!;
      const publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x } as any, format: "jwk" });
      expect(verify(null, Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, "base64url"))).toBe(true);
      return JSON.parse(Buffer.from(payload, "base64url").toString());
    };
    const verifiedClaims = claimsOf(first.reply.body.receipt);
    expect(verifiedClaims.mandate).toEqual({
      hash: registered.mandate_hash,
      consumed: [{ limit: 0, period_start: new Date(Math.floor(h.clock.now() / DAY) * DAY).toISOString(), amount: "20", currency: "EUR" }],
      violation: null,
    });
    expect(verifiedClaims.checks.at(-1)).toBe("mandate");
    const refusedClaims = claimsOf(second.reply.body.receipt);
    expect(refusedClaims).toMatchObject({
      status: "failed",
      reason: "mandate_violation",
      mandate: { hash: registered.mandate_hash, consumed: [], violation: "max_total" },
    });
    expect(refusedClaims.checks).not.toContain("mandate");
    // The status endpoint answers with the same stored receipt.
    expect((await readStatus(h, key, first.id)).body.receipt).toBe(first.reply.body.receipt);
  });
});
