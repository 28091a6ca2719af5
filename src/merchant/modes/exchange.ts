// The ZKAgent scheme's exchange (docs/http-auth.md, "How the merchant
// decides"): a claim gets a challenge for this request; credentials with a
// proof are checked against the challenge's status before the proof is
// spent, then submitted. What differs between an agent claim, a group claim
// and a budget spend is the ClaimKind's (agent.ts, group.ts, budget.ts); this file is the order of
// the steps and what every claim shares.
//
// Stateless: the service holds every challenge. For each request the guard
// rebuilds the action and the context from the request itself, asks the
// service what the presented challenge was issued for (its status: action
// and context hash), and submits the proof only when both are this
// request's. A retried request whose body differs is refused before its
// proof is spent, and nothing the proof does not bind reaches the handler:
// the session carries the bound context, and the handler serves from it.
import { canonicalJson, contextHash, type JsonObject } from "../../identity/encoding";
import { type AuthParams, fromBase64url, parseAuth, toBase64url } from "../../http-auth/scheme";
import { BadRequest, type Derived, deriveRequest } from "../request";
import { answer, challengeUsed, invalidClaim, invalidCredentials, invalidRequest, proofFailed, requestMismatch, schemeNotAccepted } from "../respond";
import type { Report } from "../problems";
import { type ServiceAnswer, type ServiceCall, Unavailable } from "../service";
import type { GuardOptions, GuardResult, Refusal, Scheme } from "../types";
import type { ClaimKind, Mode } from "./types";

export interface ExchangeConfig {
  options: GuardOptions<Scheme>;
  service: ServiceCall;
  /** Every claim kind the scheme knows, in the order they are looked for. */
  kinds: readonly ClaimKind[];
  /** Whether this route admits a kind (the guard's `accept`). */
  accepts: (kind: ClaimKind) => boolean;
  /** The merchant's onError: an answer of the service the guard does not understand is told there. */
  report: Report;
}

type Claim = { kind: ClaimKind; value: string };

export function zkagentExchange(config: ExchangeConfig): Mode {
  const { options, service, kinds, accepts, report } = config;
  /** An answer of the service that is none the guard knows: 502, and the merchant is told which. */
  const misunderstood = (call: string, answer: ServiceAnswer): Unavailable => {
    const message = `${call} answered ${answer.status} ${JSON.stringify(answer.body.error ?? answer.body).slice(0, 200)}, which the guard does not understand`;
    report({ reason: "verifier_unavailable", level: "error", message });
    return new Unavailable(message);
  };
  /** A claim kind's 502 (the service's answer contradicts the challenge it issued): the merchant is told which answer. */
  const told = (refusal: Refusal, call: string, answer: ServiceAnswer): Refusal => {
    if (refusal.response.status === 502) misunderstood(call, answer);
    return refusal;
  };
  const realm = options.realm ?? "zkagent";
  const publicBase = (options.publicUrl ?? options.url).replace(/\/+$/, "");

  /** 401 with a fresh challenge for this request and this claim. */
  async function challenge(claim: Claim, derived: Derived, error?: string): Promise<Refusal> {
    const { action, context } = derived;
    const created = await service("POST", "/v1/verify/challenge", { [claim.kind.field]: claim.value, action, context });
    if (created.status === 400) return invalidClaim(String(created.body.error ?? ""));
    // A budget spend pays the origin the challenge binds, which must be one of the merchant key's: the merchant's setup to mend.
    if (created.body.error === "Key has no registered origin" || created.body.error === "Origin not registered for this key") {
      const message = `POST /v1/verify/challenge answered ${created.status} ${created.body.error}: a budget spend pays this server's origin (${derived.bound.origin}), which must be one of the API key's registered origins at the service (zkagent keys set-origins <key id> ${derived.bound.origin}; set the guard's origin behind a proxy)`;
      report({ reason: "verifier_unavailable", level: "error", message });
      throw new Unavailable(message);
    }
    if (created.status !== 200 || typeof created.body.challenge_id !== "string") throw misunderstood("POST /v1/verify/challenge", created);
    const wrongKind = claim.kind.checkChallenge?.(created.body, claim.value);
    if (wrongKind) {
      report({ reason: "verifier_unavailable", level: "error", message: wrongKind });
      throw new Unavailable(wrongKind);
    }
    // Every scalar the service answered (today's fields and a group
    // challenge's: merkle_tree_root, scope, message, …) goes to the agent as
    // is; an object (a budget challenge's `budget`) as base64url of its
    // canonical JSON, as the context travels.
    const params: Record<string, string> = { realm };
    if (error) params.error = error;
    for (const [name, value] of Object.entries(created.body)) {
      if (name === "realm" || name === "error") continue; // the guard's own parameters
      if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") params[name] = String(value);
      else if (typeof value === "object" && value !== null && !Array.isArray(value)) params[name] = toBase64url(canonicalJson(value as JsonObject));
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

  /** Credentials that present a challenge and its proof: checked against the challenge, then submitted. */
  async function answerChallenge(claim: Claim | undefined, credentials: AuthParams, challengeId: string, derived: Derived): Promise<GuardResult> {
    const { action, context } = derived;
    const renew = (error: string): Promise<Refusal> =>
      claim ? challenge(claim, derived, error) : Promise.resolve(answer(401, { error: "ZKAgent proof required", reason: error }, { realm, error }));
    const proofText = credentials.proof === undefined ? null : fromBase64url(credentials.proof);
    // The service's ids are URL-safe; anything else is refused before it reaches a URL.
    if (!/^[A-Za-z0-9_-]{1,256}$/.test(challengeId)) return invalidCredentials("challenge_id is not a challenge id");
    if (proofText === null || proofText === "") return invalidCredentials("proof must be base64url of the proof's text");

    // What was this challenge issued for? The service knows; the request says what it should be.
    const status = await service("GET", `/v1/verify/status/${encodeURIComponent(challengeId)}`);
    if (status.status === 404 || status.status === 403) return renew("unknown_challenge");
    if (status.status !== 200) throw misunderstood("GET /v1/verify/status", status);
    if (status.body.status === "expired") return renew("challenge_expired");
    if (status.body.status !== "pending") return challengeUsed();
    if (status.body.action !== action || status.body.context_hash !== contextHash(context).toString()) {
      return requestMismatch("the action or the context rebuilt from this request (method, origin, target, declared body fields) is not the challenge's");
    }
    // The challenge's own kind: credentials naming no claim are held to the kind of challenge they present.
    const kind = kinds.find((k) => k.owns(status.body));
    if (kind === undefined) throw misunderstood("GET /v1/verify/status", status);
    if (claim && claim.kind !== kind) return requestMismatch(`the challenge was not issued for a ${claim.kind.param} claim`);
    if (!accepts(kind)) return schemeNotAccepted(kind.scheme);
    const refused = kind.checkStatus(status.body, claim?.value);
    if (refused) return told(refused, "GET /v1/verify/status", status);

    const signature = credentials.signature;
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
      const session = kind.session(body, status.body, {
        session_id: challengeId,
        agent_id: body.agent_id,
        action,
        context: derived.declared,
        request: derived.bound,
        confidence: body.confidence,
        receipt: typeof body.receipt === "string" ? body.receipt : null,
      });
      return session.ok ? session : told(session, "POST /v1/verify/proof", decided);
    }
    if (decided.status === 404) return renew("unknown_challenge");
    if (body.error === "Challenge expired") return renew("challenge_expired");
    if (body.error === "Challenge already used") return challengeUsed();
    if (body.error === "Proof verification failed")
      return proofFailed(typeof body.reason === "string" ? body.reason : "proof_rejected", typeof body.detail === "string" ? body.detail : undefined);
    if (decided.status === 400 || decided.status === 413) return invalidCredentials(String(body.error ?? ""));
    throw misunderstood("POST /v1/verify/proof", decided);
  }

  return {
    presented(request) {
      // Another scheme's credentials alone (Basic, Bearer) are not ours; a header that does not parse is (400).
      const header = request.headers.get("authorization");
      if (header === null) return false;
      const all = parseAuth(header);
      return all === null || all.length > 0;
    },

    async decide(request) {
      const all = parseAuth(request.headers.get("authorization") ?? "");
      if (all === null || all.length > 1) return invalidCredentials("the Authorization header does not parse (RFC 9110 §11.6.2)");
      const credentials = all[0];
      if (credentials === undefined) throw new TypeError("decide() without ZKAgent credentials");
      const claimed = kinds.filter((kind) => credentials[kind.param] !== undefined);
      const challengeId = credentials.challenge_id;
      if (claimed.length > 1) return invalidCredentials("claim one of agent, group or budget, not several");
      if (challengeId === undefined && claimed.length === 0) return invalidCredentials("credentials need agent, group, budget or challenge_id");
      const kind = claimed[0];
      const claim = kind ? { kind, value: credentials[kind.param]! } : undefined;
      // A claim this route does not take is refused before the body is read or the service is asked.
      if (claim) {
        if (!accepts(claim.kind)) return schemeNotAccepted(claim.kind.scheme);
        const refused = claim.kind.admit(claim.value);
        if (refused) return refused;
      }

      let derived: Derived;
      try {
        derived = await deriveRequest(request, options);
      } catch (error) {
        if (error instanceof BadRequest) return invalidRequest(error.message);
        throw error;
      }
      // A kind whose challenge needs more of the context (a budget spend's price) is refused before the service is asked.
      const unfit = claim?.kind.checkContext?.(derived.declared);
      if (unfit) return unfit;
      // Unavailable (the service refused the key, or could not be used) is the dispatcher's to answer, for every mode alike.
      if (challengeId === undefined) return challenge(claim!, derived);
      return answerChallenge(claim, credentials, challengeId, derived);
    },
  };
}
