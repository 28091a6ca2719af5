// What the AP2 mandate tests need to make SD-JWTs independently of the code
// under test: @sd-jwt's hasher, salts and signers, backed by node:crypto and jose.
import { createHash } from "node:crypto";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";

export const hasher = (data: string | ArrayBuffer) =>
  new Uint8Array(
    createHash("sha256")
      .update(typeof data === "string" ? data : new Uint8Array(data))
      .digest(),
  );

export const saltGenerator = () => Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("hex");

export type Keys = { privateKey: CryptoKey; publicJwk: JWK };

export const keyPair = async (): Promise<Keys> => {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  return { privateKey, publicJwk: await exportJWK(publicKey) };
};

/** A jose-backed signer for @sd-jwt: data is "header.payload", the answer the base64url signature. */
export const signerOf = (key: CryptoKey) => async (data: string) => {
  const [h, p] = data.split(".");
  const jws = await new SignJWT(JSON.parse(Buffer.from(p!, "base64url").toString()))
    .setProtectedHeader(JSON.parse(Buffer.from(h!, "base64url").toString()))
    .sign(key);
  // SignJWT re-encodes header and payload: when its bytes differ, sign the exact bytes with WebCrypto.
  if (jws.startsWith(`${data}.`)) return jws.slice(data.length + 1);
  const raw = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key, new TextEncoder().encode(data));
  return Buffer.from(raw).toString("base64url");
};
