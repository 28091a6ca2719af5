// The per-key rate limit on challenge creation (docs/api.md, "Limits" and
// "Decisions"): 429 Rate limit exceeded with Retry-After and RateLimit-* headers, a
// sliding minute (issue 37) on the injectable clock; status checks and failed
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
    // 4 attempts counted at 00:15.5: one more fits once 1 + round(4 · (1 − e)) ≤ 3 in the next minute, after 01:22.5.
    expect(denied.body.message).toContain("retry in 68 s");
    expect(denied.headers.get("retry-after")).toBe("68");
    expect(denied.headers.get("ratelimit-limit")).toBe("3");
    expect(denied.headers.get("ratelimit-remaining")).toBe("0");
    expect(denied.headers.get("ratelimit-reset")).toBe("68");
    expect((await h.store.usage(keyIdOf(key)))!.challenges).toBe(3);
  });

  test("the sliding minute frees the limit as it moves on, not all at once at the next minute", async () => {
    const key = await h.newKey("limited", 3);
    for (let i = 0; i < 3; i++) await create(key);
    h.clock.advance(59_999);
    const refused = await create(key);
    expect(refused.status).toBe(429);
    // A fixed window admitted 3 more here, a millisecond later (6 in a minute); the sliding minute still holds them.
    h.clock.advance(1);
    const atBoundary = await create(key);
    expect(atBoundary.status).toBe(429);
    // The last minute's 4 attempts and this one: one more fits once 1 + 1 + round(4 · (1 − e)) ≤ 3, after 01:37.5.
    expect(atBoundary.headers.get("retry-after")).toBe("38");
    h.clock.advance(38_000);
    const later = await create(key);
    expect(later.status).toBe(200);
    expect(later.headers.get("ratelimit-remaining")).toBe("0");
  });

  test("a key keeping to its limit evenly is never refused, even at the minute's last instant", async () => {
    const key = await h.newKey("steady", 2);
    h.clock.advance(59_000);
    for (let minute = 0; minute < 4; minute++) {
      expect([(await create(key)).status, (await create(key)).status]).toEqual([200, 200]);
      h.clock.advance(60_000);
    }
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
