// Verifying a Web Bot Auth signature on a request (docs/http-auth.md,
// "Signature rules"), as the working group's draft -01 has it. Pure apart
// from the three things it is handed: where keys come from (a trusted
// operator's directory, or the zkagent service for a registered agent), the
// nonce store and the clock. In order, the first rule broken is the reason:
//
//   malformed_signature     Signature / Signature-Input missing one another, unparsable,
//                           lacking keyid, created or expires, a nonce that is no string of
//                           at most 256 characters, not covering @authority, a component
//                           covered twice, a covered field the request lacks
//   wrong_tag               no signature with tag "web-bot-auth"
//   nonce_required          the route requires a nonce (signatures.nonce "required", the
//                           default) and the signature has none: answered with
//                           Accept-Signature naming nonce
//   not_yet_valid           created later than now + clock skew
//   expired                 expires earlier than now - clock skew
//   window_too_long         expires - created longer than the maximum window
//   missing_signature_agent the signature does not cover signature-agent, no Signature-Agent
//                           field, or the covered value (member) names no http(s) URL
//   untrusted_agent         the Signature-Agent's directory URL is not one the merchant trusts
//                           (and, when registered agents are admitted, keyid is no agent's key)
//   directory_unavailable   the operator's directory cannot be fetched or is not signed
//   unknown_key             keyid is not the thumbprint of a key in that directory
//   agent_revoked           keyid is the key of a registered agent that was revoked
//   agent_lookup_unavailable the zkagent service could not say whose key keyid is
//   wrong_authority         the signature verifies for the request URL's authority, not
//                           for the guard's origin (a proxy rewrote Host, or the merchant's
//                           origin option is wrong)
//   bad_signature           the signature does not verify (changed, or made for another
//                           authority or another key)
//   content_digest_mismatch the signature covers Content-Digest and it is not the digest of
//                           the body that arrived (RFC 9530; sha-256, sha-512)
//   replayed_nonce          the nonce was accepted before, within its window
//   nonce_unavailable       the nonce store could not answer (the request is refused)
//
// Only a signature that verified reaches the nonce store (or has its body
// hashed), and only a trusted operator's directory is ever fetched: a request
// cannot make the verifier fetch a URL of its choosing, nor fill its memory.
import { isSignatureError, SignatureErrorCode, type SignatureMessage, verifySignature } from "http-message-sig";
import { originOf } from "../http-auth/statement";
import { CONTENT_DIGEST, contentDigestProblem } from "./digest";
import { DirectoryError } from "./directory";
import { ed25519Verifier, readSignatureInputs, type SignatureInput } from "./input";
import { type NonceStore, nonceKey } from "./nonces";
import { SIGNATURE_AGENT, signatureAgentUrl } from "./signature-agent";

export const WEB_BOT_AUTH_TAG = "web-bot-auth";
/** How far a signer's clock may be ahead of (created) or behind (expires) the verifier's, s. */
export const DEFAULT_CLOCK_SKEW = 60;
/** The longest validity window accepted (expires - created), s: it bounds how long a nonce must be remembered. */
export const DEFAULT_MAX_WINDOW = 3600;
/** The longest nonce accepted, characters (web-bot-auth's are 88). */
export const MAX_NONCE_LENGTH = 256;

export type SignatureReason =
  | "malformed_signature"
  | "wrong_tag"
  | "nonce_required"
  | "not_yet_valid"
  | "expired"
  | "window_too_long"
  | "missing_signature_agent"
  | "untrusted_agent"
  | "directory_unavailable"
  | "unknown_key"
  | "agent_revoked"
  | "agent_lookup_unavailable"
  | "wrong_authority"
  | "bad_signature"
  | "content_digest_mismatch"
  | "replayed_nonce"
  | "nonce_unavailable";

/** Whether a nonce is asked of every signature ("required") or checked only when one is given ("optional", draft -01's baseline: replay is then bounded by the window alone). */
export type NoncePolicy = "required" | "optional";

/** Who a verified signature names. */
export interface SignedAgent {
  scheme: "web-bot-auth";
  /** The operator's directory URL (what Signature-Agent resolves to) whose directory holds the key; for a registered agent, the URL it named, or null. */
  signature_agent: string | null;
  /** For a registered agent's signature: the agent whose signing key signed (the merchant's registration). */
  agent_id?: string;
  /** The key's RFC 7638 thumbprint. */
  keyid: string;
  /** created and expires of the signature, Unix seconds. */
  created: number;
  expires: number;
  /** Whether the signature carried a nonce (it was then accepted once). */
  nonce: boolean;
}

export type SignatureCheck = { ok: true; agent: SignedAgent } | { ok: false; reason: SignatureReason; message: string };

export interface SignatureVerifyOptions {
  /** The verifier's public origin: @authority must be its authority. */
  origin: string;
  /** The operators' directory URLs (directoryUrl of each trusted origin or URL) whose signed agents are admitted. */
  signatureAgents: readonly string[];
  /** The public key (base64url Ed25519 x) `keyid` names in the directory at `url`; null when absent; throws DirectoryError when it cannot be read. */
  key: (url: string, keyid: string) => Promise<string | null>;
  nonces: NonceStore;
  /** Default "required". */
  nonce?: NoncePolicy;
  /**
   * Registered agents' keys: the merchant's agent whose signing key has this
   * thumbprint (null when none); throws when it cannot be asked. Consulted
   * when the Signature-Agent is absent or not trusted. Absent: only trusted
   * operators' directories admit.
   */
  registered?: (keyid: string) => Promise<{ agent_id: string; signing_key: string; revoked: boolean } | null>;
  /** Unix seconds; default now. */
  now?: number;
  clockSkew?: number;
  maxWindow?: number;
}

/** Whether the request carries any HTTP message signature at all (then it is judged as one). */
export const hasSignature = (request: Request): boolean => request.headers.has("signature") || request.headers.has("signature-input");

const refuse = (reason: SignatureReason, message: string): SignatureCheck => ({ ok: false, reason, message });

function integer(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) ? value : null;
}

/** The Web Bot Auth signature's input, or why there is none. */
function webBotAuthInput(request: Request): SignatureInput | SignatureCheck {
  const signature = request.headers.get("signature");
  const field = request.headers.get("signature-input");
  if (signature === null || field === null) return refuse("malformed_signature", "a signature needs both Signature and Signature-Input");
  const inputs = readSignatureInputs(field);
  if (inputs === null) return refuse("malformed_signature", "Signature-Input is not a structured-field dictionary of inner lists (RFC 9421 §4.1)");
  const input = inputs.find((candidate) => candidate.params.get("tag") === WEB_BOT_AUTH_TAG);
  if (input === undefined) return refuse("wrong_tag", `no signature has tag "${WEB_BOT_AUTH_TAG}"`);
  return input;
}

/** Verifies the request's Web Bot Auth signature under the rules above. Never throws for anything the request holds. */
export async function verifyRequestSignature(request: Request, options: SignatureVerifyOptions): Promise<SignatureCheck> {
  const found = webBotAuthInput(request);
  if ("ok" in found) return found;
  const input = found;
  const keyid = input.params.get("keyid");
  const nonce = input.params.get("nonce");
  const created = integer(input.params.get("created"));
  const expires = integer(input.params.get("expires"));
  if (typeof keyid !== "string" || keyid === "") return refuse("malformed_signature", "keyid is required");
  if (created === null || expires === null) return refuse("malformed_signature", "created and expires are required (integers)");
  if (nonce !== undefined && (typeof nonce !== "string" || nonce === "" || nonce.length > MAX_NONCE_LENGTH))
    return refuse("malformed_signature", `nonce must be a string of 1 to ${MAX_NONCE_LENGTH} characters`);
  const authority = input.components.find((component) => component.name === "@authority" && component.params.size === 0);
  if (!authority) return refuse("malformed_signature", "the signature must cover @authority");
  if (nonce === undefined && (options.nonce ?? "required") === "required")
    return refuse("nonce_required", "this resource accepts a signature only with a nonce (a fresh one per request): sign again with one");
  const agentComponent = input.components.find((component) => component.name === SIGNATURE_AGENT);

  const now = options.now ?? Math.floor(Date.now() / 1000);
  const skew = options.clockSkew ?? DEFAULT_CLOCK_SKEW;
  const maxWindow = options.maxWindow ?? DEFAULT_MAX_WINDOW;
  if (created > now + skew) return refuse("not_yet_valid", `created (${created}) is in the future`);
  if (expires < now - skew) return refuse("expired", `the signature expired at ${expires}`);
  if (expires < created) return refuse("malformed_signature", "expires is before created");
  if (expires - created > maxWindow) return refuse("window_too_long", `expires - created is ${expires - created} s, more than ${maxWindow} s`);

  // Who vouches for the key: a trusted operator's directory, else (when admitted) the merchant's own registration.
  let operator: string | null = null;
  let problem: SignatureCheck | null = null;
  if (agentComponent) {
    const agentField = request.headers.get(SIGNATURE_AGENT);
    const key = agentComponent.params.get("key");
    if (key !== undefined && typeof key !== "string") return refuse("malformed_signature", "the signature-agent component's key is not a string");
    if (agentField === null) problem = refuse("missing_signature_agent", "the request has no Signature-Agent field");
    else {
      const named = signatureAgentUrl(agentField, input.label, key);
      if ("problem" in named) problem = refuse("missing_signature_agent", named.problem);
      else {
        operator = named.url;
        if (!options.signatureAgents.includes(operator)) problem = refuse("untrusted_agent", `${operator} is not a signature agent this server trusts`);
      }
    }
  } else {
    problem = refuse("missing_signature_agent", "the signature does not cover signature-agent");
  }

  let x: string | null;
  let agentId: string | undefined;
  if (problem === null) {
    try {
      x = await options.key(operator!, keyid);
    } catch (error) {
      return refuse("directory_unavailable", error instanceof DirectoryError ? error.message : `the directory at ${operator} cannot be read`);
    }
    if (x === null) return refuse("unknown_key", `keyid ${keyid} is not in the directory at ${operator}`);
  } else {
    if (!options.registered) return problem;
    let found: Awaited<ReturnType<NonNullable<SignatureVerifyOptions["registered"]>>>;
    try {
      found = await options.registered(keyid);
    } catch {
      return refuse("agent_lookup_unavailable", "the zkagent service cannot say whose key this is: try again");
    }
    // Neither a trusted operator's key nor one of the merchant's agents': the operator's problem stands.
    if (found === null) return problem;
    if (found.revoked) return refuse("agent_revoked", "the agent this key belongs to was revoked");
    x = found.signing_key;
    agentId = found.agent_id;
  }

  const target = new URL(request.url);
  // Only the fields the signature covers, and its own two: another header the library cannot take (non-ASCII, say) is none of its business.
  const covered = new Set(["signature", "signature-input", ...input.components.map((component) => component.name).filter((name) => !name.startsWith("@"))]);
  const fields = [...request.headers].filter(([name]) => covered.has(name)).map(([name, value]) => ({ name, value }));
  const verifyAt = async (origin: string): Promise<"valid" | "invalid" | string> => {
    const message: SignatureMessage = {
      kind: "request",
      method: request.method,
      targetUri: origin + target.pathname + target.search,
      fields,
    };
    try {
      await verifySignature(message, {
        label: input.label,
        policy: {
          algorithms: ["ed25519"],
          requiredComponents: ["@authority"],
          requiredParameters: ["created", "expires", "keyid", "tag"],
          clockSkew: skew,
          now,
        },
        resolveVerifier: () => ed25519Verifier(x),
      });
      return "valid";
    } catch (error) {
      if (isSignatureError(error) && error.code === SignatureErrorCode.VerificationFailed) return "invalid";
      return isSignatureError(error) ? error.message : "the signature cannot be checked";
    }
  };
  const own = originOf(options.origin);
  if (own === null) throw new TypeError(`not an http(s) origin: ${options.origin}`);
  const checked = await verifyAt(own);
  if (checked !== "valid") {
    if (checked !== "invalid") return refuse("malformed_signature", checked);
    if (target.origin !== own && (await verifyAt(target.origin)) === "valid")
      return refuse("wrong_authority", `the signature is for ${target.host}, this server's origin is ${own}`);
    return refuse("bad_signature", `the signature does not verify for @authority ${new URL(own).host} with key ${keyid}`);
  }

  // The signature covers Content-Digest: then it covers the body, and the body that arrived must be the one digested.
  if (input.components.some((component) => component.name === CONTENT_DIGEST)) {
    const field = request.headers.get(CONTENT_DIGEST);
    if (field === null) return refuse("malformed_signature", "the signature covers Content-Digest, which the request lacks");
    let body: Uint8Array;
    try {
      body = new Uint8Array(await request.clone().arrayBuffer());
    } catch {
      return refuse("malformed_signature", "the body cannot be read to check Content-Digest");
    }
    const digest = contentDigestProblem(field, body);
    if (digest) return refuse(digest.malformed ? "malformed_signature" : "content_digest_mismatch", digest.message);
  }

  if (typeof nonce === "string") {
    // Kept per party (the operator's directory, or the registered agent's key), so one party's nonces never crowd out another's.
    const party = operator !== null && agentId === undefined ? operator : `agent:${keyid}`;
    try {
      if (!(await options.nonces.claim(nonceKey(party, keyid, nonce), expires + skew))) return refuse("replayed_nonce", "this nonce was accepted before");
    } catch {
      return refuse("nonce_unavailable", "the nonce store cannot answer: try again");
    }
  }
  const agent: SignedAgent = { scheme: "web-bot-auth", signature_agent: operator, keyid, created, expires, nonce: typeof nonce === "string" };
  if (agentId !== undefined) agent.agent_id = agentId;
  return { ok: true, agent };
}
