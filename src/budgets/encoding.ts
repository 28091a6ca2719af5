// How the budget scheme's public values are made from what people write:
// currencies, amounts in exact minor units, payees, periods, the group and
// the challenge (docs/protocol.md, "Encodings (budgets v1)"). Pure functions;
// the service computes them to rebuild a spend's public signals and the
// agent computes them to check what it is asked to prove.
import { taggedField } from "../groups/derivation";
import { canonicalJson, type JsonObject } from "../identity/encoding";
import { parseAmount, parseDecimal } from "../mandates/decimal";

export const GROUP_TAG = "zkagent/budget-group/v1";
export const PAYEE_TAG = "zkagent/payee/v1";
export const MESSAGE_TAG = "zkagent/budget-message/v1";
export const NOTES_TAG = "zkagent/budget-notes/v1";
export const ENROLMENT_TAG = "zkagent/budget-enrolment/v1";

/** Amounts are integers of minor units below 2^64: the circuit's 64-bit range. */
export const AMOUNT_LIMIT = 1n << 64n;
export const MAX_AMOUNT = AMOUNT_LIMIT - 1n;

export type Result<T> = { ok: true; value: T } | { ok: false; error: string };

/** The group's value in every chain: one per group, whichever merchant asks (per-merchant values would make budgets per merchant). */
export const budgetGroup = (groupId: string): bigint => taggedField(GROUP_TAG, { group_id: groupId });

/** The notes tree's first leaf: fixed, so no acceptable notes root is 0. */
export const NOTES_GENESIS_LEAF = taggedField(NOTES_TAG, {});

/** The challenge's binding: its nonce, action and canonical context ("{}" when none). */
export const budgetMessage = (challenge: { nonce: string; action: string; context: JsonObject | undefined }): bigint =>
  taggedField(MESSAGE_TAG, { nonce: challenge.nonce, action: challenge.action, context: canonicalJson(challenge.context) });

/** The key-binding nonce an AP2 mandate's agent signs at enrolment: this identity, this group. */
export const enrolmentNonce = (groupId: string, identityCommitment: bigint): string =>
  taggedField(ENROLMENT_TAG, { group_id: groupId, idc: identityCommitment.toString() }).toString();

// ISO 4217 minor units. Two decimals unless listed; codes whose minor unit
// is "N.A." (metals, SDR, fund and testing codes) have no amount in minor
// units and are refused.
const EXPONENT: Record<string, number> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};
const NO_MINOR_UNIT = new Set(["XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XDR", "XPD", "XPT", "XSU", "XTS", "XUA", "XXX"]);
let known: Set<string> | undefined;

/** The ISO 4217 exponent of a currency code, or why it cannot be a budget's currency. */
export function currencyExponent(code: string): Result<number> {
  if (!/^[A-Z]{3}$/.test(code)) return { ok: false, error: "must be an ISO 4217 code: three capital letters such as EUR" };
  if (NO_MINOR_UNIT.has(code)) return { ok: false, error: `${code} has no minor unit (ISO 4217 "N.A."): amounts in it cannot be counted in minor units` };
  known ??= new Set(Intl.supportedValuesOf("currency"));
  if (!known.has(code)) return { ok: false, error: `${code} is not an ISO 4217 currency code` };
  return { ok: true, value: EXPONENT[code] ?? 2 };
}

/** The currency as the circuit sees it: its three ASCII bytes, big-endian (EUR = 4,543,826). */
export function currencyField(code: string): bigint {
  if (!/^[A-Z]{3}$/.test(code)) throw new RangeError("a currency is three capital letters");
  return BigInt((code.charCodeAt(0) << 16) | (code.charCodeAt(1) << 8) | code.charCodeAt(2));
}

/**
 * An amount in minor units from its decimal text ("20.00", "20", "0.5") or a
 * JSON number read through its canonical text, exactly: more decimals than the
 * currency has, a sign, an exponent in a string, or 2^64 minor units and more
 * are refused, never rounded.
 */
export function minorUnits(value: unknown, currency: string): Result<bigint> {
  const exponent = currencyExponent(currency);
  if (!exponent.ok) return exponent;
  const decimal = typeof value === "string" ? parseDecimal(value) : parseAmount(value);
  if (!decimal) return { ok: false, error: 'must be a non-negative decimal such as "20.00" (no sign, no exponent)' };
  // "20.00" has scale 2 but is whole units; strip trailing zeros before judging the precision.
  let { units, scale } = decimal;
  while (scale > exponent.value && units % 10n === 0n) {
    units /= 10n;
    scale--;
  }
  if (scale > exponent.value) return { ok: false, error: `has more decimals than ${currency} has (${exponent.value})` };
  const minor = units * 10n ** BigInt(exponent.value - scale);
  if (minor >= AMOUNT_LIMIT) return { ok: false, error: `must be below 2^64 minor units of ${currency}` };
  return { ok: true, value: minor };
}

/** Minor units as the currency writes them in major units: 2000 EUR → "20.00", 1500 JPY → "1500". */
export function majorUnits(minor: bigint, currency: string): string {
  const exponent = currencyExponent(currency);
  if (!exponent.ok) throw new RangeError(`currency ${exponent.error}`);
  if (exponent.value === 0) return minor.toString();
  const text = minor.toString().padStart(exponent.value + 1, "0");
  return `${text.slice(0, -exponent.value)}.${text.slice(-exponent.value)}`;
}

/** The RFC 6454 ASCII serialization of an http(s) URL's origin, or why not. */
export function serializeOrigin(text: unknown): Result<string> {
  if (typeof text !== "string" || text.length === 0 || text.length > 2048) return { ok: false, error: "must be an http or https URL" };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, error: "must be an http or https URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, error: "must be an http or https URL" };
  return { ok: true, value: url.origin };
}

/** The payee as the circuit sees it: from a merchant key's registered origin, never from a request body. */
export function payeeField(origin: string): bigint {
  const serialized = serializeOrigin(origin);
  if (!serialized.ok || serialized.value !== origin) throw new RangeError(`a payee is an origin in its serialized form (${JSON.stringify(origin)})`);
  return taggedField(PAYEE_TAG, { origin });
}

export interface Periods {
  /** Days since 1970-01-01 UTC. */
  day: bigint;
  /** Monday-to-Sunday UTC weeks: week 0 holds 1970-01-01 (a Thursday). */
  week: bigint;
  /** 12·(year − 1970) + (month − 1), UTC. */
  month: bigint;
  /** Minutes since the epoch, for the expiry. */
  minute: bigint;
}

const DAY_MS = 86_400_000;

/** Every period index from one clock reading (Unix ms), so a challenge's day, week and month never disagree. */
export function periodsAt(ms: number): Periods {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError("a clock reading is a non-negative Unix time in ms");
  const day = Math.floor(ms / DAY_MS);
  const date = new Date(ms);
  return {
    day: BigInt(day),
    week: BigInt(Math.floor((day + 3) / 7)),
    month: BigInt(12 * (date.getUTCFullYear() - 1970) + date.getUTCMonth()),
    minute: BigInt(Math.floor(ms / 60_000)),
  };
}
