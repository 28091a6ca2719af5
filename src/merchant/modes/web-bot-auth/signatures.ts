// The guard's Web Bot Auth checks for one guard's options (docs/http-auth.md,
// "Signed agents"): a request signed by an agent of an operator the merchant
// trusts is admitted as that operator's agent, without a challenge or a call
// to the zkagent service. The rules are src/web-bot-auth/verify.ts's; this
// file holds what the guard keeps between requests: the operators'
// directories, the nonces already accepted, and the registered agents' keys
// the service named.
import type { BoundRequest } from "../../../http-auth/statement";
import { MemoryNonceStore, type NonceStore } from "../../../web-bot-auth/nonces";
import { directoryUrl } from "../../../web-bot-auth/signature-agent";
import { type NoncePolicy, type SignatureReason, verifyRequestSignature } from "../../../web-bot-auth/verify";
import { DirectoryCache } from "./directories";

export interface SignatureOptions {
  /**
   * The operators whose signed agents are admitted: each an origin (its
   * directory is /.well-known/http-message-signatures-directory there, e.g.
   * https://agents.operator.example) or the directory's own URL (draft -01
   * identifies an operator by that URL; the query is dropped).
   */
  signatureAgents: string[];
  /** Read directories over http:// from a loopback host (a local operator, tests); https only otherwise. */
  allowInsecureLoopback?: boolean;
  /**
   * "required" (the default): a signature without a nonce is refused
   * (nonce_required, with Accept-Signature asking for one), and each nonce is
   * accepted once. "optional" (draft -01's baseline): a signature without a
   * nonce is admitted within its created/expires window (replayable within
   * it); one with a nonce is still accepted once.
   */
  nonce?: NoncePolicy;
  /** The clock, Unix seconds (tests; a verifier checked at a given time). Default the system's. */
  now?: () => number;
  /**
   * Where accepted nonces are remembered. Default: one MemoryNonceStore per
   * process, shared by every guard in it (a signature covers the authority,
   * not the route, so one nonce must not pass on two routes). Several
   * processes: one shared store, RedisNonceStore or PostgresNonceStore.
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
   * revoked. Answers are cached (registeredKeys), so a flood of key ids costs
   * one call per key id per cache period. Default false.
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
  /** The operator's directory URL (what Signature-Agent resolved to) whose directory holds the key; for a registered agent, the URL it named, or null. */
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

export type SignatureOutcome = { ok: true; session: SignatureSession } | { ok: false; reason: SignatureReason; message: string; retryAfter?: number };

/** A registered agent's key, as the zkagent service answers for the merchant's API key (null: none of its agents). */
export type RegisteredKeyLookup = (keyid: string) => Promise<{ agent_id: string; signing_key: string; revoked: boolean } | null>;

/** The trust list as directory URLs; a TypeError naming the first entry that is no http(s) origin or URL. */
export function trustedDirectories(signatureAgents: unknown): string[] {
  if (!Array.isArray(signatureAgents)) throw new TypeError("signatures.signatureAgents must list the trusted operators' origins or directory URLs");
  return signatureAgents.map((entry) => {
    const url = typeof entry === "string" ? directoryUrl(entry) : null;
    if (url === null) throw new TypeError(`signatures.signatureAgents: not an http(s) origin or URL: ${String(entry)}`);
    return url;
  });
}

export function signatureMode(
  options: SignatureOptions,
  registered?: RegisteredKeyLookup,
): (request: Request, bound: BoundRequest) => Promise<SignatureOutcome> {
  const trusted = trustedDirectories(options.signatureAgents);
  if (options.nonce !== undefined && options.nonce !== "required" && options.nonce !== "optional")
    throw new TypeError(`signatures.nonce must be "required" or "optional", not ${String(options.nonce)}`);
  const insecure = options.allowInsecureLoopback === true;
  const clock = options.now;
  // A guard on its own clock gets its own defaults on that clock: the process's shared ones run on the system's,
  // on which a nonce remembered until a time of the guard's clock would expire at once (or never).
  const nonces = options.nonces ?? (clock ? new MemoryNonceStore({ now: clock }) : (sharedNonces ??= new MemoryNonceStore()));
  let directories = options.directories ?? (clock ? new DirectoryCache({ allowInsecureLoopback: insecure, now: clock }) : sharedDirectories.get(insecure));
  if (!directories) {
    directories = new DirectoryCache({ allowInsecureLoopback: insecure });
    sharedDirectories.set(insecure, directories);
  }
  const cache = directories;
  return async (request, bound) => {
    let asked: string | undefined;
    const checked = await verifyRequestSignature(request, {
      origin: bound.origin,
      signatureAgents: trusted,
      key: (url, keyid) => {
        asked = url;
        return cache.key(url, keyid);
      },
      nonces,
      nonce: options.nonce,
      registered: options.registeredAgents ? registered : undefined,
      now: options.now ? Math.floor(options.now()) : undefined,
      clockSkew: options.clockSkew,
      maxWindow: options.maxWindow,
    });
    if (!checked.ok) {
      // The directory's entry says when the next fetch may be: that is when to try again.
      if (checked.reason === "directory_unavailable" && asked !== undefined) return { ...checked, retryAfter: cache.retryAfter(asked) };
      return checked;
    }
    const session: SignatureSession = { scheme: "web-bot-auth", signature_agent: checked.agent.signature_agent, keyid: checked.agent.keyid, request: bound };
    if (checked.agent.agent_id !== undefined) session.agent_id = checked.agent.agent_id;
    return { ok: true, session };
  };
}
