// The challenge state machine as plain functions (docs/api.md, "Sessions and
// their states"). The store keeps pending,
// verified and failed; `expired` is derived from the clock, so a pending
// challenge past its lifetime reads as expired whether or not anything ran.
import { sessionSubject } from "../../identity/subject";
import type { ChallengeRecord } from "../../store/challenges/records";

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
