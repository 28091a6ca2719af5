// The one behavioural suite for src/store/interface.ts. sqlite.test.ts and
// postgres.test.ts run it unchanged, so the two stores cannot drift apart.
// Each test gets a fresh, empty store from `open`.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import type {
  AgentRecord,
  ApiKeyRecord,
  ChallengeRecord,
  CreateChallengeResult,
  Decision,
  DecisionEvidence,
  SigningKeyRecord,
  Store,
} from "../../src/store/interface";
import { circuitContract } from "./contract-circuits";
import { claimContract } from "./contract-claims";
import { mandateContract } from "./contract-mandates";

// Realistic millisecond times, well past 2^31 so a 32-bit column would fail.
export const T0 = 1_760_000_000_000;
const MINUTE = 60_000;
const LIFETIME = 300_000;

export const makeKey = (overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id: `key_${crypto.randomUUID()}`,
  name: "test key",
  hash: "a".repeat(64),
  rateLimit: 0,
  createdAt: T0,
  revokedAt: null,
  ...overrides,
});

export const makeAgent = (keyId: string, overrides: Partial<AgentRecord> = {}): AgentRecord => ({
  keyId,
  agentId: "agent-1",
  identityCommitment: "1234567890123456789012345678901234567890",
  signingKey: null,
  signingKeyId: null,
  createdAt: T0,
  revokedAt: null,
  principalKey: null,
  mandate: null,
  mandateJws: null,
  mandateIat: null,
  ...overrides,
});

export const makeChallenge = (keyId: string, overrides: Partial<ChallengeRecord> = {}): ChallengeRecord => ({
  id: `ch_${crypto.randomUUID()}`,
  keyId,
  agentId: "agent-1",
  action: "login",
  context: null,
  nonce: crypto.randomUUID(),
  createdAt: T0,
  expiresAt: T0 + LIFETIME,
  status: "pending",
  decidedAt: null,
  confidence: null,
  reason: null,
  evidence: null,
  receipt: null,
  ...overrides,
});

let signingKeys = 0;
/** A signing key record; the store treats the key material as opaque text. */
export const makeSigningKey = (overrides: Partial<SigningKeyRecord> = {}): SigningKeyRecord => {
  const n = ++signingKeys;
  return {
    kid: `kid-${n}-${crypto.randomUUID()}`,
    publicJwk: JSON.stringify({ kty: "OKP", crv: "Ed25519", x: `x${n}` }),
    privateKey: `plain:private-${n}`,
    state: "active",
    createdAt: T0 + n,
    retiredAt: null,
    ...overrides,
  };
};

const unlimited = { windowStart: T0, limit: 0 };
const verified = (decidedAt = T0 + 1_000, confidence: number | null = 0.97): Decision => ({ status: "verified", decidedAt, confidence, reason: null });
const failed = (decidedAt = T0 + 1_000, reason: string | null = "Invalid proof"): Decision => ({ status: "failed", decidedAt, confidence: null, reason });

export function storeContract(name: string, open: () => Promise<Store>, cleanup?: () => Promise<void> | void): void {
  describe(`store contract: ${name}`, () => {
    let store: Store;
    let closed = false;

    beforeEach(async () => {
      store = await open();
      closed = false;
    });
    afterEach(async () => {
      if (!closed) await store.close();
      await cleanup?.();
    });

    /** A stored key plus one stored pending challenge on it. */
    async function keyWithChallenge(challenge: Partial<ChallengeRecord> = {}) {
      const key = makeKey();
      await store.createKey(key);
      const stored = makeChallenge(key.id, challenge);
      expect(await store.createChallenge(stored, unlimited)).toEqual({ created: true, used: 0 });
      return { key, challenge: stored };
    }

    describe("keys", () => {
      test("createKey/getKey round-trip every field; unknown id is null", async () => {
        const key = makeKey({ name: "Production — ключ 🔑", rateLimit: 120, createdAt: 8_640_000_000_000_000 });
        await store.createKey(key);
        expect(await store.getKey(key.id)).toEqual(key);
        expect(await store.getKey("key_missing")).toBeNull();
      });

      test("a key created already revoked keeps its revokedAt", async () => {
        const key = makeKey({ revokedAt: T0 + 5 });
        await store.createKey(key);
        expect((await store.getKey(key.id))?.revokedAt).toBe(T0 + 5);
      });

      test("createKey with an existing id rejects and keeps the original", async () => {
        const key = makeKey();
        await store.createKey(key);
        await expect(store.createKey({ ...key, name: "impostor" })).rejects.toThrow();
        expect((await store.getKey(key.id))?.name).toBe("test key");
      });

      test("listKeys returns every key ordered by createdAt, then id", async () => {
        const b = makeKey({ id: "key_b", createdAt: T0 + 10 });
        const a = makeKey({ id: "key_a", createdAt: T0 + 10 });
        const first = makeKey({ id: "key_z", createdAt: T0 });
        for (const key of [b, a, first]) await store.createKey(key);
        expect(await store.listKeys()).toEqual([first, a, b]);
      });

      test("listKeys on an empty store is empty", async () => {
        expect(await store.listKeys()).toEqual([]);
      });

      test("revokeKey marks the key once; again or unknown → false", async () => {
        const key = makeKey();
        await store.createKey(key);
        expect(await store.revokeKey(key.id, T0 + 100)).toBe(true);
        expect((await store.getKey(key.id))?.revokedAt).toBe(T0 + 100);
        expect(await store.revokeKey(key.id, T0 + 200)).toBe(false);
        // The second attempt must not move the recorded revocation time.
        expect((await store.getKey(key.id))?.revokedAt).toBe(T0 + 100);
        expect(await store.revokeKey("key_missing", T0)).toBe(false);
      });

      test("setRateLimit stores the new limit; unknown key → false", async () => {
        const key = makeKey({ rateLimit: 60 });
        await store.createKey(key);
        expect(await store.setRateLimit(key.id, 5)).toBe(true);
        expect((await store.getKey(key.id))?.rateLimit).toBe(5);
        expect(await store.setRateLimit(key.id, 0)).toBe(true);
        expect((await store.getKey(key.id))?.rateLimit).toBe(0);
        expect(await store.setRateLimit("key_missing", 5)).toBe(false);
      });

      test("usage starts at zero; unknown key → null", async () => {
        const key = makeKey();
        await store.createKey(key);
        expect(await store.usage(key.id)).toEqual({ challenges: 0, verified: 0, failed: 0 });
        expect(await store.usage("key_missing")).toBeNull();
      });
    });

    describe("agents", () => {
      test("agentsBySigningKeyId finds the key's agents by their signing key's thumbprint, no other key's; the fill sets rows missing it once", async () => {
        const key = makeKey();
        const other = makeKey({ hash: "f".repeat(64) });
        await store.createKey(key);
        await store.createKey(other);
        const signed = makeAgent(key.id, { agentId: "signed", signingKey: "A".repeat(43), signingKeyId: "T".repeat(43) });
        await store.registerAgent(signed);
        await store.registerAgent(makeAgent(other.id, { agentId: "theirs", signingKey: "A".repeat(43), signingKeyId: "T".repeat(43) }));
        expect(await store.agentsBySigningKeyId(key.id, "T".repeat(43), 2)).toEqual([signed]);
        expect(await store.agentsBySigningKeyId(key.id, "U".repeat(43), 2)).toEqual([]);
        // A row stored without its thumbprint (as before migration 11) is listed until set, and set only for its current key.
        const legacy = makeAgent(key.id, { agentId: "legacy", signingKey: "B".repeat(43) });
        await store.registerAgent(legacy);
        const missing = await store.agentsMissingSigningKeyId(10);
        expect(missing.map((agent) => agent.agentId)).toEqual(["legacy"]);
        expect(await store.setSigningKeyId(key.id, "legacy", "C".repeat(43), "V".repeat(43))).toBe(false);
        expect(await store.setSigningKeyId(key.id, "legacy", "B".repeat(43), "V".repeat(43))).toBe(true);
        expect(await store.agentsMissingSigningKeyId(10)).toEqual([]);
        expect(await store.agentsBySigningKeyId(key.id, "V".repeat(43), 2)).toEqual([{ ...legacy, signingKeyId: "V".repeat(43) }]);
      });

      test("registerAgent creates; getAgent round-trips every field", async () => {
        const key = makeKey();
        await store.createKey(key);
        const agent = makeAgent(key.id, { agentId: "агент-🤖", signingKey: "04ab".repeat(16), createdAt: T0 + 7 });
        expect(await store.registerAgent(agent)).toBe("created");
        expect(await store.getAgent(key.id, agent.agentId)).toEqual(agent);
        const unsigned = makeAgent(key.id, { agentId: "plain" });
        expect(await store.registerAgent(unsigned)).toBe("created");
        expect(await store.getAgent(key.id, "plain")).toEqual(unsigned);
        expect(await store.getAgent(key.id, "nobody")).toBeNull();
      });

      test("registering an active agent again → exists, and the original stays", async () => {
        const key = makeKey();
        await store.createKey(key);
        const original = makeAgent(key.id);
        await store.registerAgent(original);
        expect(await store.registerAgent({ ...original, identityCommitment: "999", signingKey: "ff", createdAt: T0 + 50 })).toBe("exists");
        expect(await store.getAgent(key.id, original.agentId)).toEqual(original);
      });

      test("revokeAgent returns the revoked record once; again or unknown → null", async () => {
        const key = makeKey();
        await store.createKey(key);
        const agent = makeAgent(key.id);
        await store.registerAgent(agent);
        expect(await store.revokeAgent(key.id, agent.agentId, T0 + 30)).toEqual({ ...agent, revokedAt: T0 + 30 });
        expect(await store.revokeAgent(key.id, agent.agentId, T0 + 40)).toBeNull();
        expect((await store.getAgent(key.id, agent.agentId))?.revokedAt).toBe(T0 + 30);
        expect(await store.revokeAgent(key.id, "nobody", T0)).toBeNull();
      });

      test("a revoked agent can be registered afresh with a new commitment", async () => {
        const key = makeKey();
        await store.createKey(key);
        const agent = makeAgent(key.id, { signingKey: "old" });
        await store.registerAgent(agent);
        await store.revokeAgent(key.id, agent.agentId, T0 + 30);
        const renewed = makeAgent(key.id, { identityCommitment: "42", signingKey: null, createdAt: T0 + 60 });
        expect(await store.registerAgent(renewed)).toBe("created");
        expect(await store.getAgent(key.id, agent.agentId)).toEqual(renewed);
        // Active again, so a further registration is refused.
        expect(await store.registerAgent({ ...renewed, identityCommitment: "43" })).toBe("exists");
      });

      test("keys scope agents: one agent_id under two keys is two agents", async () => {
        const keyA = makeKey();
        const keyB = makeKey();
        await store.createKey(keyA);
        await store.createKey(keyB);
        const underA = makeAgent(keyA.id, { agentId: "shared", identityCommitment: "111" });
        const underB = makeAgent(keyB.id, { agentId: "shared", identityCommitment: "222" });
        expect(await store.registerAgent(underA)).toBe("created");
        expect(await store.registerAgent(underB)).toBe("created");
        expect(await store.getAgent(keyA.id, "shared")).toEqual(underA);
        expect(await store.getAgent(keyB.id, "shared")).toEqual(underB);
        await store.revokeAgent(keyA.id, "shared", T0 + 1);
        expect((await store.getAgent(keyA.id, "shared"))?.revokedAt).toBe(T0 + 1);
        expect((await store.getAgent(keyB.id, "shared"))?.revokedAt).toBeNull();
      });
    });

    describe("createChallenge and rate windows", () => {
      test("an unlimited key stores the challenge, used is 0, usage counts it", async () => {
        const key = makeKey();
        await store.createKey(key);
        for (let i = 0; i < 3; i++) {
          const challenge = makeChallenge(key.id);
          expect(await store.createChallenge(challenge, unlimited)).toEqual({ created: true, used: 0 });
          expect(await store.getChallenge(challenge.id)).toEqual(challenge);
        }
        expect(await store.usage(key.id)).toEqual({ challenges: 3, verified: 0, failed: 0 });
      });

      test("an unlimited key leaves the rate window untouched", async () => {
        const key = makeKey();
        await store.createKey(key);
        for (let i = 0; i < 5; i++) await store.createChallenge(makeChallenge(key.id), unlimited);
        // Had the unlimited requests been counted, this would be the 6th.
        expect(await store.createChallenge(makeChallenge(key.id), { windowStart: T0, limit: 1 })).toEqual({ created: true, used: 1 });
      });

      test("limit 3: three are created, the fourth is refused and stores nothing", async () => {
        const key = makeKey({ rateLimit: 3 });
        await store.createKey(key);
        const window = { windowStart: T0, limit: 3 };
        for (let used = 1; used <= 3; used++) {
          expect(await store.createChallenge(makeChallenge(key.id), window)).toEqual({ created: true, used });
        }
        const refused = makeChallenge(key.id);
        expect(await store.createChallenge(refused, window)).toEqual({ created: false, used: 4, previous: 0, current: 4 });
        expect(await store.getChallenge(refused.id)).toBeNull();
        expect(await store.usage(key.id)).toEqual({ challenges: 3, verified: 0, failed: 0 });
        expect(await store.countPending(T0, key.id)).toBe(3);
        // A refused request still counts in its window (as in the reference
        // SQLite store): the next one reports 5.
        expect(await store.createChallenge(makeChallenge(key.id), window)).toEqual({ created: false, used: 5, previous: 0, current: 5 });
      });

      test("a sliding minute: the previous window counts, rounded, for the part of it the sliding minute still covers (issue 37)", async () => {
        const key = makeKey();
        await store.createKey(key);
        const window = { windowStart: T0, limit: 3 };
        for (let i = 0; i < 4; i++) await store.createChallenge(makeChallenge(key.id), window);
        const next = (weight: number) => ({ windowStart: T0 + MINUTE, limit: 3, previousWeight: weight });
        // 1 + round(4 · 0.9) > 3: refused, with both counts for Retry-After.
        expect(await store.createChallenge(makeChallenge(key.id), next(0.9))).toEqual({ created: false, used: 5, previous: 4, current: 1 });
        // 2 + round(4 · 0.2) ≤ 3.
        expect(await store.createChallenge(makeChallenge(key.id), next(0.2))).toEqual({ created: true, used: 3 });
        // The same through the group commit: concurrent creations see the carried count too.
        const together = await Promise.all([0, 1].map(() => store.createChallenge(makeChallenge(key.id), next(0.2))));
        expect(together.map((r) => r.created)).toEqual([false, false]);
      });

      test("a new window allows requests again", async () => {
        const key = makeKey();
        await store.createKey(key);
        const first = { windowStart: T0, limit: 1 };
        expect(await store.createChallenge(makeChallenge(key.id), first)).toEqual({ created: true, used: 1 });
        expect(await store.createChallenge(makeChallenge(key.id), first)).toEqual({ created: false, used: 2, previous: 0, current: 2 });
        const next = makeChallenge(key.id, { createdAt: T0 + MINUTE });
        expect(await store.createChallenge(next, { windowStart: T0 + MINUTE, limit: 1 })).toEqual({ created: true, used: 1 });
        expect(await store.getChallenge(next.id)).toEqual(next);
        expect((await store.usage(key.id))?.challenges).toBe(2);
      });

      test("each key has its own window", async () => {
        const keyA = makeKey();
        const keyB = makeKey();
        await store.createKey(keyA);
        await store.createKey(keyB);
        const window = { windowStart: T0, limit: 1 };
        expect(await store.createChallenge(makeChallenge(keyA.id), window)).toEqual({ created: true, used: 1 });
        expect(await store.createChallenge(makeChallenge(keyB.id), window)).toEqual({ created: true, used: 1 });
        expect(await store.createChallenge(makeChallenge(keyA.id), window)).toEqual({ created: false, used: 2, previous: 0, current: 2 });
      });

      test("a failing insert rolls back the window count and the usage counter", async () => {
        const key = makeKey();
        await store.createKey(key);
        const window = { windowStart: T0, limit: 10 };
        const challenge = makeChallenge(key.id);
        expect(await store.createChallenge(challenge, window)).toEqual({ created: true, used: 1 });
        // Same id again: the insert fails inside the transaction.
        await expect(store.createChallenge({ ...challenge, nonce: "other" }, window)).rejects.toThrow();
        expect(await store.createChallenge(makeChallenge(key.id), window)).toEqual({ created: true, used: 2 });
        expect((await store.usage(key.id))?.challenges).toBe(2);
        expect((await store.getChallenge(challenge.id))?.nonce).toBe(challenge.nonce);
      });

      test("20 concurrent creations against limit 5: exactly 5 created, each count distinct", async () => {
        const key = makeKey();
        await store.createKey(key);
        const window = { windowStart: T0, limit: 5 };
        const results = await Promise.all(Array.from({ length: 20 }, () => store.createChallenge(makeChallenge(key.id), window)));
        expect(results.filter((r) => r.created)).toHaveLength(5);
        expect(results.map((r) => r.used).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        for (const r of results) expect(r.created).toBe(r.used <= 5);
        expect((await store.usage(key.id))?.challenges).toBe(5);
        expect(await store.countPending(T0, key.id)).toBe(5);
      });
    });

    describe("createChallenge and counters under concurrency (group commit)", () => {
      test("three keys (unlimited, 7, 15) × two windows, 90 concurrent creations: exact per key and window", async () => {
        const keys = [makeKey(), makeKey({ rateLimit: 7 }), makeKey({ rateLimit: 15 })];
        for (const key of keys) await store.createKey(key);
        const windows = [T0, T0 + MINUTE];
        const calls = Array.from({ length: 90 }, (_, i) => {
          const key = keys[i % 3]!;
          const windowStart = windows[Math.floor(i / 3) % 2]!;
          return { key, windowStart, promise: store.createChallenge(makeChallenge(key.id), { windowStart, limit: key.rateLimit }) };
        });
        const results = await Promise.all(calls.map((c) => c.promise));
        for (const key of keys) {
          for (const windowStart of windows) {
            const mine = results.filter((_, i) => calls[i]!.key === key && calls[i]!.windowStart === windowStart);
            expect(mine).toHaveLength(15);
            if (key.rateLimit === 0) {
              expect(mine.every((r) => r.created && r.used === 0)).toBe(true);
              continue;
            }
            // Each request of the window has its own place 1…15, and exactly the first `limit` places are stored.
            expect(mine.map((r) => r.used).sort((x, y) => x - y)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
            for (const r of mine) expect(r.created).toBe(r.used <= key.rateLimit);
          }
        }
        expect((await store.usage(keys[0]!.id))?.challenges).toBe(30);
        expect((await store.usage(keys[1]!.id))?.challenges).toBe(14);
        expect((await store.usage(keys[2]!.id))?.challenges).toBe(30);
        expect(await store.countPending(T0, keys[1]!.id)).toBe(14);
        // The window remembers every request, refused ones included.
        expect(await store.createChallenge(makeChallenge(keys[1]!.id), { windowStart: T0, limit: 7 })).toEqual({
          created: false,
          used: 16,
          previous: 0,
          current: 16,
        });
      });

      test("one failing item among concurrent creations fails alone; the window does not count it", async () => {
        const key = makeKey();
        await store.createKey(key);
        const window = { windowStart: T0, limit: 20 };
        const first = makeChallenge(key.id);
        expect(await store.createChallenge(first, window)).toEqual({ created: true, used: 1 });
        const batch = Array.from({ length: 10 }, (_, i) => (i === 4 ? { ...first, nonce: "other" } : makeChallenge(key.id)));
        const settled = await Promise.allSettled(batch.map((c) => store.createChallenge(c, window)));
        expect(settled[4]!.status).toBe("rejected");
        const stored = settled.filter((r): r is PromiseFulfilledResult<CreateChallengeResult> => r.status === "fulfilled");
        expect(stored).toHaveLength(9);
        expect(stored.every((r) => r.value.created)).toBe(true);
        expect(stored.map((r) => r.value.used).sort((x, y) => x - y)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
        for (const [i, c] of batch.entries()) if (i !== 4) expect((await store.getChallenge(c.id))?.nonce).toBe(c.nonce);
        expect((await store.getChallenge(first.id))?.nonce).toBe(first.nonce);
        expect((await store.usage(key.id))?.challenges).toBe(10);
        expect(await store.createChallenge(makeChallenge(key.id), window)).toEqual({ created: true, used: 11 });
      });

      test("usage stays exact with creations and decisions of one key all at once", async () => {
        const key = makeKey();
        await store.createKey(key);
        const existing = Array.from({ length: 40 }, () => makeChallenge(key.id));
        await Promise.all(existing.map((c) => store.createChallenge(c, unlimited)));
        const work: Promise<unknown>[] = [];
        existing.forEach((c, i) => {
          work.push(store.decideChallenge(c.id, i % 4 === 0 ? verified() : failed()));
          if (i % 2 === 0) work.push(store.decideChallenge(c.id, verified())); // a losing racer: counts nothing
          work.push(store.createChallenge(makeChallenge(key.id), unlimited));
        });
        await Promise.all(work);
        const usage = await store.usage(key.id);
        const verifiedCount = usage!.verified;
        expect(usage!.challenges).toBe(80);
        expect(verifiedCount + usage!.failed).toBe(40);
        // Each challenge was decided once, and the counters agree with the stored decisions.
        const decided = await Promise.all(existing.map((c) => store.getChallenge(c.id)));
        expect(decided.filter((c) => c!.status === "verified")).toHaveLength(verifiedCount);
        expect(decided.filter((c) => c!.status === "failed")).toHaveLength(usage!.failed);
        expect(await store.countPending(T0, key.id)).toBe(40);
      });
    });

    describe("getChallenge", () => {
      test("round-trips every field: null context, unicode, canonical JSON", async () => {
        const key = makeKey();
        await store.createKey(key);
        const withContext = makeChallenge(key.id, {
          agentId: "agent-Ω-🤖",
          action: "transfer:资金",
          context: '{"amount":"12.50","memo":"café ☕ 🚀","nested":{"a":[1,2,null]}}',
          nonce: "0x" + "f".repeat(62),
          createdAt: T0 + 123,
          expiresAt: T0 + 123 + LIFETIME,
        });
        const withoutContext = makeChallenge(key.id, { context: null });
        await store.createChallenge(withContext, unlimited);
        await store.createChallenge(withoutContext, unlimited);
        expect(await store.getChallenge(withContext.id)).toEqual(withContext);
        const plain = await store.getChallenge(withoutContext.id);
        expect(plain).toEqual(withoutContext);
        expect(plain?.context).toBeNull();
        expect(await store.getChallenge("ch_missing")).toBeNull();
      });

      test("a decided challenge round-trips its decision exactly", async () => {
        const { challenge } = await keyWithChallenge();
        // A float with no short decimal form: it must come back bit for bit.
        const decision: Decision = { status: "verified", decidedAt: T0 + 2_345, confidence: 0.1 + 0.2, reason: null };
        await store.decideChallenge(challenge.id, decision);
        expect(await store.getChallenge(challenge.id)).toEqual({ ...challenge, ...decision });
        const other = await keyWithChallenge();
        const rejection: Decision = { status: "failed", decidedAt: T0 + 9, confidence: 0, reason: "Preuve invalide — ✗" };
        await store.decideChallenge(other.challenge.id, rejection);
        expect(await store.getChallenge(other.challenge.id)).toEqual({ ...other.challenge, ...rejection });
      });
    });

    describe("decideChallenge with a receipt", () => {
      test("stored in the deciding update; the first stays against storeReceipt and a lost race", async () => {
        const evidence: DecisionEvidence = { checks: ["challenge_owner", "proof"], identityCommitment: "42", vkHash: "sha256:" + "cd".repeat(32) };
        const scopeOf = (c: ChallengeRecord) => ({ keyId: c.keyId, agentId: c.agentId, action: c.action, context: c.context });
        const { challenge } = await keyWithChallenge();
        const decision: Decision = { status: "verified", decidedAt: T0 + 3, confidence: 0.99, reason: null, evidence, receipt: "jws.first.receipt" };
        const won = await store.decideChallenge(challenge.id, decision, scopeOf(challenge));
        expect(won).toMatchObject({ decided: true, record: { status: "verified", receipt: "jws.first.receipt" } });
        expect((await store.getChallenge(challenge.id))?.receipt).toBe("jws.first.receipt");
        expect(await store.storeReceipt(challenge.id, "jws.other")).toBe("jws.first.receipt");
        const lost = await store.decideChallenge(challenge.id, { ...decision, receipt: "jws.loser" }, scopeOf(challenge));
        expect(lost).toMatchObject({ decided: false, record: { receipt: "jws.first.receipt" } });

        const failing = await keyWithChallenge();
        const failed: Decision = { status: "failed", decidedAt: T0 + 4, confidence: null, reason: "proof_rejected", evidence, receipt: "jws.failed" };
        expect((await store.decideChallenge(failing.challenge.id, failed)).record?.receipt).toBe("jws.failed");
        // Without one, the receipt stays null until storeReceipt.
        const plain = await keyWithChallenge();
        const { receipt: _none, ...withoutReceipt } = decision;
        expect((await store.decideChallenge(plain.challenge.id, withoutReceipt)).record?.receipt).toBeNull();
      });
    });

    describe("getChallengeWithAgent", () => {
      test("the challenge and its own key's agent, every field; null agent when none; null when no challenge", async () => {
        const { key, challenge } = await keyWithChallenge({ agentId: "агент-🤖", context: '{"a":"☕"}' });
        // Another key's agent of the same name is not the challenge's agent.
        const other = makeKey();
        await store.createKey(other);
        await store.registerAgent(makeAgent(other.id, { agentId: "агент-🤖" }));
        expect(await store.getChallengeWithAgent(challenge.id)).toEqual({ challenge, agent: null });

        const agent = makeAgent(key.id, {
          agentId: "агент-🤖",
          signingKey: "04ab".repeat(16),
          createdAt: T0 + 7,
          principalKey: "p".repeat(43),
          mandate: '{"v":1,"memo":"café"}',
          mandateJws: "header.payload.sig",
          mandateIat: 1_795_000_123,
        });
        expect(await store.registerAgent(agent)).toBe("created");
        expect(await store.getChallengeWithAgent(challenge.id)).toEqual({ challenge, agent });

        await store.revokeAgent(key.id, agent.agentId, T0 + 99);
        expect(await store.getChallengeWithAgent(challenge.id)).toEqual({ challenge, agent: { ...agent, revokedAt: T0 + 99 } });

        const decision: Decision = { status: "failed", decidedAt: T0 + 5, confidence: 0, reason: "invalid_proof" };
        await store.decideChallenge(challenge.id, decision);
        expect((await store.getChallengeWithAgent(challenge.id))?.challenge).toEqual((await store.getChallenge(challenge.id))!);

        expect(await store.getChallengeWithAgent("ch_missing")).toBeNull();
        expect(await store.getChallengeWithAgent("ch_\u0000")).toBeNull();
      });
    });

    describe("decideChallenge", () => {
      test("decides once; a second attempt gets decided:false and the winning record", async () => {
        const { key, challenge } = await keyWithChallenge();
        const first = await store.decideChallenge(challenge.id, verified(T0 + 1_000, 0.97));
        const winner: ChallengeRecord = { ...challenge, status: "verified", decidedAt: T0 + 1_000, confidence: 0.97, reason: null };
        expect(first).toEqual({ decided: true, record: winner });
        const second = await store.decideChallenge(challenge.id, failed(T0 + 2_000));
        expect(second).toEqual({ decided: false, record: winner });
        expect(await store.getChallenge(challenge.id)).toEqual(winner);
        expect(await store.usage(key.id)).toEqual({ challenges: 1, verified: 1, failed: 0 });
      });

      test("a failed decision counts as failed, not verified", async () => {
        const { key, challenge } = await keyWithChallenge();
        const result = await store.decideChallenge(challenge.id, failed(T0 + 10, "Invalid proof"));
        expect(result.decided).toBe(true);
        expect(result.record).toMatchObject({ status: "failed", reason: "Invalid proof", confidence: null, decidedAt: T0 + 10 });
        // A later verified attempt must not move either counter.
        expect((await store.decideChallenge(challenge.id, verified(T0 + 20))).decided).toBe(false);
        expect(await store.usage(key.id)).toEqual({ challenges: 1, verified: 0, failed: 1 });
      });

      test("past expiry: not decided, stays pending, counters untouched", async () => {
        const { key, challenge } = await keyWithChallenge();
        const result = await store.decideChallenge(challenge.id, verified(challenge.expiresAt + 1));
        expect(result).toEqual({ decided: false, record: challenge });
        expect((await store.getChallenge(challenge.id))?.status).toBe("pending");
        expect(await store.usage(key.id)).toEqual({ challenges: 1, verified: 0, failed: 0 });
      });

      test("decidedAt exactly at expiresAt is still in time", async () => {
        const { key, challenge } = await keyWithChallenge();
        const result = await store.decideChallenge(challenge.id, verified(challenge.expiresAt));
        expect(result.decided).toBe(true);
        expect(result.record?.decidedAt).toBe(challenge.expiresAt);
        expect((await store.usage(key.id))?.verified).toBe(1);
      });

      test("an unknown challenge → decided:false, record:null", async () => {
        expect(await store.decideChallenge("ch_missing", verified())).toEqual({ decided: false, record: null });
      });

      test("counters move only for the key that owns the challenge", async () => {
        const a = await keyWithChallenge();
        const b = await keyWithChallenge();
        await store.decideChallenge(a.challenge.id, verified());
        expect(await store.usage(a.key.id)).toEqual({ challenges: 1, verified: 1, failed: 0 });
        expect(await store.usage(b.key.id)).toEqual({ challenges: 1, verified: 0, failed: 0 });
      });

      test("50 concurrent decisions of one challenge: exactly one is decided", async () => {
        const { key, challenge } = await keyWithChallenge();
        const attempts = Array.from({ length: 50 }, (_, i) =>
          store.decideChallenge(challenge.id, i % 2 === 0 ? verified(T0 + 1_000 + i) : failed(T0 + 1_000 + i)),
        );
        const results = await Promise.all(attempts);
        const winners = results.filter((r) => r.decided);
        expect(winners).toHaveLength(1);
        const winner = winners[0]!.record;
        // Every loser reports the same winning record, as stored.
        for (const r of results) expect(r.record).toEqual(winner);
        expect(await store.getChallenge(challenge.id)).toEqual(winner);
        const usage = await store.usage(key.id);
        expect(usage!.verified + usage!.failed).toBe(1);
        expect(usage![winner.status as "verified" | "failed"]).toBe(1);
      });

      test("20 challenges × 10 concurrent decisions each: one winner per challenge", async () => {
        const key = makeKey();
        await store.createKey(key);
        const challenges = Array.from({ length: 20 }, () => makeChallenge(key.id));
        for (const c of challenges) await store.createChallenge(c, unlimited);
        const results = await Promise.all(
          challenges.flatMap((c) => Array.from({ length: 10 }, (_, i) => store.decideChallenge(c.id, i % 3 ? failed() : verified()))),
        );
        for (const c of challenges) {
          expect(results.filter((r) => r.decided && r.record.id === c.id)).toHaveLength(1);
        }
        const usage = await store.usage(key.id);
        expect(usage!.verified + usage!.failed).toBe(20);
        expect(await store.countPending(T0, key.id)).toBe(0);
      });
    });

    describe("purgeChallenges", () => {
      test("removes only challenges expiring before the cutoff and returns the count", async () => {
        const key = makeKey();
        await store.createKey(key);
        const early = makeChallenge(key.id, { expiresAt: T0 + 100 });
        const earlyDecided = makeChallenge(key.id, { expiresAt: T0 + 150 });
        const atCutoff = makeChallenge(key.id, { expiresAt: T0 + 200 });
        const late = makeChallenge(key.id, { expiresAt: T0 + 300 });
        for (const c of [early, earlyDecided, atCutoff, late]) await store.createChallenge(c, unlimited);
        await store.decideChallenge(earlyDecided.id, verified(T0 + 50));

        expect(await store.purgeChallenges(T0 + 200)).toBe(2);
        expect(await store.getChallenge(early.id)).toBeNull();
        expect(await store.getChallenge(earlyDecided.id)).toBeNull();
        expect(await store.getChallenge(atCutoff.id)).toEqual(atCutoff);
        expect(await store.getChallenge(late.id)).toEqual(late);
        expect(await store.purgeChallenges(T0 + 200)).toBe(0);
        // Purging sessions never rewrites usage history.
        expect(await store.usage(key.id)).toEqual({ challenges: 4, verified: 1, failed: 0 });
      });

      test("also forgets rate windows that started before the cutoff", async () => {
        const key = makeKey();
        await store.createKey(key);
        const old = { windowStart: T0, limit: 1 };
        const current = { windowStart: T0 + MINUTE, limit: 1 };
        await store.createChallenge(makeChallenge(key.id), old);
        await store.createChallenge(makeChallenge(key.id), current);
        await store.purgeChallenges(T0 + MINUTE);
        expect(await store.createChallenge(makeChallenge(key.id), old)).toEqual({ created: true, used: 1 });
        expect(await store.createChallenge(makeChallenge(key.id), current)).toEqual({ created: false, used: 2, previous: 0, current: 2 });
      });

      test("on an empty store returns 0", async () => {
        expect(await store.purgeChallenges(Number.MAX_SAFE_INTEGER)).toBe(0);
      });
    });

    describe("countPending", () => {
      test("counts pending, unexpired challenges per key and overall", async () => {
        const keyA = makeKey();
        const keyB = makeKey();
        await store.createKey(keyA);
        await store.createKey(keyB);
        const now = T0 + 1_000;
        const add = async (keyId: string, overrides: Partial<ChallengeRecord> = {}) => {
          const c = makeChallenge(keyId, overrides);
          await store.createChallenge(c, unlimited);
          return c;
        };
        await add(keyA.id);
        await add(keyA.id, { expiresAt: now }); // expiring exactly now still counts
        await add(keyA.id, { expiresAt: now - 1 }); // expired: ignored
        const decided = await add(keyA.id);
        await store.decideChallenge(decided.id, failed(now)); // decided: ignored
        await add(keyB.id);

        expect(await store.countPending(now, keyA.id)).toBe(2);
        expect(await store.countPending(now, keyB.id)).toBe(1);
        expect(await store.countPending(now)).toBe(3);
        expect(await store.countPending(now, "key_missing")).toBe(0);
        // Later, everything has expired.
        expect(await store.countPending(T0 + LIFETIME + 1)).toBe(0);
      });
    });

    describe("lifecycle", () => {
      test("ping resolves while open and throws once closed", async () => {
        await store.ping();
        await store.close();
        closed = true;
        await expect(store.ping()).rejects.toThrow();
      });
    });

    describe("audit trail", () => {
      test("creation and decision each append one entry, in order, with their request ids", async () => {
        const { key, challenge } = await keyWithChallenge({ requestId: "req-create", action: "refund", agentId: "agent-9" });
        await store.decideChallenge(challenge.id, { ...failed(T0 + 5, "proof_rejected"), requestId: "req-decide" });
        const entries = await store.listAudit({ limit: 10 });
        expect(entries.map(({ seq, ...rest }) => rest)).toEqual([
          {
            at: T0,
            keyId: key.id,
            event: "challenge.created",
            sessionId: challenge.id,
            agentId: "agent-9",
            action: "refund",
            result: "pending",
            reason: null,
            requestId: "req-create",
            groupId: null,
            commitment: null,
          },
          {
            at: T0 + 5,
            keyId: key.id,
            event: "verification.decided",
            sessionId: challenge.id,
            agentId: "agent-9",
            action: "refund",
            result: "failed",
            reason: "proof_rejected",
            requestId: "req-decide",
            groupId: null,
            commitment: null,
          },
        ]);
        expect(entries[1]!.seq).toBeGreaterThan(entries[0]!.seq);
      });

      test("a losing decision, a refused creation and a purge add nothing; the log survives the purge", async () => {
        const { challenge } = await keyWithChallenge();
        await store.decideChallenge(challenge.id, verified());
        await store.decideChallenge(challenge.id, failed());
        const limited = makeKey({ rateLimit: 1 });
        await store.createKey(limited);
        await store.createChallenge(makeChallenge(limited.id), { windowStart: T0, limit: 1 });
        expect((await store.createChallenge(makeChallenge(limited.id), { windowStart: T0, limit: 1 })).created).toBe(false);
        expect(await store.purgeChallenges(T0 + 10 * LIFETIME)).toBe(2);
        const entries = await store.listAudit({ limit: 100 });
        expect(entries.map((e) => `${e.event}:${e.result}`)).toEqual([
          "challenge.created:pending",
          "verification.decided:verified",
          "challenge.created:pending",
        ]);
      });

      test("filters by key, pages by seq and honours the limit", async () => {
        const a = await keyWithChallenge();
        const b = await keyWithChallenge();
        await store.decideChallenge(a.challenge.id, verified());
        const onlyA = await store.listAudit({ keyId: a.key.id, limit: 10 });
        expect(onlyA.map((e) => e.sessionId)).toEqual([a.challenge.id, a.challenge.id]);
        const first = await store.listAudit({ limit: 1 });
        expect(first).toHaveLength(1);
        const rest = await store.listAudit({ afterSeq: first[0]!.seq, limit: 10 });
        expect(rest.map((e) => e.sessionId)).toEqual([b.challenge.id, a.challenge.id]);
      });
    });

    describe("idempotency keys", () => {
      const stale = T0 - 60_000;

      test("reserve → in progress → complete → replay; another fingerprint is a mismatch", async () => {
        expect(await store.reserveIdempotency("k1", "idem-1", "fp-a", T0, stale)).toEqual({ state: "new" });
        expect(await store.reserveIdempotency("k1", "idem-1", "fp-a", T0, stale)).toEqual({ state: "in_progress" });
        await store.completeIdempotency("k1", "idem-1", 200, '{"ok":true}');
        expect(await store.reserveIdempotency("k1", "idem-1", "fp-a", T0 + 1, stale)).toEqual({ state: "done", status: 200, body: '{"ok":true}' });
        expect(await store.reserveIdempotency("k1", "idem-1", "fp-b", T0 + 1, stale)).toEqual({ state: "mismatch" });
      });

      test("keys are scoped to the API key", async () => {
        expect(await store.reserveIdempotency("k1", "same", "fp", T0, stale)).toEqual({ state: "new" });
        expect(await store.reserveIdempotency("k2", "same", "fp", T0, stale)).toEqual({ state: "new" });
      });

      test("release lets a retry reserve again; a completed record is not released", async () => {
        await store.reserveIdempotency("k1", "r", "fp", T0, stale);
        await store.releaseIdempotency("k1", "r");
        expect(await store.reserveIdempotency("k1", "r", "fp", T0, stale)).toEqual({ state: "new" });
        await store.completeIdempotency("k1", "r", 400, "{}");
        await store.releaseIdempotency("k1", "r");
        expect((await store.reserveIdempotency("k1", "r", "fp", T0, stale)).state).toBe("done");
      });

      test("an unfinished reservation older than staleBefore is taken over, a fresh one is not", async () => {
        await store.reserveIdempotency("k1", "s", "fp", T0, T0 - 60_000);
        expect((await store.reserveIdempotency("k1", "s", "fp", T0 + 1_000, T0 - 59_000)).state).toBe("in_progress");
        expect((await store.reserveIdempotency("k1", "s", "fp", T0 + 61_000, T0 + 1)).state).toBe("new");
        expect((await store.reserveIdempotency("k1", "s", "other", T0 + 200_000, T0 + 150_000)).state).toBe("mismatch");
      });

      test("of 20 concurrent reservations exactly one is new", async () => {
        const states = await Promise.all(Array.from({ length: 20 }, () => store.reserveIdempotency("k1", "race", "fp", T0, stale)));
        expect(states.filter((s) => s.state === "new")).toHaveLength(1);
        expect(states.filter((s) => s.state === "in_progress")).toHaveLength(19);
      });

      test("purge removes records created before the cutoff", async () => {
        await store.reserveIdempotency("k1", "old", "fp", T0, stale);
        await store.reserveIdempotency("k1", "new", "fp", T0 + 10, stale);
        expect(await store.purgeIdempotency(T0 + 5)).toBe(1);
        expect((await store.reserveIdempotency("k1", "new", "fp", T0 + 20, stale)).state).toBe("in_progress");
      });
    });

    describe("receipts", () => {
      const evidence: DecisionEvidence = {
        checks: ["challenge_owner", "challenge_unexpired", "proof"],
        identityCommitment: "42",
        vkHash: "sha256:" + "ab".repeat(32),
      };

      test("the decision's evidence is stored in the same update and read back exactly", async () => {
        const { challenge } = await keyWithChallenge();
        const decision: Decision = { ...verified(), evidence };
        const result = await store.decideChallenge(challenge.id, decision);
        expect(result.record?.evidence).toEqual(evidence);
        expect((await store.getChallenge(challenge.id))?.evidence).toEqual(evidence);
        // A losing decision does not overwrite it.
        await store.decideChallenge(challenge.id, { ...failed(), evidence: { ...evidence, checks: [] } });
        expect((await store.getChallenge(challenge.id))?.evidence).toEqual(evidence);
      });

      test("storeReceipt keeps the first receipt; later ones return it unchanged", async () => {
        const { challenge } = await keyWithChallenge();
        await store.decideChallenge(challenge.id, { ...verified(), evidence });
        expect(await store.storeReceipt(challenge.id, "jws-first")).toBe("jws-first");
        expect(await store.storeReceipt(challenge.id, "jws-second")).toBe("jws-first");
        expect((await store.getChallenge(challenge.id))?.receipt).toBe("jws-first");
      });

      test("10 concurrent storeReceipt calls all return the one stored receipt", async () => {
        const { challenge } = await keyWithChallenge();
        await store.decideChallenge(challenge.id, failed());
        const stored = await Promise.all(Array.from({ length: 10 }, (_, i) => store.storeReceipt(challenge.id, `jws-${i}`)));
        expect(new Set(stored).size).toBe(1);
        expect((await store.getChallenge(challenge.id))?.receipt).toBe(stored[0]!);
      });

      test("a pending challenge takes no receipt; an unknown one gives null", async () => {
        const { challenge } = await keyWithChallenge();
        expect(await store.storeReceipt(challenge.id, "jws")).toBeNull();
        expect((await store.getChallenge(challenge.id))?.receipt).toBeNull();
        expect(await store.storeReceipt("ch_missing", "jws")).toBeNull();
      });

      test("storing a receipt leaves the audit trail alone", async () => {
        const { challenge } = await keyWithChallenge();
        await store.decideChallenge(challenge.id, verified());
        const before = await store.listAudit({ limit: 100 });
        await store.storeReceipt(challenge.id, "jws");
        expect(await store.listAudit({ limit: 100 })).toEqual(before);
      });
    });

    describe("signing keys", () => {
      test("ensureSigningKey inserts the first key and returns it; later candidates get the same key", async () => {
        expect(await store.activeSigningKey()).toBeNull();
        const first = makeSigningKey();
        expect(await store.ensureSigningKey(first)).toEqual(first);
        expect(await store.ensureSigningKey(makeSigningKey())).toEqual(first);
        expect(await store.listSigningKeys()).toEqual([first]);
      });

      test("10 concurrent first starts leave exactly one active key, returned to all", async () => {
        const results = await Promise.all(Array.from({ length: 10 }, () => store.ensureSigningKey(makeSigningKey())));
        expect(new Set(results.map((k) => k.kid)).size).toBe(1);
        expect(await store.listSigningKeys()).toHaveLength(1);
        expect((await store.activeSigningKey())?.kid).toBe(results[0]!.kid);
      });

      test("rotate: the new key is active, the old one published; both listed oldest first", async () => {
        const first = await store.ensureSigningKey(makeSigningKey());
        const next = makeSigningKey();
        expect(await store.rotateSigningKey(next)).toBe(first.kid);
        expect(await store.activeSigningKey()).toEqual(next);
        expect(await store.listSigningKeys()).toEqual([{ ...first, state: "published" }, next]);
      });

      test("rotate on an empty store makes the first key and reports no previous one", async () => {
        const only = makeSigningKey();
        expect(await store.rotateSigningKey(only)).toBeNull();
        expect(await store.activeSigningKey()).toEqual(only);
      });

      test("concurrent rotations never leave two active keys", async () => {
        await store.ensureSigningKey(makeSigningKey());
        const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => store.rotateSigningKey(makeSigningKey())));
        expect(outcomes.some((o) => o.status === "fulfilled")).toBe(true);
        const keys = await store.listSigningKeys();
        expect(keys.filter((k) => k.state === "active")).toHaveLength(1);
      });

      test("retire: only a published key; the active one refuses; unknown and repeated are reported", async () => {
        const first = await store.ensureSigningKey(makeSigningKey());
        expect(await store.retireSigningKey(first.kid, T0 + 50)).toBe("active");
        await store.rotateSigningKey(makeSigningKey());
        expect(await store.retireSigningKey(first.kid, T0 + 60)).toBe("retired");
        expect(await store.retireSigningKey(first.kid, T0 + 70)).toBe("already_retired");
        expect(await store.retireSigningKey("kid-missing", T0)).toBe("unknown");
        const [retired] = await store.listSigningKeys();
        expect(retired).toEqual({ ...first, state: "retired", retiredAt: T0 + 60 });
      });
    });
    mandateContract(() => store);
    circuitContract(() => store);
    claimContract(() => store);

    describe("issue 11: identifiers with NUL name nothing (PostgreSQL TEXT cannot hold U+0000)", () => {
      test("lookups, revocation and decision by an id with NUL answer none, never throw", async () => {
        const { key, challenge } = await keyWithChallenge();
        await store.registerAgent(makeAgent(key.id));
        for (const id of [`${challenge.id}\u0000`, "\u0000", `ch_\u0000x`]) {
          expect(await store.getChallenge(id)).toBeNull();
          expect(await store.decideChallenge(id, verified())).toEqual({ decided: false, record: null });
        }
        for (const agentId of ["agent-1\u0000", "\u0000"]) {
          expect(await store.getAgent(key.id, agentId)).toBeNull();
          expect(await store.revokeAgent(key.id, agentId, T0)).toBeNull();
        }
        expect(await store.getKey("key_\u0000")).toBeNull();
        expect(await store.usage("key_\u0000")).toBeNull();
        expect((await store.getChallenge(challenge.id))?.status).toBe("pending");
      });
    });

    describe("issue 11: agent registration quota", () => {
      const quota = (limit: number, maxAgents = 0, windowStart = T0) => ({ windowStart, limit, maxAgents });

      test("at most `limit` registrations per window; refused attempts occupy the window; a new window starts afresh", async () => {
        const key = makeKey();
        await store.createKey(key);
        for (let i = 0; i < 3; i++) expect(await store.registerAgent(makeAgent(key.id, { agentId: `a${i}` }), quota(3))).toBe("created");
        expect(await store.registerAgent(makeAgent(key.id, { agentId: "a3" }), quota(3))).toMatchObject({ outcome: "rate_limited", current: 4 });
        expect(await store.getAgent(key.id, "a3")).toBeNull();
        expect(await store.registerAgent(makeAgent(key.id, { agentId: "a3" }), quota(3, 0, T0 + MINUTE))).toBe("created");
        // Another key has its own window.
        const other = makeKey();
        await store.createKey(other);
        expect(await store.registerAgent(makeAgent(other.id, { agentId: "a0" }), quota(3))).toBe("created");
      });

      test("a sliding minute: the previous window counts for the part of it the sliding minute still covers (issue 37)", async () => {
        const key = makeKey();
        await store.createKey(key);
        for (let i = 0; i < 3; i++) expect(await store.registerAgent(makeAgent(key.id, { agentId: `a${i}` }), quota(3))).toBe("created");
        expect(await store.registerAgent(makeAgent(key.id, { agentId: "a3" }), quota(3))).toMatchObject({ outcome: "rate_limited" });
        // Just after the boundary nearly all of the previous minute counts: 1 + round(4 · 0.9) > 3.
        const next = (weight: number) => ({ ...quota(3, 0, T0 + MINUTE), previousWeight: weight });
        expect(await store.registerAgent(makeAgent(key.id, { agentId: "b0" }), next(0.9))).toEqual({ outcome: "rate_limited", previous: 4, current: 1 });
        // Later in the minute less of it does: 2 + round(4 · 0.2) ≤ 3.
        expect(await store.registerAgent(makeAgent(key.id, { agentId: "b1" }), next(0.2))).toBe("created");
      });

      test("an active agent answers exists without using the window; re-registering a revoked one uses it", async () => {
        const key = makeKey();
        await store.createKey(key);
        expect(await store.registerAgent(makeAgent(key.id), quota(2))).toBe("created");
        for (let i = 0; i < 5; i++) expect(await store.registerAgent(makeAgent(key.id), quota(2))).toBe("exists");
        await store.revokeAgent(key.id, "agent-1", T0 + 1);
        expect(await store.registerAgent(makeAgent(key.id, { identityCommitment: "7" }), quota(2))).toBe("created");
        await store.revokeAgent(key.id, "agent-1", T0 + 2);
        expect(await store.registerAgent(makeAgent(key.id, { identityCommitment: "8" }), quota(2))).toMatchObject({ outcome: "rate_limited" });
        expect((await store.getAgent(key.id, "agent-1"))?.identityCommitment).toBe("7");
      });

      test("a key holds at most maxAgents rows, revoked ones included; reviving a revoked one adds no row", async () => {
        const key = makeKey();
        await store.createKey(key);
        expect(await store.registerAgent(makeAgent(key.id, { agentId: "a" }), quota(0, 2))).toBe("created");
        expect(await store.registerAgent(makeAgent(key.id, { agentId: "b" }), quota(0, 2))).toBe("created");
        expect(await store.registerAgent(makeAgent(key.id, { agentId: "c" }), quota(0, 2))).toBe("too_many_agents");
        await store.revokeAgent(key.id, "b", T0 + 1);
        expect(await store.registerAgent(makeAgent(key.id, { agentId: "c" }), quota(0, 2))).toBe("too_many_agents");
        expect(await store.registerAgent(makeAgent(key.id, { agentId: "b", identityCommitment: "9" }), quota(0, 2))).toBe("created");
        expect(await store.getAgent(key.id, "c")).toBeNull();
      });

      test("20 concurrent registrations under a cap of 5: exactly 5 rows", async () => {
        const key = makeKey();
        await store.createKey(key);
        const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.registerAgent(makeAgent(key.id, { agentId: `r${i}` }), quota(0, 5))));
        expect(results.filter((r) => r === "created")).toHaveLength(5);
        expect(results.filter((r) => r === "too_many_agents")).toHaveLength(15);
      });

      test("setAgentRateLimit round-trips through getKey; null returns to the default (absent)", async () => {
        const key = makeKey();
        await store.createKey(key);
        expect(await store.setAgentRateLimit(key.id, 42)).toBe(true);
        expect((await store.getKey(key.id))?.agentRateLimit).toBe(42);
        expect(await store.setAgentRateLimit(key.id, null)).toBe(true);
        expect(await store.getKey(key.id)).toEqual(key);
        expect(await store.setAgentRateLimit("key_missing", 1)).toBe(false);
        const created = makeKey({ agentRateLimit: 0 });
        await store.createKey(created);
        expect((await store.getKey(created.id))?.agentRateLimit).toBe(0);
      });
    });

    describe("issue 11: audit retention", () => {
      test("purgeAudit deletes entries older than the cutoff and keeps the rest", async () => {
        const { challenge } = await keyWithChallenge({ createdAt: T0 });
        await store.decideChallenge(challenge.id, failed(T0 + 1_000));
        await keyWithChallenge({ createdAt: T0 + 2_000, expiresAt: T0 + 2_000 + LIFETIME });
        expect(await store.purgeAudit(T0 + 1_000)).toBe(1);
        expect((await store.listAudit({ limit: 10 })).map((e) => e.at)).toEqual([T0 + 1_000, T0 + 2_000]);
        expect(await store.purgeAudit(T0 + 1_000)).toBe(0);
        expect(await store.purgeAudit(T0 + 10_000)).toBe(2);
        expect(await store.listAudit({ limit: 10 })).toEqual([]);
      });
    });
  });
}
