// Enforcing a mandate at verification: a pure function of the mandate, the
// challenge's action and context, the decision time and the spend already
// counted in the current periods. The store calls it inside the transaction
// that decides the challenge, with the spend rows locked, so what it reads is
// what the decision commits against (see docs/mandates.md).
import { addDecimal, compareDecimal, type Decimal, formatDecimal, parseAmount, parseDecimal, parseTotal } from "./decimal";
import { type Period, periodStart } from "./period";
import { type Mandate, type MandateLimit, parseTimestamp } from "./schema";

/** The constraint a verification broke: the `detail` of a `mandate_violation`. */
export type MandateViolation = "action" | "merchant" | "validity" | "currency" | "amount_missing" | "max_amount" | "max_total" | "max_count";

/**
 * What one period total counts. Spend belongs to the agent, not to one version
 * of its mandate: replacing the mandate mid-day keeps the day's total, so
 * editing a mandate can never hand out a fresh budget. `action` and
 * `currency` are "" for a limit on every action or a count-only limit.
 */
export interface SpendKey {
  action: string;
  currency: string;
  period: Period;
  periodStart: number;
}

export interface Spend {
  /** Exact decimal text of the verified amounts. */
  total: string;
  count: number;
}

export const NO_SPEND: Spend = { total: "0", count: 0 };

/** One string per SpendKey, for maps. */
export const spendKeyId = (key: SpendKey): string => JSON.stringify([key.action, key.currency, key.period, key.periodStart]);

/** What a verified decision consumed of one limit (named by its index in `limits`). */
export interface Consumption {
  limit: number;
  period_start: string;
  /** The amount counted, or null for a count-only limit. */
  amount: string | null;
  currency: string | null;
}

export type MandateResult = { ok: true; consumed: Consumption[]; updates: { key: SpendKey; spend: Spend }[] } | { ok: false; violation: MandateViolation };

export type Context = Record<string, unknown>;

interface Applicable {
  limits: { index: number; limit: MandateLimit }[];
  amount: Decimal | null;
  currency: string | null;
}

/** The checks that need no spend, and the limits that apply to this verification. */
function applicable(mandate: Mandate, action: string, context: Context, now: number): Applicable | MandateViolation {
  if (mandate.actions !== undefined && !mandate.actions.includes(action)) return "action";
  if (mandate.merchants !== undefined) {
    const merchant = context.merchant;
    if (typeof merchant !== "string" || !mandate.merchants.includes(merchant)) return "merchant";
  }
  // valid_from is inclusive, valid_until exclusive (as JWT's nbf and exp).
  if (mandate.valid_from !== undefined && now < parseTimestamp(mandate.valid_from)!) return "validity";
  if (mandate.valid_until !== undefined && now >= parseTimestamp(mandate.valid_until)!) return "validity";

  const matching = (mandate.limits ?? [])
    .map((limit, index) => ({ index, limit }))
    .filter(({ limit }) => limit.action === undefined || limit.action === action);
  // Limits with a currency are money limits: the action may then be paid only
  // in one of their currencies, and only with a stated amount.
  const currencies = new Set(matching.flatMap(({ limit }) => (limit.currency === undefined ? [] : [limit.currency])));
  if (currencies.size === 0) return { limits: matching, amount: null, currency: null };
  const currency = context.currency;
  if (typeof currency !== "string" || !currencies.has(currency)) return "currency";
  const amount = parseAmount(context.amount);
  if (amount === null) return "amount_missing";
  return { limits: matching.filter(({ limit }) => limit.currency === undefined || limit.currency === currency), amount, currency };
}

/** The period total a limit is held to at `now`; null for a limit without period (max_amount only). */
export const limitSpendKey = (limit: MandateLimit, now: number): SpendKey | null =>
  limit.period === undefined
    ? null
    : { action: limit.action ?? "", currency: limit.currency ?? "", period: limit.period, periodStart: periodStart(limit.period, now) };

/**
 * The period totals this verification would be checked against (and add to):
 * the rows the store must lock before calling evaluateMandate. Empty when a
 * check that needs no spend already fails.
 */
export function spendKeys(mandate: Mandate, action: string, context: Context, now: number): SpendKey[] {
  const found = applicable(mandate, action, context, now);
  if (typeof found === "string") return [];
  const keys = new Map<string, SpendKey>();
  for (const { limit } of found.limits) {
    const key = limitSpendKey(limit, now);
    if (key) keys.set(spendKeyId(key), key);
  }
  // A fixed order, so that concurrent transactions lock rows in the same order and never deadlock.
  return [...keys.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, key]) => key);
}

/**
 * Ok with what the verification consumes and the new period totals, or the
 * violated constraint. Constraints are checked in the order of
 * MandateViolation; each kind over every applicable limit before the next.
 */
export function evaluateMandate(mandate: Mandate, action: string, context: Context, now: number, spendSoFar: ReadonlyMap<string, Spend>): MandateResult {
  const found = applicable(mandate, action, context, now);
  if (typeof found === "string") return { ok: false, violation: found };
  const { limits, amount, currency } = found;
  const spendOf = (key: SpendKey) => spendSoFar.get(spendKeyId(key)) ?? NO_SPEND;
  const monetary = limits.filter(({ limit }) => limit.currency !== undefined);

  for (const { limit } of monetary) {
    if (limit.max_amount !== undefined && compareDecimal(amount!, parseDecimal(limit.max_amount)!) > 0) return { ok: false, violation: "max_amount" };
  }
  for (const { limit } of monetary) {
    if (limit.max_total === undefined) continue;
    const total = addDecimal(parseTotal(spendOf(limitSpendKey(limit, now)!).total), amount!);
    if (compareDecimal(total, parseDecimal(limit.max_total)!) > 0) return { ok: false, violation: "max_total" };
  }
  for (const { limit } of limits) {
    if (limit.max_count !== undefined && spendOf(limitSpendKey(limit, now)!).count + 1 > limit.max_count) return { ok: false, violation: "max_count" };
  }

  const consumed: Consumption[] = [];
  const updates = new Map<string, { key: SpendKey; spend: Spend }>();
  for (const { index, limit } of limits) {
    const key = limitSpendKey(limit, now);
    if (!key) continue;
    const counted = key.currency === "" ? null : amount!;
    consumed.push({
      limit: index,
      period_start: new Date(key.periodStart).toISOString(),
      amount: counted && formatDecimal(counted),
      currency: counted && currency,
    });
    const id = spendKeyId(key);
    if (!updates.has(id)) {
      const before = spendOf(key);
      const total = counted ? formatDecimal(addDecimal(parseTotal(before.total), counted)) : before.total;
      updates.set(id, { key, spend: { total, count: before.count + 1 } });
    }
  }
  return { ok: true, consumed, updates: [...updates.values()] };
}
