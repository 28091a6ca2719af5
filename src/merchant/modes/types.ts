// How the guard's modes plug in. A Mode decides the requests that present
// its credentials; the guard (index.ts) asks each accepted mode in turn and
// answers 401 asking for a claim when none is presented. One Mode speaks the
// ZKAgent scheme (exchange.ts) and, inside it, one ClaimKind per claim
// (agent.ts, group.ts, budget.ts) holds that claim's own checks; another reads HTTP
// message signatures (web-bot-auth.ts), yielding its own kind of session.
import type { JsonObject } from "../../identity/encoding";
import type { ServiceAnswer } from "../service";
import type { GuardResult, Refusal, SignatureSession, VerifiedSession } from "../types";

export interface Mode {
  /** Whether the request presents this mode's credentials: it is then this mode's to decide, refusals included. */
  presented(request: Request): boolean;
  decide(request: Request): Promise<GuardResult<VerifiedSession | SignatureSession>>;
}

/** The session's members that a verified ZKAgent answer gives whatever the claim. */
export type ProvedFields = Omit<VerifiedSession, "scheme" | "pseudonym" | "group_id">;

/**
 * One kind of ZKAgent claim (`agent="…"`, `group="…"`, `budget="…"`): what names it and what
 * the guard checks, at each step of the exchange, for it alone.
 */
export interface ClaimKind {
  /** The session's `scheme` for a proof of this kind, and the name `accept` lists it by. */
  scheme: VerifiedSession["scheme"];
  /** The auth-param that claims it. */
  param: string;
  /** The service's field for the claimed id, in a challenge request and in a status. */
  field: string;
  /** Before any call to the service: a refusal for a claim this merchant does not admit, or null. */
  admit(claimed: string): Refusal | null;
  /**
   * Before a challenge is asked for: a refusal when the route's declared
   * context cannot make this kind's challenge (a budget spend needs an
   * amount and a currency), or null.
   */
  checkContext?(declared: JsonObject): Refusal | null;
  /**
   * The service's new challenge (POST /v1/verify/challenge's 200): why it is
   * not one of this kind (the merchant listed a group under the wrong
   * option), for the merchant's onError, or null.
   */
  checkChallenge?(created: ServiceAnswer["body"], claimed: string): string | null;
  /** Whether a challenge (its status, GET /v1/verify/status) is of this kind. */
  owns(status: ServiceAnswer["body"]): boolean;
  /**
   * Before the proof is submitted: the challenge's status against the claim
   * (undefined when the credentials named none), or null when it may be spent.
   */
  checkStatus(status: ServiceAnswer["body"], claimed: string | undefined): Refusal | null;
  /** The service verified the proof: the session (from its answer and the challenge's status), or a refusal. */
  session(verified: ServiceAnswer["body"], status: ServiceAnswer["body"], proved: ProvedFields): GuardResult;
}
