// The keys of Web Bot Auth (docs/http-auth.md, "Signed agents"): every
// zkagent identity's Ed25519 key pair (`signing_key`, `signing_secret`,
// src/identity/signature.ts) as the JSON Web Keys a key directory publishes,
// and the key id a signature names: the key's JWK thumbprint (RFC 7638,
// SHA-256, base64url).
import { calculateJwkThumbprint } from "jose";
import { publicKeyObject } from "../identity/signature";

/** An Ed25519 public key as a key directory lists it (RFC 8037): the members the thumbprint covers, nothing else. */
export interface Ed25519Jwk {
  kty: "OKP";
  crv: "Ed25519";
  x: string;
}

/** The public JWK of a `signing_key` (32 bytes, base64url); throws on anything that is not an Ed25519 point. */
export function publicJwk(signingKey: string): Ed25519Jwk {
  if (publicKeyObject(signingKey) === null) throw new TypeError("signing_key is not an Ed25519 public key (32 bytes, base64url)");
  return { kty: "OKP", crv: "Ed25519", x: signingKey };
}

/** An Ed25519 private key as a JWK (RFC 8037): the public members and `d`. */
export interface Ed25519PrivateJwk extends Ed25519Jwk {
  d: string;
}

/** The private JWK of a key pair, for the signer (WebCrypto imports it). Never leaves the process. */
export function privateJwk(signingKey: string, signingSecret: string): Ed25519PrivateJwk {
  return { ...publicJwk(signingKey), d: signingSecret };
}

/**
 * The key id of an Ed25519 public key: its RFC 7638 thumbprint (SHA-256,
 * base64url), as `keyid` names it. Defined for any `x` text (the service
 * fills it for rows it stored before it checked keys); a key that is no
 * Ed25519 point is refused where keys are used, not here.
 */
export const keyIdOf = (signingKey: string): Promise<string> => calculateJwkThumbprint({ kty: "OKP", crv: "Ed25519", x: signingKey }, "sha256");

/** The JWK's thumbprint when it is an Ed25519 public key, else null (other key types are not used here). */
export async function ed25519KeyId(jwk: unknown): Promise<{ keyid: string; x: string } | null> {
  if (typeof jwk !== "object" || jwk === null) return null;
  const { kty, crv, x } = jwk as Record<string, unknown>;
  if (kty !== "OKP" || crv !== "Ed25519" || typeof x !== "string" || publicKeyObject(x) === null) return null;
  return { keyid: await keyIdOf(x), x };
}
