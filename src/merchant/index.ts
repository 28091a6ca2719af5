// The merchant side of the ZKAgent HTTP authentication scheme
// (docs/http-auth.md): one check, framework-neutral, on the Fetch API. It
// takes the incoming Request and answers either the verified session (serve
// the request) or the Response to send instead (401 with a challenge, 400,
// 403 with the reason, 502 when the zkagent service cannot be reached).
// Adapters in adapters/ put it in front of Hono and Elysia routes.
//
//   const guard = zkagentGuard({ url, apiKey, action: "purchase",
//     context: ({ body }) => ({ amount: body.amount, currency: body.currency }) });
//   const result = await guard.verify(request);
//   if (!result.ok) return result.response;
//   result.session.agent_id, result.session.context …
//
// Stateless: the service holds every challenge. For each request the guard
// rebuilds the action and the context from the request itself, asks the
// service what the presented challenge was issued for (its status: action
// and context hash), and submits the proof only when both are this
// request's. A retried request whose body differs is refused before its
// proof is spent, and nothing the proof does not bind reaches the handler:
// the session carries the bound context, and the handler serves from it.
import { canonicalJson, contextHash, type JsonObject } from "../identity/encoding";
import { formatAuth, fromBase64url, parseAuth, toBase64url } from "../http-auth/scheme";
import { type BoundRequest, boundRequest, challengedContext, isJsonType } from "../http-auth/statement";
import { hasSignature } from "../web-bot-auth/verify";
import { type SignatureOptions, type SignatureSession, signatureMode } from "./signatures";

export type { JsonObject } from "../identity/encoding";

/** What the context function gets: the request, and its body read once as JSON (undefined when it is not JSON). */
export interface RequestInput {
  request: Request;
  body: unknown;
}

/**
 * How a route lets agents in: "zkagent" (an agent's proof of intent, the
 * challenge exchange), "group" (a group member's anonymous proof),
 * "web-bot-auth" (a signature by an agent of an operator the merchant
 * trusts: docs/http-auth.md, "Signed agents").
 */
export type GuardMode = "zkagent" | "group" | "web-bot-auth";

/** The session a route's handler gets, by the modes it accepts: a signature's only when "web-bot-auth" is among them. */
export type SessionOf<M extends GuardMode> = [M] extends ["web-bot-auth"]
  ? SignatureSession
  : "web-bot-auth" extends M
    ? VerifiedSession | SignatureSession
    : VerifiedSession;

export interface GuardOptions<M extends GuardMode = "zkagent" | "group"> {
  /** The modes this route admits. Default ["zkagent", "group"]. */
  accept?: readonly M[];
  /** The "web-bot-auth" mode's trust: required when `accept` names it. */
  signatures?: SignatureOptions;
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
  /** The service's URL as agents reach it, for the circuit's URL in a challenge. Default `url`. */
  publicUrl?: string;
  /** For tests and custom transports: the global fetch by default. */
  fetch?: (input: Request) => Response | Promise<Response>;
  /** How long a call to the service may take, ms. Default 10 000. */
  timeoutMs?: number;
}

export { REQUEST_MEMBER } from "../http-auth/statement";

/** What the handler receives once a request is verified. */
export interface VerifiedSession {
  /** The challenge id: GET /v1/verify/status/{session_id} reads it back. */
  session_id: string;
  /** The verified agent; for a group challenge, the pseudonym (as the service returns it). */
  agent_id: string;
  /** For a group challenge: the agent's pseudonym in this scope. */
  pseudonym?: string;
  /** For a group challenge: the group it proved membership of. */
  group_id?: string;
  action: string;
  /** The context as the merchant declared it (without the request member): what the proof binds. Serve from this. */
  context: JsonObject;
  /** The method, origin and request target the proof binds. */
  request: { method: string; origin: string; target: string };
  confidence: number;
  /** The service's signed receipt (compact JWS), or null when it could not be stored. */
  receipt: string | null;
}

export type GuardResult<S = VerifiedSession> = { ok: true; session: S } | { ok: false; response: Response };

export type { SignatureOptions, SignatureSession } from "./signatures";
export { MemoryNonceStore, type NonceStore, type SignatureReason } from "../web-bot-auth";
export { DirectoryCache, type DirectoryCacheOptions } from "./directories";

/** Thrown by a context or action function: the request cannot be challenged as it is (400, with this message). */
export class BadRequest extends Error {}

/**
 * A context function that takes `names` from the JSON body, each required
 * (400 naming the first one missing), and adds `extra` (e.g. the merchant's
 * name): `context: bodyFields(["amount", "currency"], { merchant: "shop" })`.
 */
export function bodyFields(names: string[], extra: JsonObject = {}): (input: RequestInput) => JsonObject {
  return ({ body }) => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new BadRequest("the body must be a JSON object");
    const context: JsonObject = {};
    for (const name of names) {
      const value = (body as JsonObject)[name];
      if (value === undefined || value === null) throw new BadRequest(`${name} is required`);
      context[name] = value;
    }
    return { ...context, ...extra };
  };
}

export interface Guard<S = VerifiedSession> {
  verify(request: Request): Promise<GuardResult<S>>;
}

/** The claim an agent makes: which service field names it, from which auth-param. */
const CLAIMS = { agent: "agent_id", group: "group_id" } as const;

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-store" };

type Refusal = { ok: false; response: Response };

function answer(status: number, body: Record<string, unknown>, challenge?: Record<string, string>): Refusal {
  const headers: Record<string, string> = { ...JSON_HEADERS };
  if (challenge) headers["www-authenticate"] = formatAuth(challenge);
  return { ok: false, response: new Response(JSON.stringify(body), { status, headers }) };
}

const refuse = (status: number, error: string, reason: string, extra: Record<string, unknown> = {}): Refusal => answer(status, { error, reason, ...extra });

/** A service answer that could not be used: the merchant's problem, not the agent's (no detail leaves). */
class Unavailable extends Error {}

export function zkagentGuard<const M extends GuardMode = "zkagent" | "group">(options: GuardOptions<M>): Guard<SessionOf<M>> {
  const accepted = new Set<GuardMode>(options.accept ?? ["zkagent", "group"]);
  if (accepted.size === 0) throw new TypeError("accept must name at least one mode");
  const proofs = accepted.has("zkagent") || accepted.has("group");
  let signatures: ReturnType<typeof signatureMode> | null = null;
  if (accepted.has("web-bot-auth")) {
    if (!options.signatures) throw new TypeError('accept names "web-bot-auth": give signatures.signatureAgents, the operators trusted');
    signatures = signatureMode(options.signatures, lookupRegisteredKey);
  }
  const base = options.url.replace(/\/+$/, "");
  const publicBase = (options.publicUrl ?? options.url).replace(/\/+$/, "");
  const realm = options.realm ?? "zkagent";
  const send = options.fetch ?? ((request: Request) => fetch(request));
  const timeoutMs = options.timeoutMs ?? 10_000;

  async function service(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    let response: Response;
    try {
      response = await send(
        new Request(base + path, {
          method,
          headers: body === undefined ? { "x-api-key": options.apiKey } : { "x-api-key": options.apiKey, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        }),
      );
    } catch {
      throw new Unavailable();
    }
    // 401/403 on the merchant's own key, 429, 5xx: nothing the agent can mend.
    if (response.status >= 500 || response.status === 401 || response.status === 429) throw new Unavailable();
    let parsed: unknown;
    try {
      parsed = await response.json();
    } catch {
      throw new Unavailable();
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Unavailable();
    return { status: response.status, body: parsed as Record<string, unknown> };
  }

  /** A registered agent's signing key by its thumbprint, among the merchant's agents (null: none); throws when the service cannot say. */
  async function lookupRegisteredKey(keyid: string): Promise<{ agent_id: string; signing_key: string; revoked: boolean } | null> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(keyid)) return null;
    const found = await service("GET", `/v1/agents/by-keyid/${keyid}`);
    if (found.status === 404) return null;
    const { agent_id, signing_key, status } = found.body;
    if (found.status !== 200 || typeof agent_id !== "string" || typeof signing_key !== "string") throw new Unavailable();
    return { agent_id, signing_key, revoked: status !== "active" };
  }

  /** The action and the full challenged context of this request. */
  async function derive(request: Request): Promise<{ action: string; declared: JsonObject; context: JsonObject; bound: BoundRequest }> {
    let body: unknown;
    const type = request.headers.get("content-type");
    if (request.body !== null && isJsonType(type)) {
      try {
        body = await request.clone().json();
      } catch {
        throw new BadRequest("the body is not valid JSON");
      }
    }
    const input = { request, body };
    const action = typeof options.action === "string" ? options.action : await options.action(input);
    const declared = options.context ? await options.context(input) : {};
    if (typeof declared !== "object" || declared === null || Array.isArray(declared)) throw new TypeError("the context function must return a JSON object");
    const bound = boundRequest(request.method, request.url, options.origin);
    return { action, declared, context: challengedContext(declared, bound), bound };
  }

  /** 401 with a fresh challenge for this request and this claim. */
  async function challenge(claim: { name: keyof typeof CLAIMS; value: string }, action: string, context: JsonObject, error?: string): Promise<GuardResult> {
    const created = await service("POST", "/v1/verify/challenge", { [CLAIMS[claim.name]]: claim.value, action, context });
    if (created.status === 400) return refuse(400, "Invalid ZKAgent claim", "invalid_claim", { message: String(created.body.error ?? "") });
    if (created.status !== 200 || typeof created.body.challenge_id !== "string") throw new Unavailable();
    // Every scalar the service answered (today's fields and a group
    // challenge's: merkle_tree_root, scope, message, …) goes to the agent as is.
    const params: Record<string, string> = { realm };
    if (error) params.error = error;
    for (const [name, value] of Object.entries(created.body)) {
      if (name === "realm" || name === "error") continue; // the guard's own parameters
      if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") params[name] = String(value);
    }
    params.action = action;
    params.context = toBase64url(canonicalJson(context));
    if (typeof created.body.circuit_id === "string") params.circuit = `${publicBase}/v1/circuits/${encodeURIComponent(created.body.circuit_id)}`;
    const circuit = params.circuit === undefined ? {} : { circuit: params.circuit };
    return answer(
      401,
      { error: "ZKAgent proof required", reason: error ?? "proof_required", challenge: { ...created.body, action, context, ...circuit } },
      params,
    );
  }

  /**
   * A signed request on a route that admits signatures is judged by its
   * signature. Refused, it may still come in by a proof when the route admits
   * proofs and the request carries ZKAgent credentials; without them, the 401
   * names the signature's reason and offers the ZKAgent challenge.
   */
  async function verify(request: Request): Promise<GuardResult<VerifiedSession | SignatureSession>> {
    if (signatures && hasSignature(request)) {
      const outcome = await signatures(request, boundRequest(request.method, request.url, options.origin));
      if (outcome.ok) return { ok: true, session: outcome.session };
      if (!proofs || request.headers.get("authorization") === null)
        return answer(401, { error: "Signature refused", reason: outcome.reason, message: outcome.message }, proofs ? { realm } : undefined);
    }
    if (!proofs)
      return refuse(401, "Signature required", "signature_required", {
        message: "sign the request (Web Bot Auth, RFC 9421) as an agent of an operator this server trusts",
      });
    return verifyProof(request);
  }

  async function verifyProof(request: Request): Promise<GuardResult> {
    const header = request.headers.get("authorization");
    const all = header === null ? [] : parseAuth(header);
    if (all === null || all.length > 1)
      return refuse(400, "Invalid ZKAgent credentials", "invalid_credentials", { message: "the Authorization header does not parse (RFC 9110 §11.6.2)" });
    const credentials = all[0];
    if (!credentials) {
      return answer(
        401,
        {
          error: "ZKAgent authentication required",
          reason: "claim_required",
          message: 'repeat the request with Authorization: ZKAgent agent="<agent id>" (or group="<group id>")',
        },
        { realm },
      );
    }
    const claims = (Object.keys(CLAIMS) as (keyof typeof CLAIMS)[]).filter((name) => credentials[name] !== undefined);
    const challengeId = credentials.challenge_id;
    if (claims.length > 1) return refuse(400, "Invalid ZKAgent credentials", "invalid_credentials", { message: "claim an agent or a group, not both" });
    if (challengeId === undefined && claims.length === 0)
      return refuse(400, "Invalid ZKAgent credentials", "invalid_credentials", { message: "credentials need agent, group or challenge_id" });
    const mode = claims[0] === "group" ? "group" : "zkagent";
    if (claims.length === 1 && !accepted.has(mode))
      return refuse(403, "Claim not accepted", "claim_not_accepted", { message: `this resource does not accept a ${claims[0]} claim` });

    let derived: Awaited<ReturnType<typeof derive>>;
    try {
      derived = await derive(request);
    } catch (error) {
      if (error instanceof BadRequest) return refuse(400, "Invalid request", "invalid_request", { message: error.message });
      throw error;
    }
    const { action, declared, context, bound } = derived;
    const claimName = claims[0];
    const claim = claimName ? { name: claimName, value: credentials[claimName]! } : undefined;
    const renew = (error: string): Promise<GuardResult> =>
      claim ? challenge(claim, action, context, error) : Promise.resolve(answer(401, { error: "ZKAgent proof required", reason: error }, { realm, error }));

    try {
      if (challengeId === undefined) return await challenge(claim!, action, context);
      const proofText = credentials.proof === undefined ? null : fromBase64url(credentials.proof);
      const signature = credentials.signature;
      // The service's ids are URL-safe; anything else is refused before it reaches a URL.
      if (!/^[A-Za-z0-9_-]{1,256}$/.test(challengeId))
        return refuse(400, "Invalid ZKAgent credentials", "invalid_credentials", { message: "challenge_id is not a challenge id" });
      if (proofText === null || proofText === "")
        return refuse(400, "Invalid ZKAgent credentials", "invalid_credentials", { message: "proof must be base64url of the proof's text" });

      // What was this challenge issued for? The service knows; the request says what it should be.
      const status = await service("GET", `/v1/verify/status/${encodeURIComponent(challengeId)}`);
      if (status.status === 404 || status.status === 403) return await renew("unknown_challenge");
      if (status.status !== 200) throw new Unavailable();
      if (status.body.status === "expired") return await renew("challenge_expired");
      if (status.body.status !== "pending") return refuse(403, "Challenge already used", "challenge_used");
      if (status.body.action !== action || status.body.context_hash !== contextHash(context).toString()) {
        return refuse(403, "Request does not match the challenge", "request_mismatch", {
          message: "the action or the context rebuilt from this request (method, target, declared body fields) is not the challenge's",
        });
      }
      if (claim && claim.name === "agent" && status.body.agent_id !== claim.value) {
        return refuse(403, "Request does not match the challenge", "request_mismatch", { message: "the challenge was issued for another agent" });
      }

      const decided = await service("POST", "/v1/verify/proof", {
        challenge_id: challengeId,
        proof: proofText,
        ...(signature ? { agent_signature: signature } : {}),
      });
      const body = decided.body;
      if (
        decided.status === 200 &&
        body.verified === true &&
        body.action === action &&
        typeof body.agent_id === "string" &&
        typeof body.confidence === "number"
      ) {
        const session: VerifiedSession = {
          session_id: challengeId,
          agent_id: body.agent_id,
          action,
          context: declared,
          request: bound,
          confidence: body.confidence,
          receipt: typeof body.receipt === "string" ? body.receipt : null,
        };
        if (typeof body.pseudonym === "string") session.pseudonym = body.pseudonym;
        if (typeof body.group_id === "string") session.group_id = body.group_id;
        return { ok: true, session };
      }
      if (decided.status === 404) return await renew("unknown_challenge");
      if (body.error === "Challenge expired") return await renew("challenge_expired");
      if (body.error === "Challenge already used") return refuse(403, "Challenge already used", "challenge_used");
      if (body.error === "Proof verification failed") {
        return refuse(
          403,
          "Proof verification failed",
          typeof body.reason === "string" ? body.reason : "proof_rejected",
          typeof body.detail === "string" ? { detail: body.detail } : {},
        );
      }
      if (decided.status === 400 || decided.status === 413)
        return refuse(400, "Invalid ZKAgent credentials", "invalid_credentials", { message: String(body.error ?? "") });
      throw new Unavailable();
    } catch (error) {
      if (error instanceof Unavailable) return refuse(502, "Verification service unavailable", "verifier_unavailable");
      throw error;
    }
  }

  return {
    async verify(request) {
      try {
        // The union narrows to SessionOf<M>: a signature's session only comes from a route that accepts "web-bot-auth".
        return (await verify(request)) as GuardResult<SessionOf<M>>;
      } catch {
        // A context function that threw, a bug: no detail leaves (no stack in any answer).
        return refuse(500, "Internal server error", "internal_error");
      }
    },
  };
}

export { SCHEME } from "../http-auth/scheme";
