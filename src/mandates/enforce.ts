// The bridge between a stored mandate and the store's decide transaction.
// Both stores follow the same three steps inside that transaction:
//   1. planMandate: read the agent's mandate, find the spend rows it needs;
//   2. lock those rows (PostgreSQL: SELECT … FOR UPDATE in key order;
//      SQLite: the write transaction already excludes every other writer);
//   3. plan.evaluate(spend): decide, and write plan's updates only if the
//      challenge's own conditional update won.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { type Consumption, type Context, evaluateMandate, type MandateResult, type MandateViolation, type Spend, type SpendKey, spendKeys } from "./evaluate";
import type { Mandate } from "./schema";

/** The reason a challenge fails when its mandate forbids it; `detail` names the constraint. */
export const MANDATE_VIOLATION = "mandate_violation";

/** How a mandate is kept: its canonical JSON and, when a principal signed it, the JWS verbatim. */
export interface StoredMandate {
  /** RFC 8785 canonical JSON of the mandate object (for a JWS: of its payload's mandate). */
  mandate: string;
  mandateJws: string | null;
  /** The JWS's iat (seconds), or null for an unsigned mandate. */
  mandateIat: number | null;
}

export const storedMandate = (mandate: Mandate, signed?: { jws: string; iat: number }): StoredMandate => ({
  mandate: canonicalize(mandate) as string,
  mandateJws: signed?.jws ?? null,
  mandateIat: signed?.iat ?? null,
});

/**
 * What names the mandate in receipts and decisions: "sha256:<hex>" of exactly
 * what is stored and was signed, the JWS when there is one, else the
 * canonical mandate JSON.
 */
export const mandateHash = (stored: { mandate: string; mandateJws: string | null }): string =>
  `sha256:${createHash("sha256")
    .update(stored.mandateJws ?? stored.mandate, "utf8")
    .digest("hex")}`;

/** The challenge facts a mandate is checked against. */
export interface MandateScope {
  keyId: string;
  agentId: string;
  action: string;
  /** The challenge's context as stored (canonical JSON), or null. */
  context: string | null;
  /**
   * A group decision: the group's mandate is held per pseudonym, and the
   * root the proof named must still be acceptable in the deciding
   * transaction (src/groups/roots.ts); else the decision fails `not_member`.
   */
  group?: { groupId: string; root: string; pseudonym: string };
}

/** What a decision records about the mandate it was checked against. */
export interface MandateDecision {
  hash: string;
  /** What a verified decision consumed, per limit; empty for a violation. */
  consumed: Consumption[];
  violation: MandateViolation | null;
}

export interface MandatePlan {
  hash: string;
  /** The spend rows to lock, in the order to lock them. */
  keys: SpendKey[];
  evaluate(spend: ReadonlyMap<string, Spend>): MandateResult;
}

/** The plan for checking `stored` at `now`, or null when the agent has no mandate. */
export function planMandate(stored: { mandate?: string | null; mandateJws?: string | null } | null, scope: MandateScope, now: number): MandatePlan | null {
  if (!stored?.mandate) return null;
  // Validated when it was stored; parsed again here because this is the copy the decision commits against.
  const mandate = JSON.parse(stored.mandate) as Mandate;
  const context = (scope.context === null ? {} : JSON.parse(scope.context)) as Context;
  return {
    hash: mandateHash({ mandate: stored.mandate, mandateJws: stored.mandateJws ?? null }),
    keys: spendKeys(mandate, scope.action, context, now),
    evaluate: (spend) => evaluateMandate(mandate, scope.action, context, now, spend),
  };
}

/**
 * The decision to write once the mandate is evaluated: a violation turns a
 * verified decision into a failed one. The mandate decision joins the
 * decision's evidence (stored in the same update), so a receipt signed from
 * the stored row, by any node at any later time, names the same mandate and
 * consumption; a mandate that passed is listed among the passed checks.
 * A receipt signed before the check (the proof path presigns) no longer
 * matches that evidence, so it is dropped and signed from the stored row.
 */
export function applyMandate<
  D extends { status: string; confidence: number | null; reason: string | null; evidence?: { checks: string[] } | null; receipt?: string | null },
>(decision: D, plan: MandatePlan, result: MandateResult): { decision: D; mandate: MandateDecision } {
  const mandate: MandateDecision = result.ok
    ? { hash: plan.hash, consumed: result.consumed, violation: null }
    : { hash: plan.hash, consumed: [], violation: result.violation };
  const evidence = decision.evidence && {
    ...decision.evidence,
    checks: result.ok ? [...decision.evidence.checks, MANDATE_CHECK] : decision.evidence.checks,
    mandate,
  };
  if (result.ok) return { decision: { ...decision, evidence, receipt: null }, mandate };
  return { decision: { ...decision, status: "failed", confidence: null, reason: MANDATE_VIOLATION, evidence, receipt: null }, mandate };
}

/** The check a standing mandate adds to a decision's evidence (one of the receipts' CHECKS, src/receipts/claims.ts). */
export const MANDATE_CHECK = "mandate";
export type MandateCheck = typeof MANDATE_CHECK;
