// The guard's answers other than a session: JSON `{error, reason, …}`, never
// cached, a 401 with its WWW-Authenticate (docs/http-auth.md, "Failures").
// Every refusal the guard sends is named here once, so its status, error
// and reason stay the same whichever mode refuses.
import { formatAuth } from "../http-auth/scheme";
import type { Refusal } from "./types";

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-store" };

/** An answer with `body`; a 401 carries `challenge` as `WWW-Authenticate: ZKAgent …`. */
export function answer(status: number, body: Record<string, unknown>, challenge?: Record<string, string>): Refusal {
  const headers: Record<string, string> = { ...JSON_HEADERS };
  if (challenge) headers["www-authenticate"] = formatAuth(challenge);
  return { ok: false, response: new Response(JSON.stringify(body), { status, headers }) };
}

export const refuse = (status: number, error: string, reason: string, extra: Record<string, unknown> = {}): Refusal =>
  answer(status, { error, reason, ...extra });

/**
 * 401 asking for the claim (the accepted ones, in `message`). `offers` are
 * the claims the merchant names outright (`budget="<group id>"` for each
 * accepted budget group), one ZKAgent challenge of the header each, the
 * realm in every one: an agent that reads only the first challenge and knows
 * no `budget` parameter sees the plain request for a claim.
 */
export function claimRequired(realm: string, message: string, offers: Record<string, string>[] = []): Refusal {
  const refusal = answer(401, { error: "ZKAgent authentication required", reason: "claim_required", message }, { realm, ...offers[0] });
  if (offers.length > 1) refusal.response.headers.set("www-authenticate", offers.map((offer) => formatAuth({ realm, ...offer })).join(", "));
  return refusal;
}

/** The credentials are not ZKAgent's grammar or make no sense together: the client's to fix. */
export const invalidCredentials = (message: string): Refusal => refuse(400, "Invalid ZKAgent credentials", "invalid_credentials", { message });

/** No context can be derived from this request (the context function's BadRequest, or a value JSON cannot bind). */
export const invalidRequest = (message: string): Refusal => refuse(400, "Invalid request", "invalid_request", { message });

/** The service refused to create a challenge for the claim (its `error` names the field). */
export const invalidClaim = (message: string): Refusal => refuse(400, "Invalid ZKAgent claim", "invalid_claim", { message });

/** The presented challenge is not this request's, or not this claim's: nothing is spent. */
export const requestMismatch = (message: string): Refusal => refuse(403, "Request does not match the challenge", "request_mismatch", { message });

/** A claim of a scheme this route does not admit. */
export const schemeNotAccepted = (scheme: string): Refusal =>
  refuse(403, "ZKAgent claim not accepted", "scheme_not_accepted", { message: `this resource does not accept ${scheme} claims` });

/** A group (claimed, challenged or answered) that is not among the merchant's `groups`. */
export const groupNotAccepted = (group: string): Refusal =>
  refuse(403, "Group not accepted", "group_not_accepted", { message: `members of group "${group}" are not accepted here` });

/** A budget claim (claimed, challenged or answered) for a group that is not among the merchant's `budgets`. */
export const budgetNotAccepted = (group: string): Refusal =>
  refuse(403, "Group not accepted", "group_not_accepted", { message: `spends from the budget of group "${group}" are not accepted here` });

export const challengeUsed = (): Refusal => refuse(403, "Challenge already used", "challenge_used");

export const proofFailed = (reason: string, detail?: string): Refusal =>
  refuse(403, "Proof verification failed", reason, detail === undefined ? {} : { detail });

/** How long an agent is asked to wait before retrying when the service said nothing (unreachable, timed out, a 5xx without Retry-After). */
export const RETRY_AFTER_SECONDS = 5;

/** The service could not be used: 502 with Retry-After (the service's own when it gave one). */
export function verifierUnavailable(retryAfter = RETRY_AFTER_SECONDS): Refusal {
  const refusal = refuse(502, "Verification service unavailable", "verifier_unavailable");
  refusal.response.headers.set("retry-after", String(retryAfter));
  return refusal;
}

/** The service refused the merchant's API key: the merchant's configuration to mend (its onError says so), not the agent's. */
export const serviceRejectedKey = (): Refusal =>
  refuse(502, "Verification service unavailable", "service_rejected_key", { message: "the zkagent service refused this server's API key" });

/** A bug in the merchant's own functions: no detail leaves (no stack in any answer). */
export const internalError = (): Refusal => refuse(500, "Internal server error", "internal_error");
