// Importing an AP2 v0.2 open payment mandate (docs/protocol.md, "Importing an
// AP2 open payment mandate"): an SD-JWT whose claims carry `vct`
// `mandate.payment.open.1`, `constraints`, `cnf`, `iat` and `exp`, signed by
// the principal and presented by the agent with a key-binding JWT.
//
// What is checked, in order, each refusal naming its reason:
//   1. the form (issuer JWT ~ disclosures ~ key-binding JWT), sha-256 digests;
//   2. the issuer JWT's signature under one of the principal keys the owner named;
//   3. every disclosure is referenced by the signed payload (a changed one is
//      not), and every digest is disclosed: a withheld constraint would leave
//      the mandate wider than signed, and a decoy cannot be told from one;
//   4. vct, exp (required, in the future), iat and nbf (not in the future);
//   5. cnf, and the key-binding JWT by that key over this enrolment's nonce
//      (the agent consents to this identity in this group) and these disclosures;
//   6. every constraint is one zkagent enforces; anything else is refused by
//      name, never dropped (a mandate partly applied pays where its principal said no).
// Steps 3 and 5 run through @sd-jwt/core's verifier; the signature checks are jose's.
import { createHash } from "node:crypto";
import { SDJwt, SDJwtInstance } from "@sd-jwt/core";
import { calculateJwkThumbprint, compactVerify, decodeProtectedHeader, importJWK, type JWK } from "jose";
import { taggedField } from "../groups/derivation";
import { currencyExponent, enrolmentNonce, minorUnits, type Result, serializeOrigin } from "./encoding";
import { type BudgetTerms, type Kind, PAYEE_SLOTS, termsProblem } from "./terms";

export const OPEN_PAYMENT_MANDATE_VCT = "mandate.payment.open.1";
export const MANDATE_TAG = "zkagent/budget-mandate/v1";
/** Algorithms a principal or an agent may sign with. */
export const MANDATE_ALGORITHMS = ["ES256", "ES384", "EdDSA"] as const;
export const MANDATE_MAX_LENGTH = 64 * 1024;
/** Clock skew allowed on iat and nbf, seconds (as for zkagent's own signed mandates). */
export const MANDATE_SKEW_S = 300;

const RECURRENCE: Record<string, Kind> = { ON_DEMAND: "lifetime", DAILY: "day", WEEKLY: "week", MONTHLY: "month" };

export interface ImportOptions {
  /** The principal public keys (JWK) the owner accepts for this member. */
  principalKeys: readonly JWK[];
  groupId: string;
  identityCommitment: bigint;
  /** Now, Unix ms. */
  now: number;
  /** The agent key the owner expects in `cnf`, if it knows one. */
  agentKey?: JWK;
}

export interface ImportedMandate {
  terms: BudgetTerms;
  /** The agent's key from cnf. */
  agentKey: JWK;
  issuedAt: number | null;
}

const fail = (error: string): { ok: false; error: string } => ({ ok: false, error });
const sha256 = (data: string | ArrayBuffer): Uint8Array =>
  new Uint8Array(
    createHash("sha256")
      .update(typeof data === "string" ? data : new Uint8Array(data))
      .digest(),
  );
const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** A JWS's signature checked with jose: the verifier @sd-jwt/core calls with (header.payload, signature). */
async function jwsVerifies(signingInput: string, signature: string, key: JWK): Promise<boolean> {
  try {
    // decodeProtectedHeader takes a whole JWS; the signing input lacks the signature segment.
    const imported = await importJWK(key, decodeProtectedHeader(`${signingInput}.${signature}`).alg);
    await compactVerify(`${signingInput}.${signature}`, imported, { algorithms: [...MANDATE_ALGORITHMS] });
    return true;
  } catch {
    return false;
  }
}

/** Every digest the payload and the disclosures reference (`_sd` members and `{"...": d}` array elements). */
function referencedDigests(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) {
      if (isObject(item) && Object.keys(item).length === 1 && typeof item["..."] === "string") into.add(item["..."]);
      else referencedDigests(item, into);
    }
  } else if (isObject(value)) {
    for (const [key, member] of Object.entries(value)) {
      if (key === "_sd" && Array.isArray(member)) for (const d of member) if (typeof d === "string") into.add(d);
      referencedDigests(member, into);
    }
  }
}

function decodeSegment(segment: string): unknown {
  if (!/^[A-Za-z0-9_-]+$/.test(segment)) return undefined;
  try {
    return JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

/** The open payment mandate inside verified claims: at the top level (an SD-JWT VC), or AP2's single `delegate_payload` element. */
function mandateClaims(claims: Record<string, unknown>): Record<string, unknown> | null {
  if (claims.vct === OPEN_PAYMENT_MANDATE_VCT) return claims;
  const delegate = claims.delegate_payload;
  if (Array.isArray(delegate) && delegate.length === 1 && isObject(delegate[0]) && delegate[0].vct === OPEN_PAYMENT_MANDATE_VCT) return delegate[0];
  return null;
}

/** The terms an open payment mandate's constraints set, or the first one zkagent cannot enforce. */
export function termsFromConstraints(constraints: unknown, at: { now: number; expiresAt: number; mandate: bigint }): Result<BudgetTerms> {
  const { now, expiresAt, mandate } = at;
  if (!Array.isArray(constraints)) return fail("constraints must be an array");
  let range: Record<string, unknown> | undefined;
  let budget: Record<string, unknown> | undefined;
  let payees: Record<string, unknown> | undefined;
  let recurrence: Record<string, unknown> | undefined;
  let expires = expiresAt;
  for (const [i, constraint] of constraints.entries()) {
    if (!isObject(constraint)) return fail(`constraints[${i}] must be an object`);
    const once = (name: string, seen: unknown) => (seen === undefined ? null : fail(`${name} appears twice`));
    switch (constraint.type) {
      case "payment.amount_range":
        if (once("payment.amount_range", range)) return once("payment.amount_range", range)!;
        range = constraint;
        break;
      case "payment.budget":
        if (once("payment.budget", budget)) return once("payment.budget", budget)!;
        budget = constraint;
        break;
      case "payment.allowed_payees":
        if (once("payment.allowed_payees", payees)) return once("payment.allowed_payees", payees)!;
        payees = constraint;
        break;
      case "payment.agent_recurrence":
        if (once("payment.agent_recurrence", recurrence)) return once("payment.agent_recurrence", recurrence)!;
        recurrence = constraint;
        break;
      case "payment.execution_date": {
        const unknown = Object.keys(constraint).filter((k) => !["type", "not_before", "not_after"].includes(k));
        if (unknown.length > 0) return fail(`payment.execution_date.${unknown[0]} cannot be enforced`);
        if (constraint.not_before !== undefined) {
          const start = typeof constraint.not_before === "string" ? Date.parse(constraint.not_before) : Number.NaN;
          if (!Number.isFinite(start)) return fail("payment.execution_date.not_before must be an ISO 8601 date-time");
          // The circuit has an end of validity, not a start: a mandate not yet executable is refused until it is.
          if (start > now) return fail(`payment.execution_date.not_before is in the future (${constraint.not_before})`);
        }
        if (constraint.not_after !== undefined) {
          const at = typeof constraint.not_after === "string" ? Date.parse(constraint.not_after) : Number.NaN;
          if (!Number.isFinite(at)) return fail("payment.execution_date.not_after must be an ISO 8601 date-time");
          expires = Math.min(expires, Math.floor(at / 1000));
        }
        break;
      }
      case "payment.reference":
        return fail("payment.reference cannot be enforced: zkagent does not see AP2 checkout mandates, so it cannot hold a payment to one");
      case "payment.allowed_payment_instruments":
      case "payment.allowed_pisps":
        return fail(`${constraint.type} cannot be enforced: no payment instrument or PISP passes through zkagent`);
      default:
        return fail(`constraints[${i}] has a type zkagent does not enforce (${JSON.stringify(constraint.type)})`);
    }
  }
  if (!range) return fail("payment.amount_range is required: it sets the currency and the maximum per purchase");
  const extra = (c: Record<string, unknown>, allowed: string[]) => Object.keys(c).find((k) => !allowed.includes(k));
  const rangeExtra = extra(range, ["type", "currency", "max", "min"]);
  if (rangeExtra) return fail(`payment.amount_range.${rangeExtra} cannot be enforced`);
  if (typeof range.currency !== "string" || !currencyExponent(range.currency).ok)
    return fail("payment.amount_range.currency must be an ISO 4217 code with a minor unit");
  const currency = range.currency;
  const minor = (x: unknown) => (Number.isSafeInteger(x) && (x as number) >= 0 ? BigInt(x as number) : null);
  const max = minor(range.max);
  if (max === null || max < 1n) return fail("payment.amount_range.max must be a positive integer of minor units");
  const min = range.min === undefined ? 0n : minor(range.min);
  if (min === null) return fail("payment.amount_range.min must be a non-negative integer of minor units");

  let total = (1n << 64n) - 1n;
  if (budget) {
    const budgetExtra = extra(budget, ["type", "currency", "max"]);
    if (budgetExtra) return fail(`payment.budget.${budgetExtra} cannot be enforced`);
    if (budget.currency !== currency) return fail("payment.budget.currency must be payment.amount_range.currency");
    // AP2 gives the budget in major units as a JSON number: read exactly through its canonical text.
    const units = minorUnits(budget.max, currency);
    if (!units.ok) return fail(`payment.budget.max ${units.error}`);
    if (units.value < 1n) return fail("payment.budget.max must be positive");
    total = units.value;
  }

  let kind: Kind = "lifetime";
  let oneTime = true;
  if (recurrence) {
    if (recurrence.max_occurrences !== undefined)
      return fail("payment.agent_recurrence.max_occurrences cannot be enforced: a budget counts money, not purchases");
    const recurrenceExtra = extra(recurrence, ["type", "frequency"]);
    if (recurrenceExtra) return fail(`payment.agent_recurrence.${recurrenceExtra} cannot be enforced`);
    const mapped = typeof recurrence.frequency === "string" ? RECURRENCE[recurrence.frequency] : undefined;
    if (!mapped) {
      return fail(
        `payment.agent_recurrence.frequency ${JSON.stringify(recurrence.frequency)} cannot be enforced: zkagent's periods are ON_DEMAND, DAILY, WEEKLY (Monday, UTC) and MONTHLY (UTC)`,
      );
    }
    kind = mapped;
    oneTime = false;
  }

  let origins: string[] | null = null;
  if (payees) {
    const payeesExtra = extra(payees, ["type", "allowed"]);
    if (payeesExtra) return fail(`payment.allowed_payees.${payeesExtra} cannot be enforced`);
    if (!Array.isArray(payees.allowed) || payees.allowed.length === 0) return fail("payment.allowed_payees.allowed must list at least one merchant");
    origins = [];
    for (const [i, merchant] of payees.allowed.entries()) {
      const origin = isObject(merchant) ? serializeOrigin(merchant.website) : fail("");
      if (!origin.ok) return fail(`payment.allowed_payees.allowed[${i}] needs a website (an http or https URL): zkagent binds a payee by its origin`);
      if (!origins.includes(origin.value)) origins.push(origin.value);
    }
    if (origins.length > PAYEE_SLOTS) return fail(`payment.allowed_payees may name at most ${PAYEE_SLOTS} origins`);
  }

  const terms: BudgetTerms = { currency, min, max, budget: total, kind, once: oneTime, payees: origins, expiresAt: expires, mandate };
  const problem = termsProblem(terms);
  return problem ? fail(problem) : { ok: true, value: terms };
}

/** An AP2 open payment mandate, verified and turned into terms; otherwise why not. */
export async function importOpenPaymentMandate(token: unknown, options: ImportOptions): Promise<Result<ImportedMandate>> {
  if (typeof token !== "string" || token.length === 0 || token.length > MANDATE_MAX_LENGTH)
    return fail(`must be an SD-JWT of at most ${MANDATE_MAX_LENGTH} characters`);
  const parts = token.split("~");
  const issuerJwt = parts[0]!;
  const keyBinding = parts.at(-1)!;
  const disclosures = parts.slice(1, -1);
  if (parts.length < 2 || issuerJwt.split(".").length !== 3) return fail("is not an SD-JWT (issuer JWT~disclosures~key-binding JWT)");
  if (keyBinding === "") return fail("needs a key-binding JWT signed by the cnf key (the agent's consent to this enrolment)");

  // 1–2. The principal's signature.
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(issuerJwt);
  } catch {
    return fail("is not an SD-JWT: the issuer JWT's header does not decode");
  }
  if (!MANDATE_ALGORITHMS.includes(header.alg as (typeof MANDATE_ALGORITHMS)[number])) return fail(`must be signed with ${MANDATE_ALGORITHMS.join(", ")}`);
  const [signingInput, signature] = [issuerJwt.slice(0, issuerJwt.lastIndexOf(".")), issuerJwt.slice(issuerJwt.lastIndexOf(".") + 1)];
  let principal: JWK | undefined;
  for (const key of options.principalKeys) {
    if (await jwsVerifies(signingInput, signature, key)) {
      principal = key;
      break;
    }
  }
  if (!principal) return fail("is not signed by the principal's key");
  const payload = decodeSegment(issuerJwt.split(".")[1]!);
  if (!isObject(payload)) return fail("issuer JWT payload is not a JSON object");
  if (payload._sd_alg !== undefined && payload._sd_alg !== "sha-256") return fail("must use _sd_alg sha-256");

  // 3. Disclosures: each referenced, each digest disclosed.
  const presented = new Map<string, unknown>();
  for (const disclosure of disclosures) {
    const digest = Buffer.from(sha256(disclosure)).toString("base64url");
    const decoded = decodeSegment(disclosure);
    if (!Array.isArray(decoded)) return fail("a disclosure does not decode");
    presented.set(digest, decoded.at(-1));
  }
  const referenced = new Set<string>();
  referencedDigests(payload, referenced);
  for (const value of presented.values()) referencedDigests(value, referenced);
  for (const digest of presented.keys()) if (!referenced.has(digest)) return fail("a disclosure is not part of what the principal signed (changed or foreign)");
  for (const digest of referenced) {
    if (!presented.has(digest))
      return fail(
        "withholds a selectively disclosable claim: the whole mandate must be disclosed, since a withheld constraint would leave it wider than signed",
      );
  }

  let claims: Record<string, unknown>;
  try {
    claims = (await (await SDJwt.fromEncode(token, sha256)).getClaims(sha256)) as Record<string, unknown>;
  } catch {
    return fail("is not a well-formed SD-JWT");
  }
  const mandate = mandateClaims(claims);
  if (!mandate) return fail(`must carry vct ${OPEN_PAYMENT_MANDATE_VCT}`);

  // 4. Validity.
  const nowS = Math.floor(options.now / 1000);
  if (!Number.isSafeInteger(mandate.exp)) return fail("needs exp (integer Unix seconds): a budget without an end is not accepted");
  if ((mandate.exp as number) <= nowS) return fail(`is expired (exp ${mandate.exp})`);
  for (const name of ["iat", "nbf"] as const) {
    if (mandate[name] === undefined) continue;
    if (!Number.isSafeInteger(mandate[name])) return fail(`${name} must be integer Unix seconds`);
    if ((mandate[name] as number) > nowS + MANDATE_SKEW_S) return fail(`is not yet valid (${name} ${mandate[name]} is after now + ${MANDATE_SKEW_S} s)`);
  }

  // 5. cnf and the key binding.
  const cnf = isObject(mandate.cnf) && isObject(mandate.cnf.jwk) ? (mandate.cnf.jwk as JWK) : null;
  if (!cnf) return fail("needs cnf.jwk, the agent's public key");
  let thumbprint: string;
  try {
    thumbprint = await calculateJwkThumbprint(cnf);
  } catch {
    return fail("cnf.jwk is not a public key");
  }
  if (options.agentKey && thumbprint !== (await calculateJwkThumbprint(options.agentKey))) return fail("cnf is not the agent's key");
  const verifier = new SDJwtInstance({
    hasher: (data) => sha256(data),
    hashAlg: "sha-256",
    verifier: (data, sig) => jwsVerifies(data, sig, principal),
    kbVerifier: (data, sig) => jwsVerifies(data, sig, cnf),
  });
  try {
    await verifier.verify(token, {
      keyBindingNonce: enrolmentNonce(options.groupId, options.identityCommitment),
      currentDate: nowS,
      skewSeconds: MANDATE_SKEW_S,
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : "";
    if (/nonce/i.test(message)) return fail("key-binding JWT is for another enrolment: its nonce must be this group's and identity's");
    if (/signature/i.test(message)) return fail("key-binding JWT is not signed by the cnf key");
    if (/sd_hash|hash/i.test(message)) return fail("key-binding JWT does not cover these disclosures (sd_hash)");
    return fail(`key-binding JWT is not valid (${message.slice(0, 120)})`);
  }

  // 6. The constraints.
  const tau = taggedField(MANDATE_TAG, { jwt: issuerJwt });
  const terms = termsFromConstraints(mandate.constraints, { now: options.now, expiresAt: mandate.exp as number, mandate: tau });
  if (!terms.ok) return terms;
  if (terms.value.expiresAt <= nowS) return fail("is expired (payment.execution_date.not_after)");
  return { ok: true, value: { terms: terms.value, agentKey: cnf, issuedAt: (mandate.iat as number | undefined) ?? null } };
}
