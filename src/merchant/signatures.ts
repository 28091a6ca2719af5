// The guard's Web Bot Auth mode (docs/http-auth.md, "Signed agents"): a
// request signed by an agent of an operator the merchant trusts is admitted
// as that operator's agent, without a challenge or a call to the zkagent
// service. The rules are src/web-bot-auth/verify.ts's; this file holds what
// the guard keeps between requests: the operators' directories and the
// nonces already accepted.
import { type BoundRequest, originOf } from "../http-auth/statement";
import { DirectoryCache } from "./directories";
import { MemoryNonceStore, type NonceStore } from "../web-bot-auth/nonces";
import { type SignatureReason, verifyRequestSignature } from "../web-bot-auth/verify";

export interface SignatureOptions {
  /** The operators (origins, e.g. https://agents.operator.example) whose signed agents are admitted; their directories are fetched from there. */
  signatureAgents: string[];
  /** Read directories over http:// from a loopback host (a local operator, tests); https only otherwise. */
  allowInsecureLoopback?: boolean;
  /**
   * Where accepted nonces are remembered. Default: one MemoryNonceStore per
   * process, shared by every guard in it (a signature covers the authority,
   * not the route, so one nonce must not pass on two routes). Several
   * processes: give them one shared store (src/web-bot-auth/nonces.ts).
   */
  nonces?: NonceStore;
  /** The directories' cache. Default: one per process (per allowInsecureLoopback), shared by every guard in it. */
  directories?: DirectoryCache;
  /**
   * Also admit signatures by the merchant's own registered agents, without a
   * directory: a signature whose Signature-Agent is absent or untrusted is
   * looked up at the zkagent service by its keyid (GET
   * /v1/signing-keys/{keyid}, the merchant's API key: only its agents),
   * verified with that agent's signing_key, refused when the agent is
   * revoked. One call to the service per such request. Default false.
   */
  registeredAgents?: boolean;
  /** How far a signer's clock may be off, s. Default 60. */
  clockSkew?: number;
  /** The longest validity window (expires - created) accepted, s. Default 3 600. */
  maxWindow?: number;
}

/** What the handler receives for a request admitted by its signature. */
export interface SignatureSession {
  scheme: "web-bot-auth";
  /** The operator's origin whose directory holds the key; for a registered agent, the origin it named, or null. */
  signature_agent: string | null;
  /** The key's RFC 7638 thumbprint: which of the operator's agents (keys) signed. */
  keyid: string;
  /** For a registered agent (option registeredAgents): the merchant's agent whose signing key signed. */
  agent_id?: string;
  /** The method, origin and target of the request (not covered by the signature: a signature says who, not what). */
  request: BoundRequest;
}

let sharedNonces: NonceStore | undefined;
const sharedDirectories = new Map<boolean, DirectoryCache>();

export type SignatureOutcome = { ok: true; session: SignatureSession } | { ok: false; reason: SignatureReason; message: string };

/** The mode's check for one guard's options. */
/** A registered agent's key, as the zkagent service answers for the merchant's API key (null: none of its agents). */
export type RegisteredKeyLookup = (keyid: string) => Promise<{ agent_id: string; signing_key: string; revoked: boolean } | null>;

export function signatureMode(
  options: SignatureOptions,
  registered?: RegisteredKeyLookup,
): (request: Request, bound: BoundRequest) => Promise<SignatureOutcome> {
  if (!Array.isArray(options.signatureAgents)) throw new TypeError("signatures.signatureAgents must list the trusted operators' origins");
  const trusted = options.signatureAgents.map((origin) => {
    const own = originOf(origin);
    if (own === null || new URL(origin).pathname.length > 1) throw new TypeError(`signatures.signatureAgents: not an http(s) origin: ${origin}`);
    return own;
  });
  const insecure = options.allowInsecureLoopback === true;
  const nonces = options.nonces ?? (sharedNonces ??= new MemoryNonceStore());
  let directories = options.directories ?? sharedDirectories.get(insecure);
  if (!directories) {
    directories = new DirectoryCache({ allowInsecureLoopback: insecure });
    sharedDirectories.set(insecure, directories);
  }
  const cache = directories;
  return async (request, bound) => {
    const checked = await verifyRequestSignature(request, {
      origin: bound.origin,
      signatureAgents: trusted,
      key: (origin, keyid) => cache.key(origin, keyid),
      nonces,
      registered: options.registeredAgents ? registered : undefined,
      clockSkew: options.clockSkew,
      maxWindow: options.maxWindow,
    });
    if (!checked.ok) return checked;
    const session: SignatureSession = { scheme: "web-bot-auth", signature_agent: checked.agent.signature_agent, keyid: checked.agent.keyid, request: bound };
    if (checked.agent.agent_id !== undefined) session.agent_id = checked.agent.agent_id;
    return { ok: true, session };
  };
}
