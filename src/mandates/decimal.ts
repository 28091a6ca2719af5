// Exact decimal amounts. Money is never a binary float here: every amount is
// parsed from its decimal text into an integer count of 10^-scale units
// (BigInt), and sums and comparisons are exact at any scale.
//
// Two grammars:
// - an amount *string* (mandate limits, `context.amount` as a string) is plain
//   decimal notation: digits, an optional fraction, no sign, no exponent, no
//   leading zeros ("0", "20", "20.00", "0.05");
// - a JSON *number* in `context.amount` is read through its canonical JSON
//   text (RFC 8785 / ECMAScript Number::toString, which is how the service
//   stores the context): "20", "20.5", "1e+21", "1e-7". That text is the
//   shortest decimal that round-trips the caller's number, so reading it
//   exactly is reading what the caller wrote, up to notation.

export interface Decimal {
  /** The amount in units of 10^-scale. Never negative. */
  readonly units: bigint;
  readonly scale: number;
}

/** Digits before and after the point an amount string may have. */
export const MAX_INTEGER_DIGITS = 30;
export const MAX_FRACTION_DIGITS = 18;

export const AMOUNT_PATTERN = `^(0|[1-9][0-9]{0,${MAX_INTEGER_DIGITS - 1}})(\\.[0-9]{1,${MAX_FRACTION_DIGITS}})?$`;
const AMOUNT = new RegExp(AMOUNT_PATTERN);
// ECMAScript Number::toString of a finite non-negative number.
const NUMBER_TEXT = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:e([+-][0-9]+))?$/;

/** An amount string in plain decimal notation, or null. */
export function parseDecimal(text: string): Decimal | null {
  if (!AMOUNT.test(text)) return null;
  const [whole, fraction = ""] = text.split(".");
  return { units: BigInt(whole! + fraction), scale: fraction.length };
}

/**
 * `context.amount` as the mandate reads it: a decimal string, or a JSON
 * number taken by its canonical text. Null for anything else, including
 * negative amounts (which would otherwise lower a period total).
 */
export function parseAmount(value: unknown): Decimal | null {
  if (typeof value === "string") return parseDecimal(value);
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return null;
  const match = NUMBER_TEXT.exec(String(value));
  if (!match) return null;
  const [, whole, fraction = "", exponentText = "0"] = match;
  const exponent = Number(exponentText);
  const digits = BigInt(whole! + fraction);
  const scale = fraction.length - exponent;
  return scale >= 0 ? { units: digits, scale } : { units: digits * 10n ** BigInt(-scale), scale: 0 };
}

const TOTAL = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;

/**
 * A stored period total (formatDecimal's output, which may outgrow the
 * amount-string bounds by summing). Anything else is a corrupted row: fail
 * loudly rather than count from a wrong figure.
 */
export function parseTotal(text: string): Decimal {
  if (!TOTAL.test(text)) throw new Error(`corrupt period total ${JSON.stringify(text)}`);
  const [whole, fraction = ""] = text.split(".");
  return { units: BigInt(whole! + fraction), scale: fraction.length };
}

const rescale = (value: Decimal, scale: number): bigint => value.units * 10n ** BigInt(scale - value.scale);

/** -1, 0 or 1 as a is below, equal to or above b. */
export function compareDecimal(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const scale = Math.max(a.scale, b.scale);
  const x = rescale(a, scale);
  const y = rescale(b, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The exact sum, at the larger of the two scales. */
export function addDecimal(a: Decimal, b: Decimal): Decimal {
  const scale = Math.max(a.scale, b.scale);
  return { units: rescale(a, scale) + rescale(b, scale), scale };
}

/** Plain decimal text, keeping the scale ("40.00" stays "40.00"). */
export function formatDecimal(value: Decimal): string {
  if (value.scale === 0) return value.units.toString();
  const digits = value.units.toString().padStart(value.scale + 1, "0");
  return `${digits.slice(0, -value.scale)}.${digits.slice(-value.scale)}`;
}
