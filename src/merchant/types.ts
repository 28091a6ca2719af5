// The guard's public types: its options, what a handler receives, what the
// guard answers. Apart from the code so that the modes (modes/) and the
// entry point (index.ts) share them without importing each other.
import type { JsonObject } from "../identity/encoding";
import type { SignatureOptions, SignatureSession } from "./modes/web-bot-auth/signatures";

export type { JsonObject } from "../identity/encoding";

/** What the context function gets: the request, and its body read once as JSON (undefined when it is not JSON). */
export interface RequestInput {
  request: Request;
  body: unknown;
}

/**
 * The ways a request can pass the guard, as the session's `scheme` names
 * them: `zkagent`, a registered agent's proof (`Authorization: ZKAgent
 * agent=…`); `group`, an anonymous member's proof of a group the merchant
 * accepts (`group=…`); `budget`, a spend from the budget of a member of a
 * budgeted group the merchant accepts (`budget=…`: the session carries the
 * amount and currency spent, not who); `web-bot-auth`, an agent of an operator
 * the merchant trusts, by its HTTP message signature (docs/http-auth.md,
 * "Signed agents").
 */
export type Scheme = "zkagent" | "group" | "budget" | "web-bot-auth";

/** The schemes a route admits by default: the two proofs (a signature needs `signatures`; a budget spend is named in `accept`, with `budgets`). */
export type ProofScheme = "zkagent" | "group";

/** The proof sessions of the schemes in `M`, one per scheme (a route that accepts budget spends only gets a BudgetSession). */
type ProofSessionOf<M extends Scheme> = M extends "zkagent" ? AgentSession : M extends "group" ? GroupSession : M extends "budget" ? BudgetSession : never;

/** The session a route's handler gets, by the schemes it accepts: a signature's only when "web-bot-auth" is among them. */
export type SessionOf<M extends Scheme> = [M] extends ["web-bot-auth"]
  ? SignatureSession
  : "web-bot-auth" extends M
    ? ProofSessionOf<M> | SignatureSession
    : ProofSessionOf<M>;

export interface GuardOptions<M extends Scheme = ProofScheme> {
  /** The zkagent service, e.g. https://zkagent.example.com. */
  url: string;
  /** The merchant's API key for it. Sent only to `url`; never in a response. */
  apiKey: string;
  /** What the agent must prove it intends: an action name, or one derived from the request. */
  action: string | ((input: RequestInput) => string | Promise<string>);
  /**
   * The context the proof is bound to, derived from the request (the body's
   * fields the merchant declares). Throw BadRequest for a request it cannot
   * derive one from (a 400 naming the problem). Default: `{}`.
   */
  context?: (input: RequestInput) => JsonObject | Promise<JsonObject>;
  /** `realm` in the challenge (RFC 9110 §11.5). Default "zkagent". */
  realm?: string;
  /**
   * This server's public origin as agents reach it (`https://shop.example`):
   * what a challenge binds beside the method and the target. Default: the
   * request URL's origin, which the server builds from the Host header: set
   * it behind a proxy that terminates TLS or rewrites Host.
   */
  origin?: string;
  /**
   * The groups whose members may pass (group ids at the zkagent service). A
   * group claim for any other group is refused (403 `group_not_accepted`)
   * before a challenge is created; none (the default) refuses every group
   * claim. A group's owner decides who its members are: list only groups
   * whose owner you trust to admit agents for you.
   */
  groups?: readonly string[];
  /**
   * The budgeted groups whose members may spend here (group ids at the
   * zkagent service; `accept` must name "budget"). A budget claim for any
   * other group is refused (403 `group_not_accepted`) before a challenge is
   * created. A group is budgeted or not: the same id in `groups` and
   * `budgets` is refused when the guard is made. The route's `context` must
   * give `amount` and `currency`: what the member spends.
   */
  budgets?: readonly string[];
  /**
   * Which schemes this route admits. Default: the proofs, `zkagent` and
   * `group` (`group` still needs `groups`); `budget` only when named (and
   * with `budgets`).
   */
  accept?: readonly M[];
  /** The `web-bot-auth` scheme's trust: required when `accept` names it. */
  signatures?: SignatureOptions;
  /** The service's URL as agents reach it, for the circuit's URL in a challenge. Default `url`. */
  publicUrl?: string;
  /** For tests and custom transports: the global fetch by default. */
  fetch?: (input: Request) => Response | Promise<Response>;
  /** How long a call to the service may take, ms. Default 10 000. */
  timeoutMs?: number;
  /**
   * Told what the guard does not tell the agent: why it answered 502 (the
   * service refused the API key, or could not be used) or 500 (the action or
   * context function threw: `cause`), and settings that weaken it. Default:
   * one line on stderr per problem. It must not throw (what it throws is
   * ignored); pass your logger: `onError: (p) => log[p.level](p)`.
   */
  onError?: (problem: GuardProblem) => void;
}

/** What the guard reports to the merchant's `onError` (never to the agent). */
export interface GuardProblem {
  /**
   * `service_rejected_key`: the service refused the API key (401, 403
   * `Invalid API key`); `verifier_unavailable`: the service could not be used
   * (unreachable, timed out, 5xx, 429, an answer the guard does not
   * understand); `internal_error`: the action or context function threw
   * (`cause`); `body_already_read` (Express): a body parser in front consumed
   * the body with no raw copy; `no_origin` (a Node adapter without `origin`);
   * `budget_context`: a budget claim on a route whose context gives no
   * `amount` or no `currency` (the request is answered 400).
   */
  reason: "service_rejected_key" | "verifier_unavailable" | "internal_error" | "body_already_read" | "no_origin" | "budget_context";
  /** "error" for a request answered 5xx or refused for the merchant's setup; "warn" for a setting, once. */
  level: "error" | "warn";
  /** What happened and what to do, for a log line. Holds no API key. */
  message: string;
  /** What was thrown, when something was (a fetch failure, the context function's error). */
  cause?: unknown;
}

/** What every verified ZKAgent session carries, whichever the claim. */
interface ProvedSession {
  /** The challenge id: GET /v1/verify/status/{session_id} reads it back. */
  session_id: string;
  /** The verified agent; for a group challenge, the pseudonym (as the service returns it). */
  agent_id: string;
  action: string;
  /** The context as the merchant declared it (without the request member): what the proof binds. Serve from this. */
  context: JsonObject;
  /** The method, origin and request target the proof binds. */
  request: { method: string; origin: string; target: string };
  confidence: number;
  /** The service's signed receipt (compact JWS), or null when it could not be stored. */
  receipt: string | null;
}

/** A registered agent proved it is `agent_id` and means this request. */
export interface AgentSession extends ProvedSession {
  scheme: "zkagent";
  pseudonym?: undefined;
  group_id?: undefined;
}

/** A member of `group_id` proved it means this request, named only by its pseudonym (also `agent_id`). */
export interface GroupSession extends ProvedSession {
  scheme: "group";
  /** The agent's pseudonym in this scope. */
  pseudonym: string;
  /** The group it proved membership of: one of the guard's `groups`. */
  group_id: string;
}

/**
 * A member of the budgeted group `group_id` spent `amount` `currency` from its
 * budget for this request. Nothing names the member: `agent_id` is the
 * spend's one-time nullifier (also `spend.nullifier`), never seen again.
 */
export interface BudgetSession extends ProvedSession {
  scheme: "budget";
  pseudonym?: undefined;
  /** The budgeted group: one of the guard's `budgets`. */
  group_id: string;
  /** What was spent, as the service recorded it: a decimal string in major units (e.g. "20.00"), equal to the context's amount. */
  amount: string;
  /** ISO 4217, the context's currency. */
  currency: string;
  /** The spend's public values: its one-time nullifier and the commitment to the member's new running total (decimal). */
  spend: { nullifier: string; commitment: string };
}

/** What the handler receives once a proof is verified: who passed, by which scheme. */
export type VerifiedSession = AgentSession | GroupSession | BudgetSession;

export type { SignatureSession } from "./modes/web-bot-auth/signatures";

export type GuardResult<S = VerifiedSession> = { ok: true; session: S } | { ok: false; response: Response };

/** A guard's answer other than a session. */
export type Refusal = Extract<GuardResult, { ok: false }>;

export interface Guard<S = VerifiedSession> {
  verify(request: Request): Promise<GuardResult<S>>;
}
