// The per-key rate limit on challenge creation (docs/api.md, "Limits" and
// "Decisions"): 429 Rate limit exceeded with Retry-After and RateLimit-* headers, a
// fixed one-minute window on the injectable clock; status checks and failed
// verifications never consume it.
import { beforeEach, describe, expect, test } from "bun:test";
import { createHarness, type Harness } from "../support/harness";
import { keyIdOf, readStatus, requestChallenge, submitProof } from "./flow";

let h: Harness;
beforeEach(async () => {
  h = await createHarness(); // the ManualClock starts on a minute boundary
});

const create = (key: string) => h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "a", action: "x" } });

describe("rate limit 3 per minute", () => {
  test("three challenges pass with RateLimit headers counting down; the fourth is 429", async () => {
    const key = await h.newKey("limited", 3);
    for (const remaining of [2, 1, 0]) {
      const response = await create(key);
      expect(response.status).toBe(200);
      expect(response.headers.get("ratelimit-limit")).toBe("3");
      expect(response.headers.get("ratelimit-remaining")).toBe(String(remaining));
      expect(response.headers.get("ratelimit-reset")).toBe("60");
    }
    h.clock.advance(15_500);
    const denied = await create(key);
    expect(denied.status).toBe(429);
    expect(denied.body.error).toBe("Rate limit exceeded");
    expect(denied.body.message).toContain("45");
    expect(denied.headers.get("retry-after")).toBe("45");
    expect(denied.headers.get("ratelimit-limit")).toBe("3");
    expect(denied.headers.get("ratelimit-remaining")).toBe("0");
    expect(denied.headers.get("ratelimit-reset")).toBe("45");
    expect((await h.store.usage(keyIdOf(key)))!.challenges).toBe(3);
  });

  test("the next minute allows challenges again", async () => {
    const key = await h.newKey("limited", 3);
    for (let i = 0; i < 3; i++) await create(key);
    h.clock.advance(59_999);
    expect((await create(key)).status).toBe(429);
    h.clock.advance(1);
    const next = await create(key);
    expect(next.status).toBe(200);
    expect(next.headers.get("ratelimit-remaining")).toBe("2");
  });

  test("status checks and failed verifications never consume the limit", async () => {
    const key = await h.newKey("limited", 3);
    const first = await requestChallenge(h, key, "a", "x");
    for (let i = 0; i < 20; i++) expect((await readStatus(h, key, first.challenge_id)).status).toBe(200);
    expect((await submitProof(h, key, first.challenge_id, "garbage")).body.error).toBe("Proof verification failed");
    expect((await create(key)).status).toBe(200);
    expect((await create(key)).status).toBe(200);
    expect((await create(key)).status).toBe(429);
  });

  test("requests rejected before creation (400, 415) do not consume the limit", async () => {
    const key = await h.newKey("limited", 1);
    for (let i = 0; i < 5; i++) {
      expect((await h.call("POST", "/v1/verify/challenge", { key, body: {} })).status).toBe(400);
      expect((await h.call("POST", "/v1/verify/challenge", { key, body: "{}", headers: { "content-type": "text/plain" } })).status).toBe(415);
    }
    expect((await create(key)).status).toBe(200);
  });

  test("limits are per key: one key's exhaustion does not touch another's", async () => {
    const a = await h.newKey("a", 1);
    const b = await h.newKey("b", 1);
    expect((await create(a)).status).toBe(200);
    expect((await create(a)).status).toBe(429);
    expect((await create(b)).status).toBe(200);
  });

  test("limit 0 is unlimited and sends no RateLimit headers", async () => {
    const key = await h.newKey("unlimited", 0);
    for (let i = 0; i < 25; i++) expect((await create(key)).status).toBe(200);
    expect((await create(key)).headers.get("ratelimit-limit")).toBeNull();
  });
});
