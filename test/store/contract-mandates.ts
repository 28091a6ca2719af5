// The store contract for mandates (setMandate, readSpend, decideChallenge with
// a mandate scope), run by contract.ts on both stores.
import { describe, expect, test } from "bun:test";
import canonicalize from "canonicalize";
import { createHash } from "node:crypto";
import { MANDATE_VIOLATION, storedMandate } from "../../src/mandates/enforce";
import type { SpendKey } from "../../src/mandates/evaluate";
import { periodStart } from "../../src/mandates/period";
import type { Mandate } from "../../src/mandates/schema";
import type { ChallengeRecord, Decision, Store } from "../../src/store/interface";
import { makeAgent, makeChallenge, makeKey, T0 } from "./contract";

export function mandateContract(current: () => Store): void {
  // Inside the function: contract.ts imports this file, so its exports are not ready at module load.
  const unlimited = { windowStart: T0, limit: 0 };
  const daily: Mandate = { limits: [{ action: "purchase", currency: "EUR", max_amount: "50.00", max_total: "100.00", max_count: 4, period: "day" }] };
  const dayKey: SpendKey = { action: "purchase", currency: "EUR", period: "day", periodStart: periodStart("day", T0) };
  const verified = (at = T0 + 1_000): Decision => ({ status: "verified", decidedAt: at, confidence: 0.99, reason: null });
  const scopeOf = (challenge: ChallengeRecord) => ({
    keyId: challenge.keyId,
    agentId: challenge.agentId,
    action: challenge.action,
    context: challenge.context,
  });
  const purchase = (amount: string | number, currency = "EUR") => canonicalize({ amount, currency, merchant: "shop-a" }) as string;

  describe("mandates", () => {
    async function agentWith(mandate: Mandate | null) {
      const store = current();
      const key = makeKey();
      await store.createKey(key);
      const agent = makeAgent(key.id, mandate ? storedMandate(mandate) : {});
      await store.registerAgent(agent);
      let n = 0;
      /** A new pending purchase challenge for the agent; decide it with `decide`. */
      const challenge = async (context: string | null, at = T0) => {
        const record = makeChallenge(key.id, { id: `ch_${++n}_${crypto.randomUUID()}`, action: "purchase", context, createdAt: at, expiresAt: at + 300_000 });
        await store.createChallenge(record, unlimited);
        return record;
      };
      const decide = async (context: string | null, at = T0 + 1_000) => {
        const record = await challenge(context, at - 1_000);
        return store.decideChallenge(record.id, verified(at), scopeOf(record));
      };
      return { store, key, agent, challenge, decide };
    }

    test("registerAgent and getAgent round-trip the principal key and the mandate", async () => {
      const store = current();
      const key = makeKey();
      await store.createKey(key);
      const agent = makeAgent(key.id, { principalKey: "p".repeat(43), mandate: canonicalize(daily)!, mandateJws: "h.p.s", mandateIat: 1_790_000_000 });
      await store.registerAgent(agent);
      expect(await store.getAgent(key.id, agent.agentId)).toEqual(agent);
    });

    test("setMandate sets, replaces and removes; unknown and revoked agents are reported", async () => {
      const { store, key, agent } = await agentWith(null);
      const first = await store.setMandate(key.id, agent.agentId, storedMandate(daily));
      expect(first).toEqual({ outcome: "set", agent: { ...agent, mandate: canonicalize(daily)! } });
      const removed = await store.setMandate(key.id, agent.agentId, null);
      expect(removed).toEqual({ outcome: "set", agent });
      expect((await store.setMandate(key.id, "nobody", storedMandate({}))).outcome).toBe("not_found");
      await store.revokeAgent(key.id, agent.agentId, T0 + 5);
      expect((await store.setMandate(key.id, agent.agentId, storedMandate({}))).outcome).toBe("revoked");
    });

    test("an agent with a principal takes only signed mandates, each issued after the last, or the same JWS again", async () => {
      const store = current();
      const key = makeKey();
      await store.createKey(key);
      const agent = makeAgent(key.id, { principalKey: "p".repeat(43), ...storedMandate({}, { jws: "jws-100", iat: 100 }) });
      await store.registerAgent(agent);
      expect((await store.setMandate(key.id, agent.agentId, storedMandate(daily))).outcome).toBe("signature_required");
      expect((await store.setMandate(key.id, agent.agentId, null)).outcome).toBe("signature_required");
      expect((await store.setMandate(key.id, agent.agentId, storedMandate(daily, { jws: "jws-99", iat: 99 }))).outcome).toBe("superseded");
      expect((await store.setMandate(key.id, agent.agentId, storedMandate(daily, { jws: "jws-100b", iat: 100 }))).outcome).toBe("superseded");
      expect((await store.setMandate(key.id, agent.agentId, storedMandate({}, { jws: "jws-100", iat: 100 }))).outcome).toBe("set");
      const newer = await store.setMandate(key.id, agent.agentId, storedMandate(daily, { jws: "jws-101", iat: 101 }));
      expect(newer.outcome).toBe("set");
      expect(newer.agent).toMatchObject({ mandate: canonicalize(daily), mandateJws: "jws-101", mandateIat: 101 });
      expect((await store.getAgent(key.id, agent.agentId))?.mandateJws).toBe("jws-101");
    });

    test("readSpend is zero before anything is counted", async () => {
      const { store, key, agent } = await agentWith(daily);
      expect(await store.readSpend(key.id, agent.agentId, [dayKey, { ...dayKey, period: "week" }])).toEqual([
        { total: "0", count: 0 },
        { total: "0", count: 0 },
      ]);
    });

    test("verified decisions add to the period total; the one reaching max_total verifies, the next fails with mandate_violation", async () => {
      const { store, key, agent, decide } = await agentWith(daily);
      const hash = `sha256:${createHash("sha256").update(canonicalize(daily)!).digest("hex")}`;
      const first = await decide(purchase("50.00"));
      expect(first).toMatchObject({ decided: true, record: { status: "verified", reason: null, confidence: 0.99 } });
      expect(first.decided && first.mandate).toEqual({
        hash,
        consumed: [{ limit: 0, period_start: new Date(dayKey.periodStart).toISOString(), amount: "50.00", currency: "EUR" }],
        violation: null,
      });
      expect((await decide(purchase(49.99))).record?.status).toBe("verified");
      expect(await store.readSpend(key.id, agent.agentId, [dayKey])).toEqual([{ total: "99.99", count: 2 }]);
      expect((await decide(purchase("0.01"))).record?.status).toBe("verified"); // exactly 100.00

      const over = await decide(purchase("0.01"));
      expect(over).toMatchObject({ decided: true, record: { status: "failed", reason: MANDATE_VIOLATION, confidence: null } });
      expect(over.decided && over.mandate).toEqual({ hash, consumed: [], violation: "max_total" });
      // A refused decision consumes nothing and counts as failed.
      expect(await store.readSpend(key.id, agent.agentId, [dayKey])).toEqual([{ total: "100.00", count: 3 }]);
      expect(await store.usage(key.id)).toEqual({ challenges: 4, verified: 3, failed: 1 });
      const audit = await store.listAudit({ keyId: key.id, limit: 100 });
      expect(audit.at(-1)).toMatchObject({ event: "verification.decided", result: "failed", reason: MANDATE_VIOLATION });
    });

    test("the next UTC day starts from zero", async () => {
      const { store, key, agent, decide } = await agentWith(daily);
      const nextDay = periodStart("day", T0) + 86_400_000;
      expect((await decide(purchase("50.00"), nextDay - 1)).record?.status).toBe("verified");
      expect((await decide(purchase("50.00"), nextDay - 1)).record?.status).toBe("verified");
      expect((await decide(purchase("0.01"), nextDay - 1)).record?.reason).toBe(MANDATE_VIOLATION);
      expect((await decide(purchase("50.00"), nextDay)).record?.status).toBe("verified");
      expect(await store.readSpend(key.id, agent.agentId, [dayKey, { ...dayKey, periodStart: nextDay }])).toEqual([
        { total: "100.00", count: 2 },
        { total: "50.00", count: 1 },
      ]);
    });

    test("a receipt signed before the decision is not stored when a mandate was applied (its claims would lack the mandate)", async () => {
      const { store, challenge } = await agentWith(daily);
      const within = await challenge(purchase("10"));
      const decided = await store.decideChallenge(within.id, { ...verified(), receipt: "jws.presigned" }, scopeOf(within));
      expect(decided).toMatchObject({ decided: true, record: { status: "verified", receipt: null } });
      expect(decided.decided && decided.mandate?.violation).toBeNull();
      const over = await challenge(purchase("1000"));
      const refused = await store.decideChallenge(over.id, { ...verified(), receipt: "jws.presigned" }, scopeOf(over));
      expect(refused).toMatchObject({ decided: true, record: { status: "failed", reason: "mandate_violation", receipt: null } });
    });

    test("only verified decisions that stand count: failures and lost races leave the totals alone", async () => {
      const { store, key, agent, challenge } = await agentWith(daily);
      const failing = await challenge(purchase("10"));
      const failed = await store.decideChallenge(
        failing.id,
        { status: "failed", decidedAt: T0 + 1, confidence: null, reason: "proof_rejected" },
        scopeOf(failing),
      );
      expect(failed).toMatchObject({ decided: true, record: { reason: "proof_rejected" }, mandate: null });
      const raced = await challenge(purchase("10"));
      expect((await store.decideChallenge(raced.id, verified(), scopeOf(raced))).decided).toBe(true);
      expect((await store.decideChallenge(raced.id, verified(), scopeOf(raced))).decided).toBe(false);
      const expired = await challenge(purchase("10"));
      expect((await store.decideChallenge(expired.id, verified(T0 + 300_001), scopeOf(expired))).decided).toBe(false);
      expect(await store.readSpend(key.id, agent.agentId, [dayKey])).toEqual([{ total: "10", count: 1 }]);
    });

    test("without a scope, or without a mandate, a decision is not checked", async () => {
      const { store, challenge } = await agentWith(daily);
      const unscoped = await challenge(purchase("500"));
      expect(await store.decideChallenge(unscoped.id, verified())).toMatchObject({ decided: true, record: { status: "verified" } });
      const free = await agentWith(null);
      const record = await free.challenge(purchase("500"));
      expect(await free.store.decideChallenge(record.id, verified(), scopeOf(record))).toMatchObject({
        decided: true,
        mandate: null,
        record: { status: "verified" },
      });
    });

    test("replacing the mandate keeps the period's totals: editing never hands out a fresh budget", async () => {
      const { store, key, agent, decide } = await agentWith(daily);
      expect((await decide(purchase("50.00"))).record?.status).toBe("verified");
      expect((await decide(purchase("50.00"))).record?.status).toBe("verified");
      await store.setMandate(key.id, agent.agentId, storedMandate({ ...daily, merchants: ["shop-a", "shop-b"] }));
      const after = await decide(purchase("1.00"));
      expect(after.decided && after.mandate?.violation).toBe("max_total");
    });

    test("max_count and the non-spend constraints decide failed with their detail", async () => {
      const { store, key, agent, decide } = await agentWith({ ...daily, merchants: ["shop-a"] });
      for (let i = 0; i < 4; i++) expect((await decide(purchase("1"))).record?.status).toBe("verified");
      const fifth = await decide(purchase("1"));
      expect(fifth.decided && fifth.mandate?.violation).toBe("max_count");
      await store.setMandate(key.id, agent.agentId, storedMandate({ merchants: ["shop-b"] }));
      const elsewhere = await decide(purchase("1"));
      expect(elsewhere.decided && elsewhere.mandate?.violation).toBe("merchant");
      expect(elsewhere.record).toMatchObject({ status: "failed", reason: MANDATE_VIOLATION });
    });

    test("concurrent decisions never push a total past its limit", async () => {
      const { store, key, agent, challenge } = await agentWith({ limits: [{ currency: "EUR", max_total: "100.00", period: "day" }] });
      const records = await Promise.all(Array.from({ length: 24 }, () => challenge(purchase("20.00"))));
      const results = await Promise.all(records.map((record) => store.decideChallenge(record.id, verified(), scopeOf(record))));
      const statuses = results.map((result) => result.record?.status);
      expect(statuses.filter((status) => status === "verified")).toHaveLength(5);
      expect(results.filter((result) => result.decided && result.mandate?.violation === "max_total")).toHaveLength(19);
      expect(await store.readSpend(key.id, agent.agentId, [{ ...dayKey, action: "" }])).toEqual([{ total: "100.00", count: 5 }]);
    });
  });
}
