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
// signed) and DirectoryCache (I/O: fetch with the project's rules, cache per
// Cache-Control with an upper bound).
import { type SignatureMessage, verifySignature } from "http-message-sig";
import { directoryResponseHeaders, HTTP_MESSAGE_SIGNATURES_DIRECTORY, MediaType } from "web-bot-auth";
import { Ed25519Signer } from "web-bot-auth/crypto";
import { acceptedSource, readBounded } from "../agent/bounded";
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
    fields: [...answer.headers].map(([name, value]) => ({ name, value })),
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

export interface DirectoryCacheOptions {
  /** Read directories over http:// from a loopback host (a local operator, tests); https only otherwise. */
  allowInsecureLoopback?: boolean;
  /** How long a fetch may take, ms. Default 5 000. */
  timeoutMs?: number;
  /** The largest directory read, bytes. Default 64 KiB. */
  maxBytes?: number;
  /** The longest a directory is kept, whatever its Cache-Control says, s. Default 3 600. */
  maxAgeSeconds?: number;
  /** How long a directory without max-age is kept, s. Default 300. */
  defaultAgeSeconds?: number;
  /** The shortest a directory is kept even when it says no-store or max-age=0, s, so that requests cannot make the verifier fetch it each time. Default 10. */
  minAgeSeconds?: number;
  /** After a failed fetch, or a key id the cached directory lacks, how long before the next fetch, s. Default 30. */
  retryAfterSeconds?: number;
  clockSkew?: number;
  fetch?: (request: Request) => Response | Promise<Response>;
  /** Unix seconds (tests). */
  now?: () => number;
}

interface Entry {
  keys: DirectoryKeys | null;
  error?: string;
  fetchedAt: number;
  expiresAt: number;
}

/** The seconds a Cache-Control lets a response be reused: max-age, 0 for no-store/no-cache, undefined when it says nothing. */
export function cacheSeconds(cacheControl: string | null): number | undefined {
  if (cacheControl === null) return undefined;
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/i.test(cacheControl)) return 0;
  const maxAge = /(^|,)\s*max-age\s*=\s*"?(\d+)"?\s*(,|$)/i.exec(cacheControl);
  return maxAge ? Number(maxAge[2]) : undefined;
}

/**
 * Directories of the operators a verifier trusts, fetched and cached. It is
 * only ever asked for trusted origins (the verifier checks Signature-Agent
 * against its list first), so the cache holds at most one entry per trusted
 * origin, and no request can make it fetch anything else.
 */
export class DirectoryCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Entry>>();
  private readonly options: Required<Omit<DirectoryCacheOptions, "fetch" | "now" | "clockSkew">> & DirectoryCacheOptions;
  /** Directory fetches made (each one a network request), for tests and benches. */
  fetches = 0;

  constructor(options: DirectoryCacheOptions = {}) {
    this.options = {
      allowInsecureLoopback: false,
      timeoutMs: 5000,
      maxBytes: 64 * 1024,
      maxAgeSeconds: 3600,
      defaultAgeSeconds: 300,
      minAgeSeconds: 10,
      retryAfterSeconds: 30,
      ...options,
    };
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now() / 1000;
  }

  /** The public key (base64url x) `keyid` names in `origin`'s directory, null when the directory does not hold it; throws DirectoryError when it cannot be read. */
  async key(origin: string, keyid: string): Promise<string | null> {
    let entry = this.entries.get(origin);
    const now = this.now();
    if (entry === undefined || entry.expiresAt <= now) entry = await this.load(origin);
    else if (entry.keys !== null && !entry.keys.has(keyid) && now - entry.fetchedAt >= this.options.retryAfterSeconds) {
      entry = await this.load(origin); // the operator may have added the key since
    }
    if (entry.keys === null) throw new DirectoryError(entry.error ?? "the directory cannot be read");
    return entry.keys.get(keyid) ?? null;
  }

  private load(origin: string): Promise<Entry> {
    const pending = this.loading.get(origin);
    if (pending) return pending; // concurrent requests share one fetch
    const loading = this.fetchEntry(origin).finally(() => this.loading.delete(origin));
    this.loading.set(origin, loading);
    return loading;
  }

  private async fetchEntry(origin: string): Promise<Entry> {
    const fetchedAt = this.now();
    let entry: Entry;
    try {
      const { keys, ttl } = await this.fetchDirectory(origin);
      entry = { keys, fetchedAt, expiresAt: fetchedAt + Math.max(this.options.minAgeSeconds, Math.min(ttl, this.options.maxAgeSeconds)) };
    } catch (error) {
      const message = error instanceof DirectoryError ? error.message : `the directory at ${origin} cannot be fetched`;
      entry = { keys: null, error: message, fetchedAt, expiresAt: fetchedAt + this.options.retryAfterSeconds };
    }
    this.entries.set(origin, entry);
    return entry;
  }

  private async fetchDirectory(origin: string): Promise<{ keys: DirectoryKeys; ttl: number }> {
    const send = this.options.fetch ?? ((request: Request) => fetch(request));
    let url = new URL(DIRECTORY_PATH, origin);
    for (let hops = 0; ; hops++) {
      if (!acceptedSource(url, this.options.allowInsecureLoopback))
        throw new DirectoryError(`${url.origin} is not https (http only to a loopback host when allowed)`);
      this.fetches++;
      const response = await send(
        new Request(url, { headers: { accept: DIRECTORY_TYPE }, redirect: "manual", signal: AbortSignal.timeout(this.options.timeoutMs) }),
      );
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const location = response.headers.get("location");
        const next = location === null || !URL.canParse(location, url) ? null : new URL(location, url);
        if (next === null || next.origin !== url.origin) throw new DirectoryError(`the directory at ${origin} redirects to another origin`);
        if (hops >= 3) throw new DirectoryError(`the directory at ${origin} redirects too often`);
        url = next;
        continue;
      }
      if (response.status !== 200) {
        await response.body?.cancel();
        throw new DirectoryError(`the directory at ${origin} answered ${response.status}`);
      }
      const type = response.headers.get("content-type") ?? "";
      if (type.split(";")[0]!.trim().toLowerCase() !== DIRECTORY_TYPE) {
        await response.body?.cancel();
        throw new DirectoryError(`the directory at ${origin} is not ${DIRECTORY_TYPE}`);
      }
      const read = await readBounded(response, this.options.maxBytes);
      if (read === null) throw new DirectoryError(`the directory at ${origin} is larger than ${this.options.maxBytes} bytes`);
      const keys = await readDirectory({ status: response.status, headers: response.headers, body: read.bytes }, url.href, {
        now: Math.floor(this.now()),
        clockSkew: this.options.clockSkew,
      });
      return { keys, ttl: cacheSeconds(response.headers.get("cache-control")) ?? this.options.defaultAgeSeconds };
    }
  }
}
