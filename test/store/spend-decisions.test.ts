// A budget spend's deciding transaction (src/store/decisions/, decideSpend)
// on both stores, without proofs: the refusals in their order, each
// consuming nothing (no nullifier, no note), the accepted spend recording
// both with its evidence, and a challenge decided or expired meanwhile
// left as it is. Groth16 runs before this transaction; here the decision
// comes in as a verified proof would leave it.
import { beforeAll, describe, expect, test } from "bun:test";
import { NOTES_GENESIS_LEAF } from "../../src/budgets/encoding";
import { BUDGET_CIRCUIT_ID } from "../../src/circuits/budget";
import { ManualClock } from "../../src/clock";
import { eventsColumn } from "../../src/webhooks/events";
import type { ChallengeRecord } from "../../src/store/challenges/records";
import type { Decision, SpendScope } from "../../src/store/decisions/records";
import { createHarness, type Harness } from "../support/harness";
import { storesUnderTest } from "../support/stores";

const NOW = Date.UTC(2026, 10, 28, 12, 0);
const TODAY = Math.floor(NOW / 86_400_000);

for (const { name, open } of storesUnderTest()) {
  describe(`decideSpend on ${name}`, () => {
    let h: Harness;
    let keyId: string;
    let root: string;
    let n = 0;

    beforeAll(async () => {
      h = await createHarness(await open(), { clock: new ManualClock(NOW) });
      const owner = await h.newKey("owner");
      keyId = owner.split("_")[1]!;
      expect((await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "wallet", budget: true } })).status).toBe(201);
      const enrolled = await h.call("POST", "/v1/groups/wallet/enrolments", {
        key: owner,
        body: { identity_commitment: "99", mandate: { limits: [{ currency: "EUR", max_amount: "30.00" }], valid_until: "2027-01-01T00:00:00Z" } },
      });
      root = enrolled.body.merkle_tree_root;
      // An endpoint subscribed to both event types: each decision's event is written in its transaction (the outbox).
      await h.store.createWebhookEndpoint({
        id: `wh_${name}`,
        keyId,
        url: "https://hooks.example/zkagent",
        events: eventsColumn(["session.verified", "session.failed"]),
        secret: "whsec_test",
        previousSecret: null,
        previousUntil: null,
        createdAt: NOW,
        deletedAt: null,
      });
    });
    const eventsOf = async (sessionId: string) =>
      (await h.store.listWebhookDeliveries({ keyId, limit: 1000 })).filter((d) => d.sessionId === sessionId).map((d) => d.type);

    /** A pending budget challenge of `day`, live until `expiresAt`. */
    async function pending(day = TODAY, expiresAt = NOW + 300_000): Promise<ChallengeRecord> {
      const c: ChallengeRecord = {
        id: `ch_spend_${name}_${n++}`,
        keyId,
        agentId: "",
        action: "purchase",
        context: null,
        nonce: "ab".repeat(31),
        createdAt: NOW - 1_000,
        expiresAt,
        status: "pending",
        decidedAt: null,
        confidence: null,
        reason: null,
        circuitId: BUDGET_CIRCUIT_ID,
        groupId: "wallet",
        groupRoot: root,
        groupDepth: 0,
        budget: { payee: "https://shop.example", amount: "100", currency: "EUR", periods: { day: String(day), week: "0", month: "0", minute: "0" }, ctx: "1" },
      };
      expect((await h.store.createChallenge(c, { windowStart: 0, limit: 0 })).created).toBe(true);
      return c;
    }

    const spend = { nullifier: "4242", commitment: "777", amount: "1.00", currency: "EUR", payee: "https://shop.example" };
    const verified: Decision = {
      status: "verified",
      decidedAt: NOW,
      confidence: 0.99,
      reason: null,
      evidence: { checks: ["challenge_owner", "challenge_unexpired", "challenge_pending", "proof"], identityCommitment: null, vkHash: "sha256:00", spend },
    };
    const scope = (over: Partial<SpendScope> = {}): SpendScope => ({
      groupId: "wallet",
      enrolmentRoot: root,
      notesRoot: NOTES_GENESIS_LEAF.toString(),
      nullifier: spend.nullifier,
      commitment: spend.commitment,
      day: TODAY,
      window: 36,
      ...over,
    });
    const size = () => h.store.notesSize("wallet");

    test("refusals in order, each failing the challenge with its reason and consuming nothing", async () => {
      const cases: [Partial<SpendScope>, string, number][] = [
        [{ enrolmentRoot: "123" }, "not_member", 0],
        [{ notesRoot: "123" }, "stale_notes_root", 1],
        [{ day: TODAY - 2 }, "period_ended", 2],
        // The first refusal wins: a stale root is not_member before it is anything else.
        [{ enrolmentRoot: "123", notesRoot: "123", day: 0 }, "not_member", 0],
      ];
      for (const [over, reason, passed] of cases) {
        const c = await pending(over.day ?? TODAY);
        const out = await h.store.decideSpend(c.id, verified, scope(over));
        expect(out.decided).toBe(true);
        expect(out.record).toMatchObject({ status: "failed", reason, confidence: null, receipt: null });
        expect(out.record!.evidence!.spend).toBeNull();
        expect(out.record!.evidence!.checks.slice(4)).toEqual(["group_root", "notes_root", "budget_period"].slice(0, passed));
        expect(await size()).toBe(1);
      }
    });

    test("the accepted spend records its nullifier and note, every check listed; the same nullifier again is already_spent", async () => {
      const c = await pending(TODAY - 1); // yesterday's challenge still counts
      const out = await h.store.decideSpend(c.id, verified, scope({ day: TODAY - 1 }));
      expect(out.record).toMatchObject({ status: "verified", reason: null, confidence: 0.99 });
      expect(out.record!.evidence).toMatchObject({
        spend,
        checks: [...verified.evidence!.checks, "group_root", "notes_root", "budget_period", "nullifier_unspent"],
      });
      expect(await h.store.budgetNotes("wallet", 1, 10)).toEqual([{ index: 1, commitment: "777" }]);
      expect(await eventsOf(c.id)).toEqual(["session.verified"]);
      const again = await pending();
      const out2 = await h.store.decideSpend(again.id, verified, scope({ commitment: "778" }));
      expect(out2.record).toMatchObject({ status: "failed", reason: "already_spent" });
      expect(await eventsOf(again.id)).toEqual(["session.failed"]);
      expect(await size()).toBe(2);
    });

    test("a challenge decided or expired meanwhile is left as it is, and nothing is consumed", async () => {
      const c = await pending();
      await h.store.decideSpend(c.id, verified, scope({ notesRoot: "1" }));
      const decided = await h.store.decideSpend(c.id, verified, scope({ nullifier: "5151", commitment: "888" }));
      expect(decided).toMatchObject({ decided: false, record: { status: "failed", reason: "stale_notes_root" } });
      const late = await pending(TODAY, NOW - 1);
      expect(await h.store.decideSpend(late.id, verified, scope({ nullifier: "5151", commitment: "888" }))).toMatchObject({
        decided: false,
        record: { status: "pending" },
      });
      expect(await h.store.decideSpend("ch_nobody", verified, scope({ nullifier: "5151" }))).toEqual({ decided: false, record: null });
      expect(await size()).toBe(2);
      expect(await eventsOf(late.id)).toEqual([]);
      // 5151 was never consumed: a live challenge spends it.
      const live = await pending();
      expect((await h.store.decideSpend(live.id, verified, scope({ nullifier: "5151", commitment: "888" }))).record!.status).toBe("verified");
    });
  });
}
