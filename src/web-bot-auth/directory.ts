// Key directories (the HTTP Message Signatures Directory draft): an
// operator publishes its agents' public keys at
// /.well-known/http-message-signatures-directory of its origin, a JWKS
// served as application/http-message-signatures-directory+json and signed
// by each of its keys (tag http-message-signatures-directory, covering the
// request's @authority), which proves the operator holds every key it lists.
//
// Operator side: keyDirectory (the document) and directoryResponse (the
// signed answer, made with the reference implementation). Verifier side:
// readDirectory (pure: parse, check the signatures, keep the keys that
// signed); the fetching and caching are the guard's
// (src/merchant/modes/web-bot-auth/directories.ts).
import { type SignatureMessage, verifySignature } from "http-message-sig";
import { directoryResponseHeaders, HTTP_MESSAGE_SIGNATURES_DIRECTORY, MediaType } from "web-bot-auth";
import { Ed25519Signer } from "web-bot-auth/crypto";
import { originOf } from "../http-auth/statement";
import { type Ed25519Jwk, ed25519KeyId, privateJwk, publicJwk } from "./keys";
import { ed25519Verifier, readSignatureInputs } from "./input";

export const DIRECTORY_PATH: string = HTTP_MESSAGE_SIGNATURES_DIRECTORY;
export const DIRECTORY_TYPE: string = MediaType.HTTP_MESSAGE_SIGNATURES_DIRECTORY;
export const DIRECTORY_TAG = "http-message-signatures-directory";

/** A key directory (a JWKS). */
export interface KeyDirectory {
  keys: Ed25519Jwk[];
}

/** The directory of identities' public keys (their `signing_key`s; secrets are never read). Throws when one has no usable signing_key. */
export function keyDirectory(identities: { signing_key?: string }[]): KeyDirectory {
  const keys: Ed25519Jwk[] = [];
  for (const identity of identities) {
    if (!identity.signing_key) throw new TypeError("an identity has no signing_key");
    const jwk = publicJwk(identity.signing_key);
    if (!keys.some((key) => key.x === jwk.x)) keys.push(jwk);
  }
  return { keys };
}

/**
 * The signed answer for GET /.well-known/http-message-signatures-directory at
 * `origin`, to serve as is: the JWKS of the identities' public keys, its
 * media type, Cache-Control max-age `maxAge` seconds, and a signature by
 * every key (so a verifier knows the operator holds each), valid `maxAge`
 * seconds. The identities need their signing_secret; none leaves the process.
 */
export async function directoryResponse(
  identities: { signing_key?: string; signing_secret?: string }[],
  options: { origin: string; maxAge?: number; now?: Date },
): Promise<Response> {
  const origin = originOf(options.origin);
  if (origin === null) throw new TypeError(`not an http(s) origin: ${options.origin}`);
  const maxAge = Math.max(60, Math.floor(options.maxAge ?? 3600));
  const directory = keyDirectory(identities);
  const signers: Ed25519Signer[] = [];
  for (const identity of identities) {
    if (!identity.signing_secret) throw new TypeError("directoryResponse needs each identity's signing_secret (to sign the directory)");
    const signer = await Ed25519Signer.fromJWK(privateJwk(identity.signing_key!, identity.signing_secret));
    if (!signers.some((known) => known.keyid === signer.keyid)) signers.push(signer);
  }
  const headers = new Headers({ "content-type": DIRECTORY_TYPE, "cache-control": `max-age=${maxAge}` });
  const created = new Date(Math.floor((options.now ?? new Date()).getTime() / 1000) * 1000);
  const signature = await directoryResponseHeaders(
    { request: { method: "GET", url: origin + DIRECTORY_PATH, headers: {} }, response: { status: 200, headers: {} } },
    signers,
    { created, expires: new Date(created.getTime() + maxAge * 1000) },
  );
  headers.set("signature", signature.Signature);
  headers.set("signature-input", signature["Signature-Input"]);
  return new Response(JSON.stringify(directory), { status: 200, headers });
}

/** A directory that cannot be used: why, for the refusal's message. */
export class DirectoryError extends Error {}

/** Public Ed25519 keys (base64url x) by key id. */
export type DirectoryKeys = Map<string, string>;

/**
 * The keys of a directory answer for `url`, each one only when it signed the
 * answer (tag http-message-signatures-directory, over @authority of `url`,
 * not expired, created no later than `now` + `clockSkew`). A key the
 * operator lists but did not sign with is dropped: listing someone else's
 * key proves nothing. Throws DirectoryError when the body is no JWKS or no key signed.
 */
export async function readDirectory(
  answer: { status: number; headers: Headers; body: Uint8Array },
  url: string,
  options: { now?: number; clockSkew?: number } = {},
): Promise<DirectoryKeys> {
  let document: unknown;
  try {
    document = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(answer.body));
  } catch {
    throw new DirectoryError("the directory is not JSON");
  }
  const listed = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(listed)) throw new DirectoryError("the directory has no keys array (a JWKS)");
  const candidates: DirectoryKeys = new Map();
  for (const jwk of listed.slice(0, 100)) {
    const key = await ed25519KeyId(jwk);
    if (key) candidates.set(key.keyid, key.x);
  }
  const field = answer.headers.get("signature-input");
  const inputs = field === null ? [] : (readSignatureInputs(field) ?? []);
  const message: SignatureMessage = {
    kind: "response",
    status: answer.status,
    // The signature covers "@authority";req only: of the answer's fields, just the signature's own two are read.
    fields: [...answer.headers].filter(([name]) => name === "signature" || name === "signature-input").map(([name, value]) => ({ name, value })),
    request: { kind: "request", method: "GET", targetUri: url, fields: [] },
  };
  const signed: DirectoryKeys = new Map();
  for (const input of inputs) {
    const keyid = input.params.get("keyid");
    if (input.params.get("tag") !== DIRECTORY_TAG || typeof keyid !== "string") continue;
    const x = candidates.get(keyid);
    if (x === undefined || signed.has(keyid)) continue;
    try {
      await verifySignature(message, {
        label: input.label,
        policy: {
          algorithms: ["ed25519"],
          requiredComponents: [{ name: "@authority", parameters: { req: true } }],
          requiredParameters: ["created", "expires", "keyid", "tag"],
          clockSkew: options.clockSkew ?? 60,
          now: options.now,
        },
        resolveVerifier: () => ed25519Verifier(x),
      });
      signed.set(keyid, x);
    } catch {
      // This label does not verify: its key is not proved; the others may be.
    }
  }
  if (signed.size === 0) throw new DirectoryError(`no key of the directory at ${url} signed it (${candidates.size} Ed25519 keys listed)`);
  return signed;
}
