// Budget terms from zkagent's own mandate JSON (docs/mandates.md), the other
// way an owner states a member's terms: exactly one monetary limit, its
// `max_amount` per purchase and, optionally, `max_total` per `period`;
// `merchants` as origins; `valid_until` as the expiry. What a spend's
// statement has no place for (`actions`, a limit's `action`, `max_count`) is
// refused by name, never dropped.
import { taggedField } from "../groups/derivation";
import type { Mandate } from "../mandates/schema";
import { parseMandate, parseTimestamp } from "../mandates/schema";
import { MAX_AMOUNT, minorUnits, type Result, serializeOrigin } from "./encoding";
import { type BudgetTerms, termsProblem } from "./terms";

export const TERMS_TAG = "zkagent/budget-terms/v1";

const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });

/** The terms a zkagent mandate sets for a budgeted member; `now` (Unix ms) for validity, `nonce` makes its τ one per enrolment. */
export function termsFromMandate(value: unknown, at: { now: number; nonce: string }): Result<BudgetTerms> {
  const parsed = parseMandate(value);
  if (!parsed.ok) return parsed;
  const mandate: Mandate = parsed.value;
  if (mandate.actions !== undefined) return fail("actions cannot be enforced on a budget: a spend pays, whatever the action is called");
  const limits = mandate.limits ?? [];
  if (limits.length !== 1) return fail("limits must hold exactly one limit, with currency and max_amount");
  const limit = limits[0]!;
  if (limit.action !== undefined) return fail("limits[0].action cannot be enforced on a budget");
  if (limit.max_count !== undefined) return fail("limits[0].max_count cannot be enforced: a budget counts money, not purchases");
  if (limit.currency === undefined || limit.max_amount === undefined) return fail("limits[0] needs currency and max_amount");
  const max = minorUnits(limit.max_amount, limit.currency);
  if (!max.ok) return fail(`limits[0].max_amount ${max.error}`);
  let budget = MAX_AMOUNT;
  if (limit.max_total !== undefined) {
    const total = minorUnits(limit.max_total, limit.currency);
    if (!total.ok) return fail(`limits[0].max_total ${total.error}`);
    budget = total.value;
  }
  if (mandate.valid_until === undefined) return fail("valid_until is required: a budget without an end is not accepted");
  const until = parseTimestamp(mandate.valid_until)!;
  if (until <= at.now) return fail("valid_until is in the past");
  if (mandate.valid_from !== undefined && parseTimestamp(mandate.valid_from)! > at.now) {
    return fail("valid_from is in the future: a budget's statement has an end of validity, not a start; enrol the member when it starts");
  }
  let payees: string[] | null = null;
  if (mandate.merchants !== undefined) {
    payees = [];
    for (const [i, merchant] of mandate.merchants.entries()) {
      const origin = serializeOrigin(merchant);
      if (!origin.ok || origin.value !== merchant)
        return fail(`merchants[${i}] must be an origin such as https://shop.example: a budget binds a payee by its origin`);
      payees.push(origin.value);
    }
  }
  const terms: BudgetTerms = {
    currency: limit.currency,
    min: 0n,
    max: max.value,
    budget,
    kind: limit.period ?? "lifetime",
    once: false,
    payees,
    expiresAt: Math.floor(until / 1000),
    mandate: taggedField(TERMS_TAG, { nonce: at.nonce, terms: mandate }),
  };
  const problem = termsProblem(terms);
  return problem ? fail(problem) : { ok: true, value: terms };
}
