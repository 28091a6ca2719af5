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
//   result.session.scheme ("zkagent" | "group"), .agent_id, .context …
//
// This file holds the options and the dispatch: each mode (modes/) decides
// the requests that present its credentials; a request that presents none
// is asked for a claim. The ZKAgent exchange is one mode, with one claim
// kind per claim (modes/agent.ts, modes/group.ts); Web Bot Auth signatures
// are another (modes/web-bot-auth/), admitted where `accept` names them.
import { originOf } from "../http-auth/statement";
import { agentClaim } from "./modes/agent";
import { zkagentExchange } from "./modes/exchange";
import { groupClaim } from "./modes/group";
import type { ClaimKind, Mode } from "./modes/types";
import { signatureRequired, webBotAuth } from "./modes/web-bot-auth";
import { claimRequired, internalError } from "./respond";
import { serviceClient } from "./service";
import type { Guard, GuardOptions, GuardResult, ProofScheme, Scheme, SessionOf } from "./types";

export { SCHEME } from "../http-auth/scheme";
export { REQUEST_MEMBER } from "../http-auth/statement";
export { BadRequest, bodyFields } from "./request";
export type {
  AgentSession,
  Guard,
  GuardOptions,
  GuardResult,
  GroupSession,
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

const SCHEMES: readonly Scheme[] = ["zkagent", "group", "web-bot-auth"];
const PROOF_SCHEMES: readonly ProofScheme[] = ["zkagent", "group"];

/** The options a guard cannot work with are refused when it is made, not on a request (a 500 each time). */
function checkOptions(options: GuardOptions<Scheme>): void {
  // Only scheme and authority are bound: a path here (a prefix the proxy adds) would be silently dropped, so it is refused.
  if (options.origin !== undefined && (originOf(options.origin) === null || !/^[a-z]+:\/\/[^/?#]+\/?$/i.test(options.origin)))
    throw new TypeError(`origin must be an http(s) origin (scheme://host[:port]), not ${options.origin}`);
  if (options.groups !== undefined && !(Array.isArray(options.groups) && options.groups.every((g) => typeof g === "string" && g !== "")))
    throw new TypeError("groups must be a list of group ids");
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
  const service = serviceClient(options);
  const accepts = (kind: ClaimKind) => accepted.has(kind.scheme);
  const proofs =
    accepted.has("zkagent") || accepted.has("group") ? zkagentExchange({ options, service, kinds: [agentClaim(), groupClaim(groups)], accepts }) : null;
  const modes: Mode[] = [];
  if (accepted.has("web-bot-auth") && all.signatures) modes.push(webBotAuth({ ...all, signatures: all.signatures }, service, proofs !== null, realm));
  if (proofs) modes.push(proofs);
  const claims = [...(accepted.has("zkagent") ? ['agent="<agent id>"'] : []), ...(accepted.has("group") && groups.length > 0 ? ['group="<group id>"'] : [])];
  const askForClaim = `repeat the request with Authorization: ZKAgent ${claims.join(" or ZKAgent ") || "…: this resource accepts no claim"}`;

  return {
    async verify(request) {
      try {
        for (const mode of modes) {
          if (!mode.presented(request)) continue;
          const result = await mode.decide(request);
          // A refused signature may still pass by a proof the request also carries: the proof decides.
          if (!result.ok && mode !== proofs && proofs?.presented(request)) return (await proofs.decide(request)) as GuardResult<SessionOf<M>>;
          return result as GuardResult<SessionOf<M>>;
        }
        return proofs ? claimRequired(realm, askForClaim) : signatureRequired();
      } catch {
        // A context function that threw, a bug: no detail leaves (no stack in any answer).
        return internalError();
      }
    },
  };
}
