// The store contract for verification claims (issue 18: claimChallenge,
// releaseClaim), run by contract.ts on both stores.
import { describe, expect, test } from "bun:test";
import type { Decision, Store } from "../../src/store/interface";
import { makeChallenge, makeKey, T0 } from "./contract";

export function claimContract(current: () => Store): void {
  const unlimited = { windowStart: T0, limit: 0 };
  const LEASE = 10_000;
  const claimAt = (token: string, now = T0 + 1_000) => ({ token, now, until: now + LEASE });
  const failed = (at = T0 + 2_000): Decision => ({ status: "failed", decidedAt: at, confidence: null, reason: "proof_rejected" });

  async function pendingChallenge() {
    const store = current();
    const key = makeKey();
    await store.createKey(key);
    const challenge = makeChallenge(key.id);
    await store.createChallenge(challenge, unlimited);
    return { store, key, challenge };
  }

  describe("issue 18: verification claims", () => {
    test("a pending challenge is claimed once; a second claimant sees it pending, and the record is unchanged", async () => {
      const { store, challenge } = await pendingChallenge();
      expect(await store.claimChallenge(challenge.id, claimAt("a"))).toEqual({ claimed: true });
      expect(await store.claimChallenge(challenge.id, claimAt("b", T0 + 5_000))).toEqual({ claimed: false, record: challenge });
      // The claimant itself cannot claim again either: one verification at a time.
      expect((await store.claimChallenge(challenge.id, claimAt("a", T0 + 5_000))).claimed).toBe(false);
      expect(await store.getChallenge(challenge.id)).toEqual(challenge);
    });

    test("a lapsed claim (its node died) is taken over after the lease, not before", async () => {
      const { store, challenge } = await pendingChallenge();
      expect((await store.claimChallenge(challenge.id, claimAt("dead"))).claimed).toBe(true);
      expect((await store.claimChallenge(challenge.id, claimAt("next", T0 + 1_000 + LEASE))).claimed).toBe(false);
      expect((await store.claimChallenge(challenge.id, claimAt("next", T0 + 1_001 + LEASE))).claimed).toBe(true);
    });

    test("releaseClaim frees it at once, only for its own token", async () => {
      const { store, challenge } = await pendingChallenge();
      expect((await store.claimChallenge(challenge.id, claimAt("a"))).claimed).toBe(true);
      await store.releaseClaim(challenge.id, "someone-else");
      expect((await store.claimChallenge(challenge.id, claimAt("b"))).claimed).toBe(false);
      await store.releaseClaim(challenge.id, "a");
      expect((await store.claimChallenge(challenge.id, claimAt("b"))).claimed).toBe(true);
    });

    test("the claim gates no decision: a claimed challenge is decided by anyone, once, and is then claimed by nobody", async () => {
      const { store, challenge } = await pendingChallenge();
      expect((await store.claimChallenge(challenge.id, claimAt("a"))).claimed).toBe(true);
      expect((await store.decideChallenge(challenge.id, failed())).decided).toBe(true);
      const after = await store.claimChallenge(challenge.id, claimAt("b", T0 + 1_000 + 2 * LEASE));
      expect(after.claimed).toBe(false);
      expect(after.claimed === false && after.record?.status).toBe("failed");
      // The claim is not audited: one entry for the creation, one for the decision.
      expect((await store.listAudit({ limit: 10 })).map((entry) => entry.event)).toEqual(["challenge.created", "verification.decided"]);
    });

    test("past expiry nothing is claimed; an unknown id or one with NUL → record null", async () => {
      const { store, challenge } = await pendingChallenge();
      const late = await store.claimChallenge(challenge.id, claimAt("a", challenge.expiresAt + 1));
      expect(late).toEqual({ claimed: false, record: challenge });
      expect((await store.claimChallenge(challenge.id, claimAt("a", challenge.expiresAt))).claimed).toBe(true);
      expect(await store.claimChallenge("ch_missing", claimAt("a"))).toEqual({ claimed: false, record: null });
      expect(await store.claimChallenge("ch_\u0000", claimAt("a"))).toEqual({ claimed: false, record: null });
      await store.releaseClaim("ch_\u0000", "a");
    });

    test("50 concurrent claimants of one challenge: exactly one holds it", async () => {
      const { store, challenge } = await pendingChallenge();
      const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.claimChallenge(challenge.id, claimAt(`t${i}`))));
      expect(results.filter((r) => r.claimed)).toHaveLength(1);
    });
  });
}
