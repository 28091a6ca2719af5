// The principal's side of delegation: an Ed25519 key pair for the human or
// organisation behind an agent, and the signed mandate (a compact JWS, see
// src/mandates/principal.ts) the platform registers for the agent. The
// platform cannot widen what the principal signed.
//
//   const principal = createPrincipal();               // keep principal_secret private
//   // register the agent with principal_key: principal.principal_key
//   const mandate_jws = await signMandate({ principalSecret: principal.principal_secret,
//     agentId: "shopper-1", identityCommitment, mandate: { limits: [...] } });
import { CompactSign } from "jose";
import { newSigningKeyPair, privateKeyFromSeed } from "../identity/signature";
import { MANDATE_JWS_ALG, MANDATE_JWS_TYPE, type MandatePayload } from "../mandates/principal";
import { parseMandate } from "../mandates/schema";

export interface PrincipalKeyPair {
  /** Ed25519 public key, base64url: register it as the agent's principal_key. */
  principal_key: string;
  /** Ed25519 private seed, base64url. Never leaves the principal. */
  principal_secret: string;
}

export function createPrincipal(): PrincipalKeyPair {
  const { signingKey, signingSecret } = newSigningKeyPair();
  return { principal_key: signingKey, principal_secret: signingSecret };
}

export interface SignMandateRequest {
  principalSecret: string;
  /** The public id of the platform's API key the agent is registered under (`zka_<id>` without the prefix). */
  keyId: string;
  agentId: string;
  identityCommitment: string;
  /** The mandate object; checked against the same schema the service uses. */
  mandate: unknown;
  /** Issued-at, Unix seconds; default now. A later mandate must carry a later iat. */
  iat?: number;
}

/** The compact JWS to register as `{"mandate_jws": …}`. */
export async function signMandate(request: SignMandateRequest): Promise<string> {
  const mandate = parseMandate(request.mandate);
  if (!mandate.ok) throw new RangeError(`mandate ${mandate.error}`);
  const iat = request.iat ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(iat) || iat < 0) throw new RangeError("iat must be a non-negative integer (Unix seconds)");
  const payload: MandatePayload = {
    key_id: request.keyId,
    agent_id: request.agentId,
    identity_commitment: request.identityCommitment,
    mandate: mandate.value,
    iat,
  };
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: MANDATE_JWS_ALG, typ: MANDATE_JWS_TYPE })
    .sign(privateKeyFromSeed(request.principalSecret));
}
