// Signing a request the Web Bot Auth way (the working group's draft -01),
// with Cloudflare's reference implementation (the `web-bot-auth` package)
// itself, so that what an agent sends is exactly what verifiers written
// against it expect:
//
//   Signature-Agent: sig1="https://operator.example"
//   Content-Digest: sha-256=:<digest of the body>:          (only with a body)
//   Signature-Input: sig1=("@authority" "signature-agent";key="sig1" ["content-digest"]);
//                    created=…;keyid="<thumbprint>";alg="ed25519";expires=…;
//                    nonce="<64 random bytes, base64>";tag="web-bot-auth"
//   Signature: sig1=:<Ed25519 signature, base64>:
//
// Every attempt of a request is signed afresh (a new nonce, a new window):
// a verifier accepts a nonce once. A request with a body covers its
// Content-Digest, so the signature also says what was sent.
import { signatureHeaders } from "web-bot-auth";
import { Ed25519Signer } from "web-bot-auth/crypto";
import { originOf } from "../http-auth/statement";
import { CONTENT_DIGEST, contentDigestField } from "./digest";
import { privateJwk } from "./keys";
import { SIGNATURE_AGENT, signatureAgentField } from "./signature-agent";

/** How long a signature the agent makes is valid: long enough for a slow network, short enough that a captured one is soon useless. */
export const SIGNATURE_TTL_SECONDS = 60;
/** The label of the agent's signature, and so of its Signature-Agent member. */
export const SIGNATURE_LABEL = "sig1";

type Component = NonNullable<Parameters<typeof signatureHeaders>[2]["components"]>[number];

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
  const signer = await Ed25519Signer.fromJWK(privateJwk(identity.signing_key, identity.signing_secret));
  return {
    keyid: signer.keyid,
    signatureAgent: origin,
    async sign(request, now = new Date()) {
      const headers = new Headers(request.headers);
      headers.delete("signature");
      headers.delete("signature-input");
      headers.delete(CONTENT_DIGEST);
      headers.set(SIGNATURE_AGENT, signatureAgentField(origin, SIGNATURE_LABEL));
      const components: Component[] = ["@authority", { name: SIGNATURE_AGENT, parameters: new Map([["key", SIGNATURE_LABEL]]) }];
      // The body's bytes, read from a copy (the request is sent as given).
      const body = request.body === null ? null : new Uint8Array(await request.clone().arrayBuffer());
      if (body !== null) {
        headers.set(CONTENT_DIGEST, contentDigestField(body));
        components.push(CONTENT_DIGEST);
      }
      const created = new Date(Math.floor(now.getTime() / 1000) * 1000);
      const signed = await signatureHeaders({ method: request.method, url: request.url, headers: Object.fromEntries(headers) }, signer, {
        created,
        expires: new Date(created.getTime() + ttlSeconds * 1000),
        components,
      });
      headers.set("signature-input", signed["Signature-Input"]);
      headers.set("signature", signed.Signature);
      return new Request(request, { headers });
    },
  };
}
