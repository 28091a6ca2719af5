// Receipt signing keys: Ed25519 pairs from node:crypto, identified by the
// RFC 7638 thumbprint of the public JWK, and the private key's form at rest.
//
// At rest the private key is PKCS#8 DER, base64url, in one of two forms:
//   plain:<pkcs8>                     no secret configured; protected by the
//                                     database's own access control only
//   aes256gcm:<iv>.<ciphertext‖tag>   sealed with AES-256-GCM under a key
//                                     derived by HKDF-SHA256 from
//                                     RECEIPT_KEY_SECRET (salt: the kid), the
//                                     kid as additional data, so a sealed key
//                                     cannot be moved to another row
// A key sealed under a secret can only be used by a process that has it.
import { createCipheriv, createDecipheriv, createPrivateKey, createPublicKey, generateKeyPairSync, hkdfSync, randomBytes, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, type JWK } from "jose";
import type { SigningKeyRecord } from "../store/signing-keys/records";

const PLAIN = "plain:";
const SEALED = "aes256gcm:";
const HKDF_INFO = "zkagent receipt signing key v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SigningKeyError extends Error {}

/** The public half as a JWK with exactly the RFC 8037 members. */
export function publicJwkOf(key: KeyObject): JWK {
  const { kty, crv, x } = createPublicKey(key).export({ format: "jwk" });
  return { kty, crv, x };
}

/** The RFC 7638 thumbprint (SHA-256, base64url) of an Ed25519 public JWK. */
export const keyId = (jwk: JWK): Promise<string> => calculateJwkThumbprint({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }, "sha256");

/** A new active signing key, its private half sealed when a secret is given. */
export async function newSigningKey(now: number, secret?: string): Promise<SigningKeyRecord> {
  const { privateKey } = generateKeyPairSync("ed25519");
  const jwk = publicJwkOf(privateKey);
  const kid = await keyId(jwk);
  return { kid, publicJwk: JSON.stringify(jwk), privateKey: sealPrivateKey(privateKey, kid, secret), state: "active", createdAt: now, retiredAt: null };
}

function wrappingKey(secret: string, kid: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, kid, HKDF_INFO, 32));
}

export function sealPrivateKey(privateKey: KeyObject, kid: string, secret?: string): string {
  const der = privateKey.export({ format: "der", type: "pkcs8" });
  if (!secret) return PLAIN + der.toString("base64url");
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", wrappingKey(secret, kid), iv);
  cipher.setAAD(Buffer.from(kid, "utf8"));
  const sealed = Buffer.concat([cipher.update(der), cipher.final(), cipher.getAuthTag()]);
  return `${SEALED}${iv.toString("base64url")}.${sealed.toString("base64url")}`;
}

/**
 * The usable private key of a stored record. Throws SigningKeyError (naming
 * the kid, never the key) when it is sealed and no or the wrong secret is
 * given, or when it does not match the record's public key.
 */
export function openPrivateKey(record: SigningKeyRecord, secret?: string): KeyObject {
  let der: Buffer;
  if (record.privateKey.startsWith(PLAIN)) {
    der = Buffer.from(record.privateKey.slice(PLAIN.length), "base64url");
  } else if (record.privateKey.startsWith(SEALED)) {
    if (!secret) throw new SigningKeyError(`signing key ${record.kid} is sealed: set RECEIPT_KEY_SECRET`);
    const [ivText, sealedText] = record.privateKey.slice(SEALED.length).split(".");
    const iv = Buffer.from(ivText ?? "", "base64url");
    const sealed = Buffer.from(sealedText ?? "", "base64url");
    try {
      const decipher = createDecipheriv("aes-256-gcm", wrappingKey(secret, record.kid), iv);
      decipher.setAAD(Buffer.from(record.kid, "utf8"));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      der = Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new SigningKeyError(`signing key ${record.kid} cannot be unsealed: wrong RECEIPT_KEY_SECRET`);
    }
  } else {
    throw new SigningKeyError(`signing key ${record.kid} has an unknown storage form`);
  }
  const privateKey = createPrivateKey({ key: der, format: "der", type: "pkcs8" });
  const stored = JSON.parse(record.publicJwk) as JWK;
  if (privateKey.asymmetricKeyType !== "ed25519" || publicJwkOf(privateKey).x !== stored.x) {
    throw new SigningKeyError(`signing key ${record.kid} does not match its public key`);
  }
  return privateKey;
}
