// The merchant side of the ZKAgent HTTP authentication scheme
// (docs/http-auth.md): one check, framework-neutral, on the Fetch API. It
// takes the incoming Request and answers either the verified session (serve
// the request: who passed, by which scheme) or the Response to send instead
// (401 with a challenge, 400, 403 with the reason, 502 when the zkagent
// service cannot be reached). Adapters in adapters/ put it in front of Hono
// and Elysia routes.
//
//   const guard = zkagentGuard({ url, apiKey, action: "purchase",
//     context: ({ body }) => ({ amount: body.amount, currency: body.currency }),
//     groups: ["household"] });
//   const result = await guard.verify(request);
//   if (!result.ok) return result.response;
//   result.session.scheme ("zkagent" | "group" | "budget"), .agent_id, .context …
//
// This file holds the options and the dispatch: each mode (modes/) decides
// the requests that present its credentials; a request that presents none
// is asked for a claim. The ZKAgent exchange is one mode, with one claim
// kind per claim (modes/agent.ts, modes/group.ts, modes/budget.ts); Web Bot Auth signatures
// are another (modes/web-bot-auth/), admitted where `accept` names them.
import { originOf } from "../http-auth/statement";
import { agentClaim } from "./modes/agent";
import { budgetClaim } from "./modes/budget";
import { zkagentExchange } from "./modes/exchange";
import { groupClaim } from "./modes/group";
import type { ClaimKind, Mode } from "./modes/types";
import { signatureRequired, webBotAuth } from "./modes/web-bot-auth";
import { reporter } from "./problems";
import { requestUrlProblem } from "./request";
import { claimRequired, internalError, invalidRequest, serviceRejectedKey, verifierUnavailable } from "./respond";
import { serviceClient, Unavailable } from "./service";
import type { Guard, GuardOptions, GuardResult, ProofScheme, Scheme, SessionOf } from "./types";

export { SCHEME } from "../http-auth/scheme";
export { REQUEST_MEMBER } from "../http-auth/statement";
export { BadRequest, bodyFields } from "./request";
export type {
  AgentSession,
  BudgetSession,
  Guard,
  GuardOptions,
  GuardResult,
  GroupSession,
  GuardProblem,
  JsonObject,
  ProofScheme,
  RequestInput,
  Scheme,
  SessionOf,
  SignatureSession,
  VerifiedSession,
} from "./types";
/** The schemes a route may name in `accept` (the name the Web Bot Auth work gave it). */
export type { Scheme as GuardMode } from "./types";
export type { SignatureOptions } from "./modes/web-bot-auth/signatures";
export { MemoryNonceStore, type NonceStore, type SignatureReason } from "../web-bot-auth";
export { DirectoryCache, type DirectoryCacheOptions } from "./modes/web-bot-auth/directories";
export { PostgresNonceStore, type PostgresNonceStoreOptions, type PostgresQueryClient } from "../web-bot-auth/nonces-postgres";
export { RedisNonceStore, type RedisCommandClient, type RedisNonceStoreOptions } from "../web-bot-auth/nonces-redis";
export {
  type Agent,
  type AgentRegistration,
  type BudgetTerms,
  type ClientOptions,
  type Enrolment,
  type EnrolmentRequest,
  type Group,
  type GroupCreation,
  type GroupTree,
  type Mandate,
  type MandateLimit,
  type MandateRecord,
  type SignedMandate,
  type Spend,
  ZkagentApiError,
  type ZkagentClient,
  zkagentClient,
} from "./client";

const SCHEMES: readonly Scheme[] = ["zkagent", "group", "budget", "web-bot-auth"];
const PROOF_SCHEMES: readonly ProofScheme[] = ["zkagent", "group"];
/** The schemes the ZKAgent exchange answers (every one but signatures). */
const PROOF_KINDS: readonly Scheme[] = ["zkagent", "group", "budget"];

const describe = (value: unknown): string => (typeof value === "string" ? JSON.stringify(value) : value === undefined ? "missing" : typeof value);

/** The options a guard cannot work with are refused when it is made, naming the option, not on a request (a 500 or a 502 each time). */
function checkOptions(options: GuardOptions<Scheme>): void {
  if (options === null || typeof options !== "object") throw new TypeError("zkagentGuard needs its options: { url, apiKey, action, … }");
  if (typeof options.url !== "string" || originOf(options.url) === null)
    throw new TypeError(`url must be the zkagent service's http(s) URL (e.g. https://zkagent.example.com), not ${describe(options.url)}`);
  if (options.publicUrl !== undefined && (typeof options.publicUrl !== "string" || originOf(options.publicUrl) === null))
    throw new TypeError(`publicUrl must be an http(s) URL, not ${describe(options.publicUrl)}`);
  // The key itself is never echoed: only what is wrong with it.
  if (typeof options.apiKey !== "string" || options.apiKey === "")
    throw new TypeError(
      `apiKey must be the merchant's API key for the zkagent service (a string), not ${options.apiKey === "" ? "empty" : typeof options.apiKey}`,
    );
  if (!/^[\x21-\x7e]+$/.test(options.apiKey)) throw new TypeError("apiKey holds spaces or characters a header cannot carry (copied with a line break?)");
  if (typeof options.action !== "string" && typeof options.action !== "function")
    throw new TypeError(`action must be the action's name or a function of the request, not ${describe(options.action)}`);
  if (options.context !== undefined && typeof options.context !== "function")
    throw new TypeError("context must be a function of the request returning a JSON object (e.g. bodyFields([…]))");
  for (const name of ["fetch", "onError"] as const)
    if (options[name] !== undefined && typeof options[name] !== "function") throw new TypeError(`${name} must be a function`);
  if (options.timeoutMs !== undefined && !(typeof options.timeoutMs === "number" && options.timeoutMs > 0 && Number.isFinite(options.timeoutMs)))
    throw new TypeError(`timeoutMs must be a positive number of milliseconds, not ${describe(options.timeoutMs)}`);
  if (options.realm !== undefined && typeof options.realm !== "string") throw new TypeError("realm must be a string");
  // Only scheme and authority are bound: a path here (a prefix the proxy adds) would be silently dropped, so it is refused.
  if (options.origin !== undefined && (originOf(options.origin) === null || !/^[a-z]+:\/\/[^/?#]+\/?$/i.test(options.origin)))
    throw new TypeError(`origin must be an http(s) origin (scheme://host[:port]), not ${options.origin}`);
  for (const name of ["groups", "budgets"] as const) {
    const list = options[name];
    if (list !== undefined && !(Array.isArray(list) && list.every((g) => typeof g === "string" && g !== "")))
      throw new TypeError(`${name} must be a list of group ids`);
  }
  // A group is budgeted or not (fixed at its creation): its members either prove membership or spend, never both.
  const both = (options.budgets ?? []).find((g) => options.groups?.includes(g));
  if (both !== undefined) throw new TypeError(`group ${JSON.stringify(both)} is in both groups and budgets: a budgeted group goes in budgets only`);
  for (const scheme of options.accept ?? []) if (!SCHEMES.includes(scheme)) throw new TypeError(`accept: unknown scheme ${scheme}`);
  if (options.accept?.length === 0) throw new TypeError("accept must name at least one scheme");
  if (options.accept?.includes("web-bot-auth") && !options.signatures)
    throw new TypeError('accept names "web-bot-auth": give signatures.signatureAgents, the operators trusted');
}

export function zkagentGuard<const M extends Scheme = ProofScheme>(options: GuardOptions<M>): Guard<SessionOf<M>> {
  const all = options as GuardOptions<Scheme>;
  checkOptions(all);
  const realm = options.realm ?? "zkagent";
  const accepted = new Set<Scheme>(options.accept ?? PROOF_SCHEMES);
  const groups = options.groups ?? [];
  const budgets = options.budgets ?? [];
  const report = reporter(options.onError);
  const service = serviceClient(options, report);
  const accepts = (kind: ClaimKind) => accepted.has(kind.scheme);
  // The budget kind before the group kind: a budget challenge's status names a group too.
  const kinds = [agentClaim(), budgetClaim(budgets, report), groupClaim(groups)];
  const proofs = PROOF_KINDS.some((scheme) => accepted.has(scheme)) ? zkagentExchange({ options, service, kinds, accepts, report }) : null;
  const modes: Mode[] = [];
  if (accepted.has("web-bot-auth") && all.signatures) modes.push(webBotAuth({ ...all, signatures: all.signatures }, service, proofs !== null, realm));
  if (proofs) modes.push(proofs);
  // The budget groups are named outright (a member's agent may hold memberships of several); agents and groups by a placeholder.
  const offered = accepted.has("budget") ? budgets : [];
  const claims = [
    ...(accepted.has("zkagent") ? ['agent="<agent id>"'] : []),
    ...(accepted.has("group") && groups.length > 0 ? ['group="<group id>"'] : []),
    ...offered.map((group) => `budget=${JSON.stringify(group)}`),
  ];
  const askForClaim = `repeat the request with Authorization: ZKAgent ${claims.join(" or ZKAgent ") || "…: this resource accepts no claim"}`;
  const offers = offered.map((group) => ({ budget: group }));

  return {
    async verify(request) {
      // Before any mode: every origin and target below is read from this URL.
      const unreadable = requestUrlProblem(request);
      if (unreadable) return invalidRequest(unreadable);
      try {
        for (const mode of modes) {
          if (!mode.presented(request)) continue;
          const result = await mode.decide(request);
          // A refused signature may still pass by a proof the request also carries: the proof decides.
          if (!result.ok && mode !== proofs && proofs?.presented(request)) return (await proofs.decide(request)) as GuardResult<SessionOf<M>>;
          return result as GuardResult<SessionOf<M>>;
        }
        return proofs ? claimRequired(realm, askForClaim, offers) : signatureRequired();
      } catch (error) {
        // Reported where it happened (service.ts); the agent gets the reason only.
        if (error instanceof Unavailable) return error.reason === "service_rejected_key" ? serviceRejectedKey() : verifierUnavailable(error.retryAfter);
        // A context function that threw, a bug: no detail leaves (no stack in any answer); the merchant gets it.
        report({
          reason: "internal_error",
          level: "error",
          message: `${request.method} ${new URL(request.url).pathname}: the action or context function threw`,
          cause: error,
        });
        return internalError();
      }
    },
  };
}
