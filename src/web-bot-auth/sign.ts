// Signing a request the Web Bot Auth way (the working group's draft -01):
//
//   Signature-Agent: sig1="https://operator.example"
//   Content-Digest: sha-256=:<digest of the body>:          (only with a body)
//   Signature-Input: sig1=("@authority" "signature-agent";key="sig1" ["content-digest"]);
//                    created=…;keyid="<thumbprint>";alg="ed25519";expires=…;
//                    nonce="<64 random bytes, base64>";tag="web-bot-auth"
//   Signature: sig1=:<Ed25519 signature, base64>:
//
// The signature is made by http-message-sig 0.3 (Cloudflare's RFC 9421
// library), which resolves the `key` parameter to the dictionary member as
// RFC 9421 §2.1.2 says. The web-bot-auth package 0.1 signs with its older
// http-message-sig 0.2, which puts the whole field in the base even when the
// component names a member, so it cannot make (or verify) this form; its
// nonce generator and key id are still the ones used here.
//
// Every attempt of a request is signed afresh (a new nonce, a new window):
// a verifier accepts a nonce once. A request with a body covers its
// Content-Digest, so the signature also says what was sent.
import { component, createSignature, webcrypto } from "http-message-sig";
import { generateNonce } from "web-bot-auth";
import { Ed25519Signer } from "web-bot-auth/crypto";
import { originOf } from "../http-auth/statement";
import { CONTENT_DIGEST, contentDigestField } from "./digest";
import { privateJwk } from "./keys";
import { SIGNATURE_AGENT, signatureAgentField } from "./signature-agent";

/** How long a signature the agent makes is valid: long enough for a slow network, short enough that a captured one is soon useless. */
export const SIGNATURE_TTL_SECONDS = 60;
/** The label of the agent's signature, and so of its Signature-Agent member. */
export const SIGNATURE_LABEL = "sig1";

export interface RequestSigner {
  /** The key id the signatures name (the key's RFC 7638 thumbprint). */
  keyid: string;
  /** The origin the Signature-Agent field names. */
  signatureAgent: string;
  /** A copy of `request` with Signature-Agent, Signature-Input and Signature set (any earlier ones replaced), and Content-Digest when it has a body. */
  sign(request: Request, now?: Date): Promise<Request>;
}

/**
 * A signer for the identity's Ed25519 key pair, naming `signatureAgent` (the
 * operator's origin, whose /.well-known/http-message-signatures-directory
 * lists this key). Throws a TypeError when the origin is not http(s) or the
 * keys are not an Ed25519 pair.
 */
export async function requestSigner(
  identity: { signing_key?: string; signing_secret?: string },
  signatureAgent: string,
  ttlSeconds = SIGNATURE_TTL_SECONDS,
): Promise<RequestSigner> {
  const origin = originOf(signatureAgent);
  if (origin === null) throw new TypeError(`the signature agent must be an http(s) origin, not ${signatureAgent}`);
  if (!identity.signing_key || !identity.signing_secret) throw new TypeError("signing needs the identity's signing_key and signing_secret");
  const jwk = privateJwk(identity.signing_key, identity.signing_secret);
  // The reference's key id (RFC 7638 thumbprint) and a WebCrypto key for the signature library.
  const { keyid } = await Ed25519Signer.fromJWK(jwk);
  const key = await crypto.subtle.importKey("jwk", jwk, { name: "Ed25519" }, false, ["sign"]);
  const signer = webcrypto.signer(key);
  return {
    keyid,
    signatureAgent: origin,
    async sign(request, now = new Date()) {
      const headers = new Headers(request.headers);
      headers.delete("signature");
      headers.delete("signature-input");
      headers.delete(CONTENT_DIGEST);
      headers.set(SIGNATURE_AGENT, signatureAgentField(origin, SIGNATURE_LABEL));
      const components = ["@authority", component(SIGNATURE_AGENT, { key: SIGNATURE_LABEL })];
      // The body's bytes, read from a copy (the request is sent as given).
      const body = request.body === null ? null : new Uint8Array(await request.clone().arrayBuffer());
      if (body !== null) {
        headers.set(CONTENT_DIGEST, contentDigestField(body));
        components.push(CONTENT_DIGEST);
      }
      const created = Math.floor(now.getTime() / 1000);
      const made = await createSignature(
        { kind: "request", method: request.method, targetUri: request.url, fields: [...headers].map(([name, value]) => ({ name, value })) },
        {
          label: SIGNATURE_LABEL,
          components,
          parameters: { created, keyid, alg: "ed25519", expires: created + ttlSeconds, nonce: generateNonce(), tag: "web-bot-auth" },
          signer,
        },
      );
      headers.set("signature-input", made.signatureInput);
      headers.set("signature", made.signature);
      return new Request(request, { headers });
    },
  };
}
