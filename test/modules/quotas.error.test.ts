// Issue 11, item 10: every row a key can make the service write is bounded.
// Agent registrations: a per-key rate (default 1000/min, settable per key)
// and a cap on the agents a key holds; idempotency records only for requests
// that changed or decided something. Every case on both stores.
import { beforeEach, describe, expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { observed } from "../support/contract";
import { DEFAULT_AGENT_RATE_LIMIT } from "../../src/modules/agents/service";
import { createHarness, BASE, type Harness } from "../support/harness";
import { storesUnderTest } from "../support/stores";

const keyIdOf = (key: string) => key.split("_")[1]!;

for (const { name, open } of storesUnderTest()) {
  describe(`write quotas (${name})`, () => {
    let h: Harness;
    let key: string;
    beforeEach(async () => {
      h = await createHarness(await open());
      key = await h.newKey("quota", 0);
    });

    const register = (app: { handle(r: Request): Promise<Response> }, agentId: string) =>
      app.handle(
        new Request(`${BASE}/v1/agents`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify({ agent_id: agentId, identity_commitment: "5" }),
        }),
      );

    test("agent registrations: the default is 1000 per minute, then 429 with Retry-After until one more fits the sliding minute", async () => {
      expect(DEFAULT_AGENT_RATE_LIMIT).toBe(1000);
      const app = observed(createApp({ ...h.deps, limits: { defaultAgentRateLimit: 3 } }));
      h.clock.advance(20_000);
      for (let i = 0; i < 3; i++) expect((await register(app, `a${i}`)).status).toBe(201);
      const refused = await register(app, "a3");
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as any).error).toBe("Rate limit exceeded");
      // 4 attempts counted at 00:20: one more fits once 1 + round(4 · (1 − e)) ≤ 3 in the next minute, after 01:22.5.
      expect(refused.headers.get("retry-after")).toBe("63");
      expect(await h.store.getAgent(keyIdOf(key), "a3")).toBeNull();
      h.clock.advance(63_000);
      expect((await register(app, "a3")).status).toBe(201);
    });

    test("agent registrations across a minute boundary: the limit spent in the last second of a minute is not spent again in the first of the next", async () => {
      const app = observed(createApp({ ...h.deps, limits: { defaultAgentRateLimit: 3 } }));
      h.clock.advance(59_500);
      for (let i = 0; i < 3; i++) expect((await register(app, `a${i}`)).status).toBe(201);
      // 00:01:00.5: a fixed window started afresh here and took 3 more (6 in one second).
      h.clock.advance(1_000);
      const refused = await register(app, "b0");
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      // Spread evenly, the limit holds: one more once a third of the sliding minute has left the last one.
      h.clock.advance(Number(refused.headers.get("retry-after")) * 1000);
      expect((await register(app, "b1")).status).toBe(201);
    });

    test("the per-key setting overrides the default, 0 = unlimited for that key", async () => {
      const app = observed(createApp({ ...h.deps, limits: { defaultAgentRateLimit: 1 } }));
      await h.store.setAgentRateLimit(keyIdOf(key), 2);
      expect((await register(app, "a")).status).toBe(201);
      expect((await register(app, "b")).status).toBe(201);
      expect((await register(app, "c")).status).toBe(429);
      await h.store.setAgentRateLimit(keyIdOf(key), 0);
      for (let i = 0; i < 5; i++) expect((await register(app, `u${i}`)).status).toBe(201);
    });

    test("a key holds at most MAX_AGENTS_PER_KEY agents (revoked ones too): 429 Too many agents", async () => {
      const app = observed(createApp({ ...h.deps, limits: { maxAgentsPerKey: 2 } }));
      expect((await register(app, "a")).status).toBe(201);
      expect((await register(app, "b")).status).toBe(201);
      const refused = await register(app, "c");
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as any).error).toBe("Too many agents");
      expect(await h.store.getAgent(keyIdOf(key), "c")).toBeNull();
    });

    test("idempotency: a 404 for an unknown challenge is not stored; a decision is", async () => {
      for (let i = 0; i < 5; i++) {
        const response = await h.call("POST", "/v1/verify/proof", {
          key,
          body: { challenge_id: `ch_unknown${i}`, proof: "p" },
          headers: { "idempotency-key": `idem-${i}` },
        });
        expect(response.status).toBe(404);
      }
      // Nothing was kept: the same idempotency key with another body is a fresh request, not a 422.
      const reused = await h.call("POST", "/v1/verify/proof", {
        key,
        body: { challenge_id: "ch_other", proof: "p" },
        headers: { "idempotency-key": "idem-0" },
      });
      expect(reused.status).toBe(404);
      expect(await h.store.purgeIdempotency(Number.MAX_SAFE_INTEGER)).toBe(0);

      // A decided verification (failed) is kept and replayed.
      expect((await h.call("POST", "/v1/agents", { key, body: { agent_id: "agent", identity_commitment: "5" } })).status).toBe(201);
      const id = (await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "agent", action: "buy" } })).body.challenge_id;
      const first = await h.call("POST", "/v1/verify/proof", { key, body: { challenge_id: id, proof: "p" }, headers: { "idempotency-key": "decided" } });
      expect(first.status).toBe(400);
      const again = await h.call("POST", "/v1/verify/proof", { key, body: { challenge_id: id, proof: "p" }, headers: { "idempotency-key": "decided" } });
      expect(again.headers.get("idempotent-replayed")).toBe("true");
      expect(await h.store.purgeIdempotency(Number.MAX_SAFE_INTEGER)).toBe(1);
    });
  });
}
