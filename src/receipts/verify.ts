// Checking a receipt without zkagent's API: the compact JWS, a JWKS (fetched
// once from /.well-known/jwks.json, or kept in a file), nothing else. This
// module depends only on `jose`, so a merchant or a payment processor can
// import it alone:
//
//   import { verifyReceipt } from "zkagent/src/receipts/verify";
//   const result = await verifyReceipt(receipt, jwks);
//   if (result.valid && result.claims.status === "verified") …
//
// It answers whether zkagent signed these claims with a key of the set; what
// the claims mean, and whether they fit the order at hand (agent, action,
// context, time), is for the caller to compare (docs/receipts.md).
import { compactVerify, decodeProtectedHeader, importJWK, type JWK } from "jose";
import { RECEIPT_ALG, RECEIPT_TYPE, type ReceiptClaims } from "./claims";

export type ReceiptFailure =
  /** Not a compact JWS, or its header or payload is not JSON. */
  | "malformed"
  /** The header is not {"alg":"EdDSA","typ":"zkagent-receipt+jwt",kid}. */
  | "wrong_header"
  /** No Ed25519 key with the receipt's kid in the set (never published, or retired). */
  | "unknown_key"
  /** The signature does not verify under that key: something was changed. */
  | "bad_signature";

export type ReceiptVerification = { valid: true; kid: string; claims: ReceiptClaims } | { valid: false; reason: ReceiptFailure; kid?: string };

export interface JsonWebKeySet {
  keys: JWK[];
}

/**
 * The key set itself is not a JWKS: not an object with a "keys" array of JSON
 * objects whose kid, kty, crv and x (when present) are strings. An input
 * error of the caller's, not a verdict on the receipt: verifyReceipt throws
 * it rather than answer "invalid" (or fail inside with a TypeError).
 */
export class InvalidKeySetError extends Error {
  override readonly name = "InvalidKeySetError";
  constructor(why: string) {
    super(`not a JWKS: ${why}`);
  }
}

const KEY_MEMBERS = ["kid", "kty", "crv", "x"] as const;

/** `value` as a JWKS, or InvalidKeySetError saying what is wrong with it. */
export function parseKeySet(value: unknown): JsonWebKeySet {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InvalidKeySetError("must be a JSON object");
  const keys = (value as { keys?: unknown }).keys;
  if (!Array.isArray(keys)) throw new InvalidKeySetError('no "keys" array');
  keys.forEach((key, index) => {
    if (typeof key !== "object" || key === null || Array.isArray(key)) throw new InvalidKeySetError(`keys[${index}] must be a JSON object`);
    for (const member of KEY_MEMBERS) {
      const found = (key as Record<string, unknown>)[member];
      if (found !== undefined && typeof found !== "string") throw new InvalidKeySetError(`keys[${index}].${member} must be a string`);
    }
  });
  return value as JsonWebKeySet;
}

/** Throws InvalidKeySetError when `jwks` is not a key set (see parseKeySet); a bad receipt is a result, never a throw. */
export async function verifyReceipt(receipt: string, jwks: JsonWebKeySet): Promise<ReceiptVerification> {
  const keys = parseKeySet(jwks).keys;
  const token = typeof receipt === "string" ? receipt.trim() : "";
  if (token.split(".").length !== 3) return { valid: false, reason: "malformed" };
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return { valid: false, reason: "malformed" };
  }
  const kid = typeof header.kid === "string" ? header.kid : undefined;
  if (header.alg !== RECEIPT_ALG || header.typ !== RECEIPT_TYPE || !kid) return { valid: false, reason: "wrong_header", ...(kid ? { kid } : {}) };

  const jwk = keys.find((k) => k.kid === kid && k.kty === "OKP" && k.crv === "Ed25519");
  if (!jwk) return { valid: false, reason: "unknown_key", kid };
  let payload: Uint8Array;
  try {
    const key = await importJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }, RECEIPT_ALG);
    ({ payload } = await compactVerify(token, key, { algorithms: [RECEIPT_ALG] }));
  } catch {
    return { valid: false, reason: "bad_signature", kid };
  }
  try {
    const claims = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payload)) as ReceiptClaims;
    if (typeof claims !== "object" || claims === null || Array.isArray(claims)) return { valid: false, reason: "malformed", kid };
    return { valid: true, kid, claims };
  } catch {
    return { valid: false, reason: "malformed", kid };
  }
}
