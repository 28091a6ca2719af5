// The decision of a challenge: the one transaction that spans aggregates (src/store/decisions/).
// The types the domain sees and what it asks of this aggregate; sqlite.ts and
// postgres.ts beside this file answer it. Times are Unix milliseconds.
import type { MandateDecision, MandateScope } from "../../mandates/enforce";
import type { ChallengeRecord, DecisionEvidence } from "../challenges/records";

export interface Decision {
  status: "verified" | "failed";
  decidedAt: number;
  confidence: number | null;
  reason: string | null;
  /** The request that decided it, for the audit trail. */
  requestId?: string | null;
  /** Stored with the decision, in the same update, for its receipt. */
  evidence?: DecisionEvidence | null;
  /**
   * The receipt signed for this decision as proposed, stored in the same
   * update when the decision stands as proposed: when no mandate was applied
   * (an agent with a mandate changes the evidence, so the receipt is then
   * left null and signed afterwards from the stored row).
   */
  receipt?: string | null;
}

/**
 * `decided` is true only for the one caller whose conditional update won.
 * `mandate` (present when a mandate check was asked for) is what the
 * decision was checked against: null when the agent has no mandate or the
 * proposed decision was already a failure.
 */
export type DecideResult = { decided: true; record: ChallengeRecord; mandate?: MandateDecision | null } | { decided: false; record: ChallengeRecord | null };

export interface DecisionsStore {
  /**
   * Decides a challenge with one conditional update: only a challenge still
   * pending and not past `expiresAt` at `decision.decidedAt` changes. The
   * key's verified/failed counter moves with it.
   *
   * With `mandate`, a verified decision is first checked against the agent's
   * mandate in the same transaction, its period totals locked: a violation
   * decides `failed` with reason `mandate_violation` instead, and only a
   * verified decision that stands adds to the totals. However many decisions
   * run at once, on however many nodes, no total or count passes its limit.
   */
  decideChallenge(id: string, decision: Decision, mandate?: MandateScope): Promise<DecideResult>;
}
