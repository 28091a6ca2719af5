// What the agent checks before it proves anything (docs/http-auth.md, "The
// agent's side"). A 401 is the word of whoever answered it: a site the agent
// merely visits, a proxy that rewrote the body, a merchant that shows one
// amount and binds another. So the agent never proves a field it was handed:
//
//   1. the request: the challenge's action and context must bind exactly the
//      request the agent is sending — method, origin and target, every body
//      field the context declares (http-auth/statement.ts, the same function
//      the guard builds the context with), and the action it means;
//   2. a group challenge's message: recomputed here from the nonce, action
//      and context, exactly as the service derives it (groups/derivation.ts),
//      so the proof cannot be for another challenge than the one shown;
//   3. the agent's own limit: at most `maxAmount` in its currency.
//
// Pure logic: no I/O, so the SDK's fetch, `zkagent fetch`, `zkagent mcp` and
// `zkagent prove --group-challenge` run the same checks.
import { groupMessageOf } from "../groups/derivation";
import { isJsonType, type OutgoingRequest, requestMismatch } from "../http-auth/statement";
import type { JsonObject } from "../identity/encoding";
import { compareDecimal, type Decimal, parseAmount, parseDecimal } from "../mandates/decimal";

export type ChallengeErrorCode =
  /** The 401's challenge cannot be read: a parameter missing or of the wrong form. */
  | "malformed"
  /** The challenge binds another request than the one being sent (`field`: action, @request, method, origin, target, body or a body field). */
  | "request_mismatch"
  /** A group challenge's message is not the one its nonce, action and context give (`field`: message). */
  | "message_mismatch"
  /** A group challenge's scope is not the one the agent derives from the origin it binds, or cannot be derived for the origin named (`field`: scope). */
  | "scope_mismatch"
  /** Above the agent's maxAmount, in another currency, or a currency with no amount (`field`: amount or currency). */
  | "limit"
  /** The circuit or the group's members would come from a service the agent does not trust (`field`: circuit). */
  | "untrusted"
  /** The identity cannot answer this challenge: no secret, no private key, another group (`field`: the identity's member). */
  | "identity"
  /** A request got no complete answer in time (`url` names it). */
  | "timeout";

/** The agent will not answer a challenge (nothing was proved, nothing sent), or a request timed out. */
export class ChallengeError extends Error {
  // The class's own name, whatever a bundler renames it to (src/agent/group/error.ts).
  static {
    Object.defineProperty(ChallengeError, "name", { value: "ChallengeError" });
  }
  override readonly name = "ChallengeError";
  constructor(
    readonly code: ChallengeErrorCode,
    message: string,
    /** What differed: the challenge's or the request's field. */
    readonly field?: string,
    /** For a timeout, the URL asked. */
    readonly url?: string,
  ) {
    super(message);
  }
}

/** The most the agent will approve: an amount (plain decimal text) in one currency. */
export interface MaxAmount {
  amount: string;
  currency: string;
}

/** A MaxAmount checked for form; TypeError naming what is wrong. */
export function parseMaxAmount(value: MaxAmount): { amount: Decimal; currency: string } {
  const amount = typeof value?.amount === "string" ? parseDecimal(value.amount) : null;
  if (amount === null) throw new TypeError(`maxAmount.amount must be a decimal string such as "50.00", not ${JSON.stringify(value?.amount)}`);
  if (typeof value.currency !== "string" || value.currency === "") throw new TypeError("maxAmount.currency must be a currency code such as EUR");
  return { amount, currency: value.currency };
}

/** A challenge as the checks read it: action, decoded context, and the group challenge's message when it is one. */
export interface CheckedChallenge {
  nonce: string;
  action: string;
  context: JsonObject;
  /** A group challenge's `message` parameter (decimal); absent for an agent challenge. */
  message?: string;
}

/**
 * ChallengeError("message_mismatch") unless the group challenge's message is
 * the one the service derives from its nonce, action and context: a 401 that
 * shows one context and carries the message of another (another platform's
 * challenge for another amount) would otherwise get a proof for the hidden one.
 */
export function checkGroupMessage(challenge: CheckedChallenge): void {
  const derived = groupMessageOf(challenge).toString();
  if (challenge.message !== derived) {
    throw new ChallengeError(
      "message_mismatch",
      `the group challenge's message ${challenge.message ?? "(none)"} is not the one its nonce, action and context give (${derived}): it binds another challenge; refused`,
      "message",
    );
  }
}

/**
 * ChallengeError("limit") unless the challenge's context amount is at most
 * `max` and its currency is `max`'s. A context with neither `amount` nor
 * `currency` binds no payment (a catalog, a search): the proof commits the
 * agent to no sum the merchant or the service could hold it to, so the limit
 * has nothing to hold and lets it through. A context that names a currency
 * but no amount speaks of money without saying how much: refused.
 */
export function checkMaxAmount(context: JsonObject, max: MaxAmount): void {
  const limit = parseMaxAmount(max);
  if (!Object.hasOwn(context, "amount") && !Object.hasOwn(context, "currency")) return;
  if (!Object.hasOwn(context, "amount"))
    throw new ChallengeError(
      "limit",
      `the challenge's context names a currency but no amount, and the agent approves at most ${max.amount} ${limit.currency}: refused`,
      "amount",
    );
  const amount = parseAmount(context.amount);
  if (amount === null)
    throw new ChallengeError(
      "limit",
      `the challenge's amount ${JSON.stringify(context.amount)} is not a decimal amount the agent can compare: refused`,
      "amount",
    );
  if (context.currency !== limit.currency)
    throw new ChallengeError(
      "limit",
      `the challenge is in ${JSON.stringify(context.currency ?? null)}, the agent approves amounts in ${limit.currency} only: refused`,
      "currency",
    );
  if (compareDecimal(amount, limit.amount) > 0)
    throw new ChallengeError(
      "limit",
      `the challenge's amount ${String(context.amount)} is above the agent's maximum ${max.amount} ${limit.currency}: refused`,
      "amount",
    );
}

/** What the agent expects of a challenge beside its request. */
export interface Expectation {
  /** The action the agent means; a challenge for another is refused. */
  action?: string;
  maxAmount?: MaxAmount;
}

/**
 * The request as the checks compare it: its body parsed as JSON when its
 * Content-Type is JSON (the bodies a guard derives fields from). A JSON-typed
 * body that does not parse is refused: no guard derives a challenge from it
 * (it answers 400), so a challenge "for" it binds some other body.
 */
export function outgoingRequest(
  method: string,
  url: string | URL,
  contentType: string | null,
  body: string | Uint8Array | ArrayBuffer | null,
): OutgoingRequest {
  if (body === null || !isJsonType(contentType)) return { method, url, body: undefined };
  const text = typeof body === "string" ? body : new TextDecoder().decode(body);
  try {
    return { method, url, body: JSON.parse(text) };
  } catch {
    throw new ChallengeError(
      "request_mismatch",
      "the request's Content-Type says JSON but its body does not parse, so no guard derived this challenge from it: refused",
      "body",
    );
  }
}

/**
 * Every check before a proof, in order: the request binding, a group
 * challenge's message, the agent's maximum. Throws ChallengeError naming the
 * field; returns when the agent may prove.
 */
export function checkChallenge(challenge: CheckedChallenge & { group?: boolean }, request: OutgoingRequest, expect: Expectation = {}): void {
  const mismatch = requestMismatch(challenge, request, { action: expect.action });
  if (mismatch) throw new ChallengeError("request_mismatch", `${mismatch.message}: refused`, mismatch.field);
  if (challenge.group) checkGroupMessage(challenge);
  if (expect.maxAmount) checkMaxAmount(challenge.context, expect.maxAmount);
}
