// The outbox in both stores: what a decision writes (only for subscribed
// endpoints of its own key, once however many decide), and the delivery
// claim (each delivery to one claimant at a time, the per-endpoint cap, the
// busy endpoints skipped, the lease).
import { describe, expect, test } from "bun:test";
import type { Store, WebhookEndpointRecord } from "../../src/store/interface";
import { eventsColumn } from "../../src/webhooks/events";
import { makeChallenge, makeKey, T0 } from "../store/contract";
import { storesUnderTest } from "../support/stores";

const endpoint = (keyId: string, id: string, events: ("session.verified" | "session.failed")[]): WebhookEndpointRecord => ({
  id,
  keyId,
  url: "https://hooks.example/in",
  events: eventsColumn(events),
  secret: "whsec_x",
  previousSecret: null,
  previousUntil: null,
  createdAt: T0,
  deletedAt: null,
});

async function decided(store: Store, keyId: string, status: "verified" | "failed") {
  const challenge = makeChallenge(keyId);
  await store.createChallenge(challenge, { windowStart: T0, limit: 0 });
  const outcome = await store.decideChallenge(challenge.id, {
    status,
    decidedAt: T0 + 1,
    confidence: status === "verified" ? 0.99 : null,
    reason: status === "verified" ? null : "proof_rejected",
  });
  expect(outcome.decided).toBe(true);
  return challenge.id;
}

const claim = (store: Store, token: string, now: number, options: { limit?: number; perEndpoint?: number; skip?: string[] } = {}) =>
  store.claimWebhookDeliveries({
    token,
    now,
    until: now + 10_000,
    limit: options.limit ?? 100,
    perEndpoint: options.perEndpoint ?? 100,
    skipEndpoints: options.skip ?? [],
  });

for (const { name, open } of storesUnderTest()) {
  describe(`webhook outbox (${name})`, () => {
    test("a decision writes one event per subscribed endpoint of its own key, in its transaction; none without one; a lost race writes none", async () => {
      const store = await open();
      const [a, b] = [makeKey(), makeKey()];
      await store.createKey(a);
      await store.createKey(b);
      await decided(store, a.id, "verified"); // no endpoint yet: no event
      expect(await store.listWebhookDeliveries({ limit: 100 })).toEqual([]);
      await store.createWebhookEndpoint(endpoint(a.id, "whep_a1", ["session.verified", "session.failed"]));
      await store.createWebhookEndpoint(endpoint(a.id, "whep_a2", ["session.verified"]));
      await store.createWebhookEndpoint(endpoint(b.id, "whep_b1", ["session.verified", "session.failed"]));
      const verified = await decided(store, a.id, "verified");
      const failed = await decided(store, a.id, "failed");
      const rows = await store.listWebhookDeliveries({ limit: 100 });
      expect(rows.map((r) => [r.sessionId, r.endpointId, r.type, r.state, r.keyId]).sort()).toEqual(
        [
          [verified, "whep_a1", "session.verified", "pending", a.id],
          [verified, "whep_a2", "session.verified", "pending", a.id],
          [failed, "whep_a1", "session.failed", "pending", a.id],
        ].sort(),
      );
      // Both of a verified decision's deliveries carry one event id (the webhook-id).
      expect(new Set(rows.filter((r) => r.sessionId === verified).map((r) => r.eventId)).size).toBe(1);
      expect(await store.listWebhookDeliveries({ keyId: b.id, limit: 100 })).toEqual([]);
      // Deciding it again changes nothing and writes nothing.
      const again = await store.decideChallenge(verified, { status: "failed", decidedAt: T0 + 2, confidence: null, reason: "proof_rejected" });
      expect(again.decided).toBe(false);
      expect(await store.listWebhookDeliveries({ limit: 100 })).toHaveLength(3);
      // A deleted endpoint gets no more, and its pending deliveries fail.
      expect(await store.deleteWebhookEndpoint(a.id, "whep_a1", T0 + 3)).toBe(true);
      expect(await store.deleteWebhookEndpoint(b.id, "whep_a2", T0 + 3)).toBe(false); // another key's
      await decided(store, a.id, "failed");
      const after = await store.listWebhookDeliveries({ limit: 100 });
      expect(after.filter((r) => r.endpointId === "whep_a1").map((r) => [r.state, r.lastError])).toEqual([
        ["failed", "endpoint deleted"],
        ["failed", "endpoint deleted"],
      ]);
      expect(after).toHaveLength(3);
    }, 60_000);

    test("claims: 12 concurrent claimants over 60 due deliveries take each exactly once; the cap per endpoint and the skipped endpoints hold; the lease is exclusive", async () => {
      const store = await open();
      const key = makeKey();
      await store.createKey(key);
      for (const id of ["whep_1", "whep_2", "whep_3"]) await store.createWebhookEndpoint(endpoint(key.id, id, ["session.failed"]));
      for (let i = 0; i < 20; i++) await decided(store, key.id, "failed");
      const now = T0 + 10;
      expect(await claim(store, "skipping", now, { skip: ["whep_1", "whep_2", "whep_3"] })).toEqual([]);
      const capped = await claim(store, "capped", now, { perEndpoint: 2, skip: ["whep_3"] });
      expect(capped.map((d) => d.endpointId).sort()).toEqual(["whep_1", "whep_1", "whep_2", "whep_2"]);
      const claims = await Promise.all(Array.from({ length: 12 }, (_, i) => claim(store, `t${i}`, now, { limit: 8 })));
      const all = [...capped, ...claims.flat()].map((d) => `${d.eventId}/${d.endpointId}`);
      expect(all).toHaveLength(60);
      expect(new Set(all).size).toBe(60);
      expect(await claim(store, "late", now + 1)).toEqual([]); // all leased
      // Only the holder records an attempt; once recorded, the delivery is free of its lease.
      const [first] = capped;
      const outcome = { state: "pending" as const, attempts: 1, nextAt: now + 2_000, status: 500, error: "HTTP 500", at: now };
      expect(await store.finishWebhookDelivery(first!.eventId, first!.endpointId, "not-the-holder", outcome)).toBe(false);
      expect(await store.finishWebhookDelivery(first!.eventId, first!.endpointId, "capped", outcome)).toBe(true);
      expect(await claim(store, "early", now + 1_999)).toEqual([]);
      expect((await claim(store, "due", now + 2_000)).map((d) => [d.eventId, d.attempts])).toEqual([[first!.eventId, 1]]);
      // A lease that ran out (its node died) is claimed again.
      const expired = await claim(store, "after-lease", now + 10_001);
      expect(expired.length).toBe(59);
    }, 60_000);

    test("the body is fixed by the first attempt; redeliver makes an event pending again, due now, for its key only", async () => {
      const store = await open();
      const key = makeKey();
      await store.createKey(key);
      await store.createWebhookEndpoint(endpoint(key.id, "whep_1", ["session.verified"]));
      await decided(store, key.id, "verified");
      const [d] = await claim(store, "t", T0 + 5);
      expect(d!.payload).toBeNull();
      const failed = { state: "failed" as const, attempts: 30, nextAt: T0 + 5, status: null, error: "timeout", at: T0 + 5 };
      expect(await store.finishWebhookDelivery(d!.eventId, d!.endpointId, "t", { ...failed, payload: '{"a":1}' })).toBe(true);
      expect(await store.redeliverWebhook(d!.eventId, "another-key", T0 + 6)).toBe(0);
      expect(await store.redeliverWebhook(d!.eventId, key.id, T0 + 6)).toBe(1);
      const [again] = await claim(store, "t2", T0 + 6);
      expect([again!.eventId, again!.attempts, again!.payload, again!.createdAt]).toEqual([d!.eventId, 0, '{"a":1}', T0 + 6]);
      expect(await store.redeliverWebhook(d!.eventId, key.id, T0 + 7)).toBe(0); // leased now: not twice at once
      expect(await store.oldestPendingWebhook()).toBe(T0 + 6);
      // A later attempt's body does not replace the first.
      expect(await store.finishWebhookDelivery(d!.eventId, d!.endpointId, "t2", { ...failed, payload: '{"a":2}' })).toBe(true);
      expect(await store.oldestPendingWebhook()).toBeNull();
      expect(await store.redeliverWebhook(d!.eventId, key.id, T0 + 8)).toBe(1);
      expect((await claim(store, "t3", T0 + 8))[0]!.payload).toBe('{"a":1}');
      // The purge keeps what is pending or finished since `before`, and removes the rest with its event.
      expect(await store.purgeWebhooks(T0 + 100)).toBe(0);
      await store.finishWebhookDelivery(d!.eventId, d!.endpointId, "t3", { ...failed, state: "delivered", at: T0 + 9 });
      expect(await store.purgeWebhooks(T0 + 9)).toBe(0);
      expect(await store.purgeWebhooks(T0 + 10)).toBe(1);
      expect(await store.listWebhookDeliveries({ limit: 10 })).toEqual([]);
      expect(await store.redeliverWebhook(d!.eventId, key.id, T0 + 11)).toBe(0);
    }, 60_000);
  });
}
