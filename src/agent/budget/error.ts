// The agent's refusals to spend from a budget (src/agent/budget/), each
// naming what was wrong. What a refusal reveals: nothing beyond the machine;
// it is raised before anything is sent, or after the service answered.

export type BudgetSpendErrorCode =
  /** The membership (the enrolment's answer and the secret) is malformed, or its leaf is not H3(idc, T, salt). */
  | "membership"
  /** No membership of this group at this service is kept. */
  | "no_membership"
  /** The challenge lacks a field, or holds one the agent computes otherwise (payee, ctx, amount, currency, periods, group). */
  | "challenge"
  /** The member's own terms do not allow this spend (amount, currency, payee, expiry, budget left). */
  | "terms"
  /** The enrolment tree or notes feed could not be read, or the service rewrote what the agent had seen. */
  | "sync"
  /** The member's leaf is not in the group's current tree (removed). */
  | "not_member"
  /** No checkpoint holds the member's last note yet. */
  | "checkpoint"
  /** A spend of this chain is in flight or unresolved (its challenge has not expired yet). */
  | "in_flight"
  /** already_spent for a nullifier whose note is not in the feed: someone else holds this membership's secret. */
  | "compromised"
  /** The prover's public signals are not the statement computed here, or the artifacts are not the pinned ones. */
  | "statement"
  /** The wallet's files could not be read or written. */
  | "wallet";

/** A refusal to spend, naming what was wrong. */
export class BudgetSpendError extends Error {
  static {
    Object.defineProperty(BudgetSpendError, "name", { value: "BudgetSpendError" });
  }
  override readonly name = "BudgetSpendError";
  constructor(
    readonly code: BudgetSpendErrorCode,
    message: string,
  ) {
    super(message);
  }
}
