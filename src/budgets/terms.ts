// A member's terms and the leaf that commits to them (docs/protocol.md,
// "Terms and the leaf"). The service computes the leaf from terms it has
// verified (an AP2 mandate, or the owner's JSON), so an owner cannot enrol
// wider terms than a principal signed; the member receives the terms and
// the salt, and proves against the leaf without revealing either.
//
// Packing (the circuit unpacks with the same widths):
//   TA = max + 2^64·budget + 2^128·min                  (three 64-bit amounts)
//   TM = c + 2^24·kind + 2^26·once + 2^27·any + 2^28·t_exp   (t_exp: 40 bits of Unix minutes)
//   TQ = H8(q1..q8)                                      (payees sorted, 0-padded; all 0 when any)
//   T  = H4(TA, TM, TQ, τ)      leaf L = H3(idc, T, salt)
import { AMOUNT_LIMIT, currencyExponent, currencyField, payeeField, serializeOrigin } from "./encoding";
import { H3, H4, H8 } from "./hash";

export const KINDS = ["lifetime", "day", "week", "month"] as const;
export type Kind = (typeof KINDS)[number];
/** Allowed payees a leaf can hold in v1 (the circuit's slots). */
export const PAYEE_SLOTS = 8;
/** The expiry's width in the circuit: Unix minutes below 2^40 (year 2,092,000 and then some). */
export const EXPIRY_LIMIT = 1n << 40n;

export interface BudgetTerms {
  /** ISO 4217 code. */
  currency: string;
  /** Per purchase, minor units: min ≤ amount ≤ max. */
  min: bigint;
  max: bigint;
  /** Per period (or for the mandate's life), minor units; 2^64 − 1 when unbounded. */
  budget: bigint;
  kind: Kind;
  /** One purchase, ever (kind lifetime). */
  once: boolean;
  /** Allowed payees as serialized origins; null: any payee. */
  payees: readonly string[] | null;
  /** Expiry, Unix seconds: spends are accepted in minutes strictly before ⌊expires/60⌋. */
  expiresAt: number;
  /** τ: one value per mandate (encodings: the principal-signed JWT, or the owner's terms with a nonce). */
  mandate: bigint;
}

export interface PackedTerms {
  TA: bigint;
  TM: bigint;
  /** The eight payee slots, sorted, 0-padded. */
  payees: bigint[];
  TQ: bigint;
  mandate: bigint;
  /** T = H4(TA, TM, TQ, τ). */
  hash: bigint;
}

/** Why these terms cannot be enrolled, or null. */
export function termsProblem(terms: BudgetTerms): string | null {
  const exponent = currencyExponent(terms.currency);
  if (!exponent.ok) return `currency ${exponent.error}`;
  for (const name of ["min", "max", "budget"] as const) {
    const value = terms[name];
    if (typeof value !== "bigint" || value < 0n || value >= AMOUNT_LIMIT) return `${name} must be an integer of minor units in [0, 2^64)`;
  }
  if (terms.max < 1n) return "max must be at least one minor unit";
  if (terms.min > terms.max) return "min must not exceed max";
  if (terms.budget < 1n) return "budget must be at least one minor unit";
  if (!KINDS.includes(terms.kind)) return `kind must be one of ${KINDS.join(", ")}`;
  if (terms.once && terms.kind !== "lifetime") return "a one-time mandate has no period";
  if (terms.payees !== null) {
    if (terms.payees.length === 0) return "payees must name at least one origin (or be absent for any payee)";
    if (terms.payees.length > PAYEE_SLOTS) return `at most ${PAYEE_SLOTS} payees`;
    for (const origin of terms.payees) {
      const serialized = serializeOrigin(origin);
      if (!serialized.ok || serialized.value !== origin)
        return `payee ${JSON.stringify(origin)} is not a serialized http(s) origin such as https://shop.example`;
    }
    if (new Set(terms.payees).size !== terms.payees.length) return "payees must not repeat";
  }
  if (!Number.isSafeInteger(terms.expiresAt) || terms.expiresAt <= 0 || BigInt(Math.floor(terms.expiresAt / 60)) >= EXPIRY_LIMIT)
    return "expiresAt must be a Unix time in seconds";
  if (typeof terms.mandate !== "bigint" || terms.mandate < 0n || terms.mandate >= 1n << 248n) return "mandate must be a 248-bit value";
  return null;
}

/** The field elements the leaf commits to. Throws on terms termsProblem refuses. */
export function packTerms(terms: BudgetTerms): PackedTerms {
  const problem = termsProblem(terms);
  if (problem) throw new RangeError(`budget terms: ${problem}`);
  const TA = terms.max + (terms.budget << 64n) + (terms.min << 128n);
  const kind = BigInt(KINDS.indexOf(terms.kind));
  const any = terms.payees === null;
  const TM =
    currencyField(terms.currency) +
    (kind << 24n) +
    ((terms.once ? 1n : 0n) << 26n) +
    ((any ? 1n : 0n) << 27n) +
    (BigInt(Math.floor(terms.expiresAt / 60)) << 28n);
  const slots = any ? [] : terms.payees!.map(payeeField).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  while (slots.length < PAYEE_SLOTS) slots.push(0n);
  const TQ = H8(slots);
  return { TA, TM, payees: slots, TQ, mandate: terms.mandate, hash: H4(TA, TM, TQ, terms.mandate) };
}

/** The enrolment leaf L = H3(idc, T, salt). */
export const budgetLeaf = (identityCommitment: bigint, termsHash: bigint, salt: bigint): bigint => H3(identityCommitment, termsHash, salt);

/** A fresh 248-bit salt (below r, canonical). */
export function randomSalt(): bigint {
  const bytes = crypto.getRandomValues(new Uint8Array(31));
  return BigInt(`0x${Buffer.from(bytes).toString("hex")}`);
}
