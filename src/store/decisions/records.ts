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

/**
 * What a budget spend's deciding transaction checks and writes (docs/protocol.md,
 * "The deciding transaction"): the roots the proof named, the challenge's day,
 * the nullifier and the new note.
 */
export interface SpendScope {
  groupId: string;
  enrolmentRoot: string;
  notesRoot: string;
  nullifier: string;
  commitment: string;
  /** The challenge's day index (days since the epoch, UTC), fixed at its creation. */
  day: number;
  /** How many of the group's newest checkpoints the notes root may be one of. */
  window: number;
}

/** Why a verified spend proof was refused in its deciding transaction (nothing consumed). */
export type SpendRefusal = "not_member" | "stale_notes_root" | "period_ended" | "already_spent";

/** The checks the deciding transaction adds to a spend's evidence when it stands, in the order it runs them (src/receipts/claims.ts). */
export const SPEND_CHECKS = ["group_root", "notes_root", "budget_period", "nullifier_unspent"] as const;

const DAY_MS = 86_400_000;

/** The refusal of a spend whose checks passed up to `passed`: failed, no spend in its evidence, no receipt signed before. */
export function refuseSpend<D extends Decision>(decision: D, reason: SpendRefusal, passed: number): D {
  const evidence = decision.evidence ? { ...decision.evidence, checks: [...decision.evidence.checks, ...SPEND_CHECKS.slice(0, passed)], spend: null } : null;
  return { ...decision, status: "failed", confidence: null, reason, receipt: null, evidence };
}

/** The spend as it stands: every check listed. */
export function acceptSpend<D extends Decision>(decision: D): D {
  const evidence = decision.evidence ? { ...decision.evidence, checks: [...decision.evidence.checks, ...SPEND_CHECKS] } : null;
  return { ...decision, receipt: null, evidence };
}

/** Whether the challenge's day is the decision's day or the one before it (a challenge is never kept for a later period). */
export const dayCurrent = (day: number, decidedAt: number): boolean => {
  const today = Math.floor(decidedAt / DAY_MS);
  return day === today || day === today - 1;
};

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

  /**
   * Decides a budget spend whose proof verified, in one transaction: the
   * challenge pending and unexpired at `decision.decidedAt` (else nothing is
   * written: decided false); the enrolment root acceptable (the group root
   * rule, read with the group row held), the notes root among the newest
   * `spend.window` checkpoints, the challenge's day current or previous; the
   * nullifier inserted under its unique key and the note appended at the
   * group's next index; the challenge decided. A refusal decides it failed
   * with its reason and consumes nothing. Of any number of concurrent spends
   * of one nullifier, on any node, exactly one is verified.
   */
  decideSpend(id: string, decision: Decision, spend: SpendScope): Promise<DecideResult>;
}
