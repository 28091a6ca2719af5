// The guard's Web Bot Auth mode (docs/http-auth.md, "Signed agents"): a
// request signed by an agent of an operator the merchant trusts passes as
// that operator's agent, with no challenge and no call to the zkagent service
// (but for the merchant's own registered agents, looked up by keyid and
// cached). The protocol's rules are src/web-bot-auth/'s; what the guard keeps
// between requests is signatures.ts's and directories.ts's; this file turns
// an outcome into the answer. Whether a refused signature may still pass by a
// proof is the dispatcher's to decide (../../index.ts), not this mode's.
import { boundRequest } from "../../../http-auth/statement";
import { hasSignature, type SignatureReason, WEB_BOT_AUTH_TAG } from "../../../web-bot-auth/verify";
import { answer, refuse } from "../../respond";
import { type ServiceCall, Unavailable } from "../../service";
import type { GuardOptions, Refusal, Scheme } from "../../types";
import type { Mode } from "../types";
import { type RegisteredKeyLookup, type SignatureOptions, signatureMode } from "./signatures";

export { type RegisteredKeyLookup, type SignatureOptions, type SignatureSession, signatureMode, trustedDirectories } from "./signatures";
export { DirectoryCache, type DirectoryCacheOptions } from "./directories";

export interface RegisteredKeysOptions {
  /** How long an answer naming an agent is reused, s (a revocation takes at most this long to be seen). Default 5. */
  ttlSeconds?: number;
  /** How long "none of the merchant's agents" is reused, s. Default 60. */
  negativeTtlSeconds?: number;
  /** Answers kept at most (the oldest dropped first). Default 10 000. */
  maxEntries?: number;
  /** Unix seconds (tests). */
  now?: () => number;
}

type Registered = Awaited<ReturnType<RegisteredKeyLookup>>;

/**
 * A registered agent's signing key by its thumbprint, among the merchant's
 * own agents (null: none); Unavailable when the service cannot say. Answers,
 * negative ones too, are cached and concurrent lookups of one key id share a
 * call, so a flood of forged signatures costs at most one service call per
 * key id per cache period (a failure is not cached).
 */
export function registeredKeys(service: ServiceCall, options: RegisteredKeysOptions = {}): RegisteredKeyLookup {
  const ttl = options.ttlSeconds ?? 5;
  const negativeTtl = options.negativeTtlSeconds ?? 60;
  const maxEntries = options.maxEntries ?? 10_000;
  const now = options.now ?? (() => Date.now() / 1000);
  const cached = new Map<string, { value: Registered; until: number }>();
  const pending = new Map<string, Promise<Registered>>();

  async function ask(keyid: string): Promise<Registered> {
    const found = await service("GET", `/v1/signing-keys/${keyid}`);
    if (found.status === 404) return null;
    const { agent_id, signing_key, status } = found.body;
    if (found.status !== 200 || typeof agent_id !== "string" || typeof signing_key !== "string") throw new Unavailable();
    return { agent_id, signing_key, revoked: status !== "active" };
  }

  return async (keyid) => {
    if (!/^[A-Za-z0-9_-]{43}$/.test(keyid)) return null;
    const hit = cached.get(keyid);
    if (hit !== undefined && hit.until > now()) return hit.value;
    const inFlight = pending.get(keyid);
    if (inFlight) return inFlight;
    const asking = ask(keyid)
      .then((value) => {
        cached.delete(keyid); // re-inserted last: the Map's order is the eviction order
        if (cached.size >= maxEntries) cached.delete(cached.keys().next().value!);
        cached.set(keyid, { value, until: now() + (value === null ? negativeTtl : ttl) });
        return value;
      })
      .finally(() => pending.delete(keyid));
    pending.set(keyid, asking);
    return asking;
  };
}

/** The reasons that say the verifier could not decide (a dependency is down), with their status: never a 401, which would tell the agent its signature is wrong. */
const UNAVAILABLE: Partial<Record<SignatureReason, { status: number; error: string; retryAfter: number }>> = {
  directory_unavailable: { status: 502, error: "Signature directory unavailable", retryAfter: 30 },
  agent_lookup_unavailable: { status: 502, error: "Verification service unavailable", retryAfter: 5 },
  nonce_unavailable: { status: 503, error: "Nonce store unavailable", retryAfter: 5 },
};

/** How draft -01 asks for a nonce: Accept-Signature (RFC 9421 §5.1) naming the components and parameters a signature must carry. */
export const ACCEPT_SIGNATURE_WITH_NONCE = `sig1=("@authority" "signature-agent";key="sig1");created;expires;keyid;nonce;tag="${WEB_BOT_AUTH_TAG}"`;

/** The answer for a refused signature: its reason, and the status and headers the reason calls for. */
export function signatureRefusal(outcome: { reason: SignatureReason; message: string; retryAfter?: number }, realm: string | null): Refusal {
  const body = { error: "Signature refused", reason: outcome.reason, message: outcome.message };
  const unavailable = UNAVAILABLE[outcome.reason];
  let refusal: Refusal;
  if (unavailable) {
    refusal = answer(unavailable.status, { ...body, error: unavailable.error });
    refusal.response.headers.set("retry-after", String(outcome.retryAfter ?? unavailable.retryAfter));
    return refusal;
  }
  // A nonce accepted before: the signature is over-used (draft -01's 429), not unknown; no Retry-After, it never passes again.
  if (outcome.reason === "replayed_nonce") return answer(429, body);
  refusal = answer(401, body, realm === null ? undefined : { realm });
  if (outcome.reason === "nonce_required") refusal.response.headers.set("accept-signature", ACCEPT_SIGNATURE_WITH_NONCE);
  return refusal;
}

/**
 * A signed request is this mode's. Refused, the 401 names the signature's
 * reason and, when the route also admits proofs (`offersProof`), offers the
 * ZKAgent scheme too.
 */
export function webBotAuth(options: GuardOptions<Scheme> & { signatures: SignatureOptions }, service: ServiceCall, offersProof: boolean, realm: string): Mode {
  const check = signatureMode(options.signatures, registeredKeys(service));
  return {
    presented: hasSignature,
    async decide(request) {
      const outcome = await check(request, boundRequest(request.method, request.url, options.origin));
      if (outcome.ok) return outcome;
      return signatureRefusal(outcome, offersProof ? realm : null);
    },
  };
}

/** A route that admits signatures only, asked with none. */
export const signatureRequired = () =>
  refuse(401, "Signature required", "signature_required", {
    message: "sign the request (Web Bot Auth, RFC 9421) as an agent of an operator this server trusts",
  });
