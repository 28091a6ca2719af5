// The guard's Web Bot Auth mode (docs/http-auth.md, "Signed agents"): a
// request signed by an agent of an operator the merchant trusts passes as
// that operator's agent, with no challenge and no call to the zkagent service
// (but for the merchant's own registered agents, looked up by keyid). The
// rules are src/web-bot-auth/verify.ts's; the directories and nonces the
// guard keeps between requests are ../signatures.ts's.
import { boundRequest } from "../../http-auth/statement";
import { hasSignature } from "../../web-bot-auth/verify";
import { answer, refuse } from "../respond";
import { type ServiceCall, Unavailable } from "../service";
import { type RegisteredKeyLookup, type SignatureOptions, signatureMode } from "../signatures";
import type { GuardOptions, Scheme } from "../types";
import type { Mode } from "./types";

/** A registered agent's signing key by its thumbprint, among the merchant's own agents (null: none); Unavailable when the service cannot say. */
export function registeredKeys(service: ServiceCall): RegisteredKeyLookup {
  return async (keyid) => {
    if (!/^[A-Za-z0-9_-]{43}$/.test(keyid)) return null;
    const found = await service("GET", `/v1/signing-keys/${keyid}`);
    if (found.status === 404) return null;
    const { agent_id, signing_key, status } = found.body;
    if (found.status !== 200 || typeof agent_id !== "string" || typeof signing_key !== "string") throw new Unavailable();
    return { agent_id, signing_key, revoked: status !== "active" };
  };
}

/**
 * A signed request is this mode's. Refused, it may still pass by a proof when
 * the route admits proofs and the request carries ZKAgent credentials (`proofs`
 * then decides it); without them the 401 names the signature's reason and,
 * when proofs are admitted, offers the ZKAgent scheme too.
 */
export function webBotAuth(options: GuardOptions<Scheme> & { signatures: SignatureOptions }, service: ServiceCall, proofs: Mode | null, realm: string): Mode {
  const check = signatureMode(options.signatures, registeredKeys(service));
  return {
    presented: hasSignature,
    async decide(request) {
      const outcome = await check(request, boundRequest(request.method, request.url, options.origin));
      if (outcome.ok) return outcome;
      if (proofs?.presented(request)) return proofs.decide(request);
      return answer(401, { error: "Signature refused", reason: outcome.reason, message: outcome.message }, proofs ? { realm } : undefined);
    },
  };
}

/** A route that admits signatures only, asked with none. */
export const signatureRequired = () =>
  refuse(401, "Signature required", "signature_required", {
    message: "sign the request (Web Bot Auth, RFC 9421) as an agent of an operator this server trusts",
  });
