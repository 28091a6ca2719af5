// The pure parts: the backoff schedule, the event body, the subscriptions column.
import { describe, expect, test } from "bun:test";
import { DEFAULT_SCHEDULE, nextAttemptAt, retryDelay } from "../../src/webhooks/backoff";
import { eventPayload, eventsColumn, eventsOf, subscribedPattern } from "../../src/webhooks/events";
import { makeChallenge } from "../store/contract";

describe("backoff", () => {
  test("starts at ≤ 5 s, doubles with jitter within [½, 1], is capped at an hour", () => {
    expect(retryDelay(DEFAULT_SCHEDULE, 1, 1)).toBe(2_000);
    expect(retryDelay(DEFAULT_SCHEDULE, 1, 0)).toBe(1_000);
    expect([2, 3, 4, 5].map((n) => retryDelay(DEFAULT_SCHEDULE, n, 1))).toEqual([4_000, 8_000, 16_000, 32_000]);
    expect(retryDelay(DEFAULT_SCHEDULE, 30, 1)).toBe(3_600_000);
    expect(retryDelay(DEFAULT_SCHEDULE, 1_000, 0.5)).toBe(2_700_000);
  });

  test("a receiver down 30 s is tried again within 32 s of its return, whatever the jitter", () => {
    for (const random of [0, 0.3, 0.7, 1]) {
      let at = 0;
      for (let attempts = 1; at <= 30_000; attempts++) {
        const next = at + retryDelay(DEFAULT_SCHEDULE, attempts, random);
        if (next > 30_000) expect(next - 30_000).toBeLessThanOrEqual(32_000);
        at = next;
      }
    }
  });

  test("retries go on for more than 24 hours, then stop", () => {
    let at = 0;
    let attempts = 0;
    for (;;) {
      const next = nextAttemptAt(DEFAULT_SCHEDULE, 0, ++attempts, at, 1);
      if (next === null) break;
      at = next;
    }
    expect(at).toBeGreaterThanOrEqual(24 * 3_600_000);
    expect(attempts).toBeLessThan(60);
    expect(nextAttemptAt(DEFAULT_SCHEDULE, 0, 1, DEFAULT_SCHEDULE.giveUpAfterMs)).toBeNull();
  });
});

describe("events", () => {
  test("subscriptions are stored between commas, sorted, once each, and matched by LIKE pattern", () => {
    expect(eventsColumn(["session.verified", "session.failed", "session.verified"])).toBe(",session.failed,session.verified,");
    expect(eventsOf(",session.failed,session.verified,")).toEqual(["session.failed", "session.verified"]);
    expect(subscribedPattern("session.failed")).toBe("%,session.failed,%");
  });

  test("the body carries the decision's fields, the mandate's broken constraint, and the receipt", () => {
    const record = makeChallenge("k", {
      status: "failed",
      decidedAt: Date.UTC(2026, 10, 25, 12),
      reason: "mandate_violation",
      evidence: { checks: [], identityCommitment: "1", vkHash: "sha256:00", mandate: { hash: "sha256:01", consumed: [], violation: "max_total" } },
    });
    expect(eventPayload("session.failed", record, "eyJ.r.s")).toEqual({
      type: "session.failed",
      timestamp: "2026-11-25T12:00:00.000Z",
      data: {
        session_id: record.id,
        status: "failed",
        agent_id: "agent-1",
        action: "login",
        context: null,
        confidence: null,
        reason: "mandate_violation",
        detail: "max_total",
        decided_at: "2026-11-25T12:00:00.000Z",
        receipt: "eyJ.r.s",
      },
    });
    expect(() => eventPayload("session.verified", makeChallenge("k"), null)).toThrow("is not decided");
  });

  test("the body carries the context the proof bound, with its amount and currency copied out", () => {
    const context = { amount: "20.00", currency: "EUR", merchant: "shop-a" };
    const record = makeChallenge("k", {
      action: "purchase",
      context: JSON.stringify(context),
      status: "verified",
      decidedAt: Date.UTC(2026, 10, 25, 12),
      confidence: 0.99,
      evidence: { checks: ["proof"], identityCommitment: "1", vkHash: "sha256:00" },
    });
    const { data } = eventPayload("session.verified", record, null);
    expect(data).toMatchObject({ agent_id: "agent-1", action: "purchase", context, amount: "20.00", currency: "EUR" });
    // An agent session names no group.
    expect(data).not.toHaveProperty("group_id");
    expect(data).not.toHaveProperty("pseudonym");
    // A number stays a number; a context without them has neither member.
    const numeric = eventPayload("session.verified", { ...record, context: '{"amount":20,"currency":"EUR"}' }, null).data;
    expect([numeric.amount, numeric.currency]).toEqual([20, "EUR"]);
    const plain = eventPayload("session.verified", { ...record, context: '{"merchant":"shop-a"}' }, null).data;
    expect(plain).not.toHaveProperty("amount");
    expect(plain).not.toHaveProperty("currency");
  });

  test("a group session's event names the group and the pseudonym as its status does, never the commitment", () => {
    const group = { id: "grp_1", root: "123", pseudonym: "987654321" };
    const record = makeChallenge("k", {
      agentId: "",
      groupId: "grp_1",
      groupRoot: "123",
      groupDepth: 20,
      status: "verified",
      decidedAt: Date.UTC(2026, 10, 25, 12),
      confidence: 0.9,
      evidence: { checks: ["proof"], identityCommitment: null, vkHash: "sha256:00", group },
    });
    const { data } = eventPayload("session.verified", record, null);
    expect(data).toMatchObject({ agent_id: "987654321", group_id: "grp_1", pseudonym: "987654321" });
    expect(JSON.stringify(data)).not.toContain("identity_commitment");
    // A failed proof gave no pseudonym: the group is named, the pseudonym is null, agent_id "".
    const failed = eventPayload(
      "session.failed",
      { ...record, status: "failed", confidence: null, reason: "invalid_proof", evidence: { ...record.evidence!, group: { ...group, pseudonym: null } } },
      null,
    ).data;
    expect(failed).toMatchObject({ agent_id: "", group_id: "grp_1", pseudonym: null });
  });
});
