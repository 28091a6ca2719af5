// The challenge state machine as plain functions (docs/api.md, "Sessions and
// their states"). The store keeps pending,
// verified and failed; `expired` is derived from the clock, so a pending
// challenge past its lifetime reads as expired whether or not anything ran.
import type { ChallengeRecord } from "../../store/interface";

export const CHALLENGE_LIFETIME_MS = 300_000;
/** Session data is kept 24 hours after expiry, then purged. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;

export type SessionStatus = "pending" | "verified" | "failed" | "expired";

/** "More than 5 minutes since creation": at exactly expiresAt it is still live. */
export const isExpired = (challenge: Pick<ChallengeRecord, "expiresAt">, now: number): boolean => now > challenge.expiresAt;

/** Past retention a session no longer exists, whether or not the purge has run. */
export const isRetained = (challenge: Pick<ChallengeRecord, "expiresAt">, now: number): boolean => now <= challenge.expiresAt + RETENTION_MS;

export function sessionStatus(challenge: Pick<ChallengeRecord, "status" | "expiresAt">, now: number): SessionStatus {
  if (challenge.status === "pending" && isExpired(challenge, now)) return "expired";
  return challenge.status;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Whom a session is about, as every answer, receipt and webhook event names it. */
export type SessionSubject =
  | { agent_id: string }
  | {
      /** The pseudonym, or "" while no proof gave one: clients written for agent sessions keep reading a string. */
      agent_id: string;
      group_id: string;
      /** The proof's nullifier (this member at this platform); null until a proof was read that far. */
      pseudonym: string | null;
    };

/**
 * The one rule that names a session's subject: an agent session's agent id;
 * for a group session the group and the member's pseudonym, never its
 * commitment (the proof answer, the status, the receipt's `sub` and the
 * webhook events all take it from here).
 */
export function sessionSubject(challenge: Pick<ChallengeRecord, "agentId" | "groupId" | "evidence">): SessionSubject {
  if (!challenge.groupId) return { agent_id: challenge.agentId };
  const pseudonym = challenge.evidence?.group?.pseudonym ?? null;
  return { agent_id: pseudonym ?? "", group_id: challenge.groupId, pseudonym };
}

export function sessionView(challenge: ChallengeRecord, now: number) {
  const verified = challenge.status === "verified";
  return {
    session_id: challenge.id,
    status: sessionStatus(challenge, now),
    ...sessionSubject(challenge),
    action: challenge.action,
    created_at: iso(challenge.createdAt),
    verified_at: verified && challenge.decidedAt !== null ? iso(challenge.decidedAt) : null,
    confidence: verified ? challenge.confidence : null,
    expires_at: iso(challenge.expiresAt),
  };
}
