// agent_signature: an Ed25519 signature (RFC 8032) by the agent's registered
// signing key over a canonical message, sent base64url without padding.
//
// The message is the RFC 8785 canonical JSON of
//   {"action", "challenge_id", "context_hash", "nonce", "v": "zkagent/v1/signature"}
// with context_hash as a decimal string (the circuit's public input). JSON
// rather than a delimited string so that no action text can forge a field
// boundary.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";
import canonicalize from "canonicalize";
import { contextHash, type JsonObject } from "./encoding";

export interface SignedFields {
  challengeId: string;
  nonce: string;
  action: string;
  context?: JsonObject;
  /** context_hash when the caller already has it; otherwise computed from `context`. */
  contextHash?: bigint;
}

export function signatureMessage(fields: SignedFields): Buffer {
  const message = {
    v: "zkagent/v1/signature",
    challenge_id: fields.challengeId,
    nonce: fields.nonce,
    action: fields.action,
    context_hash: (fields.contextHash ?? contextHash(fields.context)).toString(),
  };
  return Buffer.from(canonicalize(message) as string, "utf8");
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function decodeBase64url(text: string, length: number): Buffer | null {
  if (typeof text !== "string" || !BASE64URL.test(text)) return null;
  const bytes = Buffer.from(text, "base64url");
  return bytes.length === length && bytes.toString("base64url") === text ? bytes : null;
}

/** The Ed25519 public key of 32 bytes in base64url, or null when it is not one. */
export function publicKeyObject(signingKey: string): KeyObject | null {
  const raw = decodeBase64url(signingKey, 32);
  if (!raw) return null;
  try {
    return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") }, format: "jwk" });
  } catch {
    return null; // not a point on Ed25519
  }
}

/** True when the text is a usable Ed25519 public key (32 bytes, base64url). */
export const isSigningKey = (signingKey: string): boolean => publicKeyObject(signingKey) !== null;

export function newSigningKeyPair(): { signingKey: string; signingSecret: string } {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  return {
    signingKey: publicKey.export({ format: "jwk" }).x as string,
    signingSecret: privateKey.export({ format: "jwk" }).d as string,
  };
}

/** The Ed25519 private key of a 32-byte seed in base64url (the `signing_secret` form). */
export function privateKeyFromSeed(secret: string): KeyObject {
  const seed = decodeBase64url(secret, 32);
  if (!seed) throw new Error("signing secret must be 32 bytes, base64url");
  return createPrivateKey({ key: derPrivateKey(seed), format: "der", type: "pkcs8" });
}

export function signChallenge(signingSecret: string, fields: SignedFields): string {
  return sign(null, signatureMessage(fields), privateKeyFromSeed(signingSecret)).toString("base64url");
}

export type SignatureCheck = "valid" | "invalid_signature";

/** Checks a base64url Ed25519 signature; anything malformed is simply invalid. */
export function verifySignature(signingKey: string, signature: string, fields: SignedFields): SignatureCheck {
  const key = publicKeyObject(signingKey);
  const bytes = decodeBase64url(signature, 64);
  if (!key || !bytes) return "invalid_signature";
  return verify(null, signatureMessage(fields), key, bytes) ? "valid" : "invalid_signature";
}

// PKCS#8 wrapper of a raw Ed25519 seed (RFC 8410 §7): a fixed 16-byte prefix.
const PKCS8_ED25519_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const derPrivateKey = (seed: Buffer): Buffer => Buffer.concat([PKCS8_ED25519_PREFIX, seed]);
