// A challenge decided `verified` directly in a store, with the evidence a
// real decision records: what the receipt tests sign without running a proof.
import { CHECKS } from "../../src/receipts/claims";
import type { ChallengeRecord, Store } from "../../src/store/interface";
import { makeChallenge, makeKey, T0 } from "../store/contract";

export async function decidedChallenge(store: Store, identityCommitment: string): Promise<ChallengeRecord> {
  const key = makeKey();
  await store.createKey(key);
  const challenge = makeChallenge(key.id);
  await store.createChallenge(challenge, { windowStart: T0, limit: 0 });
  const { record } = await store.decideChallenge(challenge.id, {
    status: "verified",
    decidedAt: T0 + 1,
    confidence: 0.99,
    reason: null,
    evidence: { checks: CHECKS.slice(0, 6), identityCommitment, vkHash: "sha256:00" },
  });
  if (!record) throw new Error("the challenge was not decided");
  return record;
}
