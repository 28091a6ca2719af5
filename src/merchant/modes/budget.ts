// A budget claim (`Authorization: ZKAgent budget="…"`): a member of a
// budgeted group spends, in zero knowledge, from the budget its group's owner
// enrolled it with (docs/protocol.md, "Budgets across merchants"). The
// service checks the proof, the member's terms and its running total, and
// consumes the spend's one-time nullifier; the merchant learns that this
// amount in this currency was spent for this request, and nothing of who.
//
// As for group claims, the merchant lists the groups it accepts (`budgets`)
// and the guard checks the group at each step: the claim before a challenge
// is created, the challenge's group before the proof is spent, the answer's
// after. A spend has a price, so the route's context must give `amount` and
// `currency` (what the challenge binds and the service charges); a route
// that gives none is the merchant's mistake, named through onError. The
// service's answer must say it spent exactly that, to this origin: any other
// answer is one the guard does not understand (502). The session's scheme is
// `budget`; it names the group, the amount, the currency and the spend's
// public values (its nullifier, the commitment to the new total), never a
// member.
import type { JsonObject } from "../../identity/encoding";
import { compareDecimal, type Decimal, parseAmount } from "../../mandates/decimal";
import type { Report } from "../problems";
import { budgetNotAccepted, invalidRequest, requestMismatch, verifierUnavailable } from "../respond";
import type { ServiceAnswer } from "../service";
import type { ClaimKind } from "./types";

type Body = ServiceAnswer["body"];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Whether a challenge's status is a budget spend's: it carries `spend` (null
 * until decided), or it names a group and no pseudonym (a group
 * challenge's status always has `pseudonym`, null until decided).
 */
export const isBudgetStatus = (status: Body): boolean =>
  Object.hasOwn(status, "spend") || (typeof status.group_id === "string" && !Object.hasOwn(status, "pseudonym"));

/**
 * The price the route's context declares (an exact decimal and a currency
 * code), or why there is none. Whether the currency is one ISO 4217 counts in
 * minor units, and the amount exact in them, is the service's to say (400
 * naming the field, answered as `invalid_claim`): the guard carries no
 * currency table.
 */
function priceOf(context: JsonObject): { ok: true; currency: string; amount: Decimal } | { ok: false; missing: boolean; message: string } {
  const { amount, currency } = context;
  if (amount === undefined || currency === undefined) {
    const absent = [amount === undefined ? "amount" : null, currency === undefined ? "currency" : null].filter(Boolean).join(" and ");
    return { ok: false, missing: true, message: `this route's context gives no ${absent}: a budget spend needs both` };
  }
  if (typeof currency !== "string" || !/^[A-Z]{3}$/.test(currency))
    return { ok: false, missing: false, message: "context.currency must be an ISO 4217 code: three capital letters such as EUR" };
  const decimal = parseAmount(amount);
  if (decimal === null) return { ok: false, missing: false, message: 'context.amount must be a non-negative decimal such as "20.00" (no sign, no exponent)' };
  return { ok: true, currency, amount: decimal };
}

export function budgetClaim(budgets: readonly string[], report: Report): ClaimKind {
  const accepted = new Set(budgets);
  return {
    scheme: "budget",
    param: "budget",
    field: "group_id",
    admit: (claimed) => (accepted.has(claimed) ? null : budgetNotAccepted(claimed)),
    checkContext(declared) {
      const price = priceOf(declared);
      if (price.ok) return null;
      // No amount or currency at all: the route was set up without a price (the merchant's to mend); a value that is not one is the request's.
      if (price.missing)
        report({
          reason: "budget_context",
          level: "error",
          message: `${price.message}: give the route a context function that returns amount and currency (e.g. bodyFields(["amount", "currency"]))`,
        });
      return invalidRequest(price.message);
    },
    checkChallenge(created, claimed) {
      const budget = created.budget;
      if (isObject(budget) && typeof budget.payee === "string" && typeof budget.amount === "string" && typeof budget.currency === "string") return null;
      return `group "${claimed}" is not a budgeted group at the service (its challenge carries no budget): list it in groups, not budgets`;
    },
    // Or a status of the group shape (a pseudonym, null until decided) for a group the merchant lists as budgeted:
    // the lists are disjoint, and the service, not the status's shape, says what a group is.
    owns: (status) => isBudgetStatus(status) || (typeof status.group_id === "string" && accepted.has(status.group_id)),
    checkStatus(status, claimed) {
      const group = status.group_id;
      if (typeof group !== "string") return verifierUnavailable();
      if (claimed !== undefined && group !== claimed) return requestMismatch("the challenge was issued for another group");
      // Credentials that name no claim present a challenge of whichever group it was made for.
      if (!accepted.has(group)) return budgetNotAccepted(group);
      return null;
    },
    session(verified, status, proved) {
      const group = verified.group_id;
      const spend = verified.spend;
      if (typeof group !== "string" || !isObject(spend)) return verifierUnavailable();
      if (!accepted.has(group)) return budgetNotAccepted(group);
      const { nullifier, commitment, amount, currency, payee } = spend;
      if (
        typeof nullifier !== "string" ||
        typeof commitment !== "string" ||
        typeof amount !== "string" ||
        typeof currency !== "string" ||
        typeof payee !== "string"
      )
        return verifierUnavailable();
      // The service verified the challenge's group, for the price and the origin the challenge bound; an answer naming
      // another group, another price, another payee or another nullifier than the spend's is not one the guard understands.
      const price = priceOf(proved.context);
      const spent = parseAmount(amount);
      if (
        group !== status.group_id ||
        verified.agent_id !== nullifier ||
        !price.ok ||
        spent === null ||
        currency !== price.currency ||
        compareDecimal(spent, price.amount) !== 0 ||
        payee !== proved.request.origin
      )
        return verifierUnavailable();
      return { ok: true, session: { scheme: "budget", ...proved, group_id: group, amount, currency, spend: { nullifier, commitment } } };
    },
  };
}
