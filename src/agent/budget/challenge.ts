// A budget challenge as the agent reads it (the service's answer to
// POST /v1/verify/challenge for a budgeted group, or a 401's), and what it
// recomputes before it proves: everything here is public, nothing depends
// on which member proves.
//
// - payee: from the origin the agent is sending to (never the challenge's
//   word): the challenge's `payee` must be that origin, serialized, and
//   `payee_field` its field value;
// - amount and currency: from the context the caller means (minor units,
//   exactly); the challenge's must be those;
// - ctx: budgetMessage(nonce, action, context); group: budgetGroup(group_id);
// - periods: one clock reading (day, week and month are those of `minute`),
//   each within ±1 of the agent's own clock (clocks drift, and a service may
//   run on another clock; the period is what counts).
// `notes_root`, `notes_size`, `merkle_tree_root` and `size` are hints, never
// used to choose what is proved.
import canonicalize from "canonicalize";
import { budgetGroup, budgetMessage, currencyField, minorUnits, payeeField, type Periods, periodsAt, serializeOrigin } from "../../budgets/encoding";
import { boundOrigin } from "../../groups/derivation";
import type { JsonObject } from "../../identity/encoding";
import { parseFieldElement } from "../../identity/field";
import { ChallengeError } from "../checks";
import { BudgetSpendError } from "./error";

/** The `budget` object of a budget challenge (the wire's decimal strings). */
export interface BudgetChallengeFields {
  group: string;
  payee: string;
  payee_field: string;
  amount: string;
  currency: string;
  currency_field: string;
  periods: { day: string; week: string; month: string; minute: string };
  ctx: string;
  notes_root?: string;
  notes_size?: number;
}

export interface BudgetChallenge {
  challenge_id: string;
  nonce: string;
  action?: string;
  context?: JsonObject;
  group_id: string;
  circuit_id: string;
  /** Seconds the challenge is valid for, from `timestamp` (Unix s) or from when it was read. */
  expires_in?: number;
  timestamp?: number;
  budget: BudgetChallengeFields;
  merkle_tree_root?: string;
  size?: number;
}

/** What the agent will prove, all recomputed: the public values the service sets. */
export interface CheckedBudgetChallenge {
  challenge: BudgetChallenge;
  action: string;
  context: JsonObject;
  group: bigint;
  payee: string;
  payeeField: bigint;
  amount: bigint;
  currency: string;
  currencyField: bigint;
  periods: Periods;
  ctx: bigint;
}

const bad = (field: string, what: string) => new BudgetSpendError("challenge", `the challenge's ${field} must be ${what}`);
const decimal = (value: unknown): bigint | null => (typeof value === "string" ? parseFieldElement(value) : null);

/** `value` checked as a budget challenge's shape; BudgetSpendError("challenge") naming the first field that is wrong. */
export function parseBudgetChallenge(value: unknown): BudgetChallenge {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw bad("text", "a JSON object");
  const c = value as Record<string, unknown>;
  for (const name of ["challenge_id", "nonce", "group_id", "circuit_id"] as const)
    if (typeof c[name] !== "string" || c[name] === "") throw bad(name, "a non-empty string");
  if (!String(c.circuit_id).startsWith("budget_spend-")) throw bad("circuit_id", "a budget_spend circuit's id (is this a budget challenge?)");
  const b = c.budget as Record<string, unknown> | undefined;
  if (typeof b !== "object" || b === null || Array.isArray(b)) throw bad("budget", "an object (is this a budget challenge?)");
  for (const name of ["group", "payee_field", "amount", "currency_field", "ctx"] as const)
    if (decimal(b[name]) === null) throw bad(`budget.${name}`, "a decimal field element");
  if (typeof b.payee !== "string" || typeof b.currency !== "string") throw bad("budget.payee and budget.currency", "strings");
  const periods = b.periods as Record<string, unknown> | undefined;
  if (typeof periods !== "object" || periods === null) throw bad("budget.periods", "an object {day, week, month, minute}");
  for (const name of ["day", "week", "month", "minute"] as const) if (decimal(periods[name]) === null) throw bad(`budget.periods.${name}`, "a decimal");
  if (c.action !== undefined && typeof c.action !== "string") throw bad("action", "a string");
  if (c.context !== undefined && (typeof c.context !== "object" || c.context === null || Array.isArray(c.context))) throw bad("context", "a JSON object");
  return c as unknown as BudgetChallenge;
}

/** What the caller means: the action and context it asked for, and the origin it is paying. */
export interface BudgetIntent {
  action?: string;
  context?: JsonObject;
  /** The origin the payment goes to (scheme://host[:port], or a URL on it). Required: the payee is recomputed from it. */
  origin?: string;
  /** The agent's clock, Unix ms (default Date.now()). */
  now?: number;
}

/**
 * The challenge held to what the caller means and to what the agent
 * computes itself (ChallengeError "request_mismatch" for a challenge that is
 * not the caller's request, BudgetSpendError "challenge" for a public value
 * computed otherwise), with the values the proof will carry.
 */
export function checkBudgetChallenge(challenge: BudgetChallenge, intent: BudgetIntent): CheckedBudgetChallenge {
  const action = intent.action ?? challenge.action;
  if (typeof action !== "string") throw new ChallengeError("malformed", "the challenge names no action and none is given (action, --action)", "action");
  if (challenge.action !== undefined && challenge.action !== action)
    throw new ChallengeError("request_mismatch", `the challenge says action "${challenge.action}", the caller means "${action}": refused`, "action");
  const context = intent.context ?? challenge.context ?? {};
  if (challenge.context !== undefined && canonicalize(challenge.context) !== canonicalize(context))
    throw new ChallengeError("request_mismatch", "the challenge's context is not the one the caller means: refused", "context");
  const b = challenge.budget;

  // The payee: the origin the agent pays, never the challenge's word for it.
  if (intent.origin === undefined)
    throw new ChallengeError("request_mismatch", "name the origin the payment is for (origin, --origin): the payee is computed from it", "origin");
  const origin = serializeOrigin(URL.canParse(intent.origin) ? new URL(intent.origin).origin : intent.origin);
  if (!origin.ok) throw new TypeError(`origin must be an http(s) origin or URL, not ${JSON.stringify(intent.origin)}`);
  const bound = boundOrigin(context);
  if (bound !== null && bound !== origin.value)
    throw new ChallengeError("request_mismatch", `the challenge is for origin ${bound}, the payment is for ${origin.value}: refused`, "origin");
  if (b.payee !== origin.value) throw new BudgetSpendError("challenge", `the challenge pays ${b.payee}, the agent is paying ${origin.value}: refused`);
  const payee = payeeField(origin.value);
  if (BigInt(b.payee_field) !== payee)
    throw new BudgetSpendError("challenge", `the challenge's payee_field is not the field value of ${origin.value}: refused`);

  // Amount and currency: from the context the caller means.
  const currency = context.currency;
  if (typeof currency !== "string") throw new BudgetSpendError("challenge", "the context names no currency: a budget spend pays an amount in a currency");
  const amount = minorUnits(context.amount, currency);
  if (!amount.ok) throw new BudgetSpendError("challenge", `the context's amount ${amount.error}`);
  if (amount.value === 0n) throw new BudgetSpendError("challenge", "the context's amount is 0: a spend pays at least one minor unit");
  if (b.currency !== currency || BigInt(b.currency_field) !== currencyField(currency))
    throw new BudgetSpendError("challenge", `the challenge's currency is ${b.currency} (${b.currency_field}), the context's ${currency}: refused`);
  if (BigInt(b.amount) !== amount.value)
    throw new BudgetSpendError("challenge", `the challenge's amount is ${b.amount} minor units, the context's ${amount.value}: refused`);

  const group = budgetGroup(challenge.group_id);
  if (BigInt(b.group) !== group)
    throw new BudgetSpendError("challenge", `the challenge's budget.group is not the value of group ${challenge.group_id}: refused`);
  const ctx = budgetMessage({ nonce: challenge.nonce, action, context });
  if (BigInt(b.ctx) !== ctx) throw new BudgetSpendError("challenge", "the challenge's ctx is not the one its nonce, action and context give: refused");

  // Periods: one clock reading, near the agent's own.
  const minute = BigInt(b.periods.minute);
  if (minute > BigInt(Number.MAX_SAFE_INTEGER) / 60_000n) throw bad("budget.periods.minute", "a minute since the epoch");
  const periods = periodsAt(Number(minute) * 60_000);
  for (const name of ["day", "week", "month"] as const)
    if (BigInt(b.periods[name]) !== periods[name])
      throw new BudgetSpendError("challenge", `the challenge's ${name} ${b.periods[name]} is not the ${name} of its minute ${minute}: refused`);
  const mine = periodsAt(intent.now ?? Date.now());
  for (const name of ["day", "week", "month"] as const)
    if (periods[name] - mine[name] > 1n || mine[name] - periods[name] > 1n)
      throw new BudgetSpendError(
        "challenge",
        `the challenge's ${name} ${periods[name]} is more than one from this agent's (${mine[name]}): a spend counts in the period its challenge names; refused`,
      );
  return {
    challenge,
    action,
    context,
    group,
    payee: origin.value,
    payeeField: payee,
    amount: amount.value,
    currency,
    currencyField: currencyField(currency),
    periods,
    ctx,
  };
}
