// The guard's cache of the trusted operators' key directories (Web Bot
// Auth, docs/http-auth.md "Trust configuration"), keyed by directory URL
// (draft -01 identifies an operator by it): fetched with the rules every
// fetch of the project follows (src/bounded-fetch.ts: https, or http to
// loopback only when allowed; bounded size; a timeout), answered 200 and
// never through a redirect (draft -01), read and checked by
// src/web-bot-auth/directory.ts, kept per Cache-Control within bounds.
//
// Under abuse (issue 37): a key id the cached directory lacks does not
// refetch it before the directory's own caching allows (a forged request
// naming a trusted operator cannot make the guard fetch), and a refetch that
// fails keeps the last good directory for up to `staleIfErrorSeconds` past
// its expiry (stale-if-error, RFC 5861), retrying every `retryAfterSeconds`.
import { acceptedSource, readBounded } from "../../../bounded-fetch";
import { DIRECTORY_TYPE, DirectoryError, type DirectoryKeys, readDirectory } from "../../../web-bot-auth/directory";
import { directoryUrl } from "../../../web-bot-auth/signature-agent";

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
  /** After a failed fetch, how long before the next one, s. Default 30. */
  retryAfterSeconds?: number;
  /** How long past its expiry the last good directory is still used while refetches fail, s. Default 3 600. */
  staleIfErrorSeconds?: number;
  clockSkew?: number;
  fetch?: (request: Request) => Response | Promise<Response>;
  /** Unix seconds (tests). */
  now?: () => number;
}

interface Entry {
  keys: DirectoryKeys | null;
  error?: string;
  fetchedAt: number;
  /** Until when the keys are used without a fetch. */
  expiresAt: number;
  /** For keys kept after a failed refetch: the last moment they may still be used. */
  staleUntil?: number;
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
 * only ever asked for trusted directory URLs (the verifier checks
 * Signature-Agent against its list first), so the cache holds at most one
 * entry per trusted operator, and no request can make it fetch anything else.
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
      staleIfErrorSeconds: 3600,
      ...options,
    };
  }

  private now(): number {
    return this.options.now ? this.options.now() : Date.now() / 1000;
  }

  /**
   * The public key (base64url x) `keyid` names in the directory at `url`,
   * null when the directory does not hold it; throws DirectoryError when it
   * cannot be read. A key id it lacks is looked for again only once the
   * directory has expired: an operator that adds a key waits its own max-age.
   */
  async key(operator: string, keyid: string): Promise<string | null> {
    // An origin stands for its well-known directory (the verifier passes resolved URLs already; resolving again changes nothing).
    const url = directoryUrl(operator);
    if (url === null) throw new DirectoryError(`not an http(s) directory URL: ${operator}`);
    let entry = this.entries.get(url);
    if (entry === undefined || entry.expiresAt <= this.now()) entry = await this.load(url);
    if (entry.keys === null) throw new DirectoryError(entry.error ?? "the directory cannot be read");
    return entry.keys.get(keyid) ?? null;
  }

  /** Seconds until the directory at `url` is fetched again (for Retry-After when it cannot be read). */
  retryAfter(operator: string): number {
    const entry = this.entries.get(directoryUrl(operator) ?? operator);
    return entry === undefined ? 1 : Math.max(1, Math.ceil(entry.expiresAt - this.now()));
  }

  private load(url: string): Promise<Entry> {
    const pending = this.loading.get(url);
    if (pending) return pending; // concurrent requests share one fetch
    const loading = this.fetchEntry(url).finally(() => this.loading.delete(url));
    this.loading.set(url, loading);
    return loading;
  }

  private async fetchEntry(url: string): Promise<Entry> {
    const fetchedAt = this.now();
    let entry: Entry;
    try {
      const { keys, ttl } = await this.fetchDirectory(url);
      entry = { keys, fetchedAt, expiresAt: fetchedAt + Math.max(this.options.minAgeSeconds, Math.min(ttl, this.options.maxAgeSeconds)) };
    } catch (error) {
      const message = error instanceof DirectoryError ? error.message : `the directory at ${url} cannot be fetched`;
      const previous = this.entries.get(url);
      const staleUntil = previous?.keys ? (previous.staleUntil ?? previous.expiresAt + this.options.staleIfErrorSeconds) : undefined;
      if (previous?.keys && staleUntil !== undefined && staleUntil > fetchedAt) {
        // Stale-if-error: the last good keys still answer, and the next fetch waits retryAfterSeconds.
        entry = { keys: previous.keys, fetchedAt, expiresAt: Math.min(staleUntil, fetchedAt + this.options.retryAfterSeconds), staleUntil };
      } else {
        entry = { keys: null, error: message, fetchedAt, expiresAt: fetchedAt + this.options.retryAfterSeconds };
      }
    }
    this.entries.set(url, entry);
    return entry;
  }

  private async fetchDirectory(href: string): Promise<{ keys: DirectoryKeys; ttl: number }> {
    const send = this.options.fetch ?? ((request: Request) => fetch(request));
    const url = new URL(href);
    if (!acceptedSource(url, this.options.allowInsecureLoopback))
      throw new DirectoryError(`${url.origin} is not https (http only to a loopback host when allowed)`);
    this.fetches++;
    const response = await send(
      new Request(url, { headers: { accept: DIRECTORY_TYPE }, redirect: "manual", signal: AbortSignal.timeout(this.options.timeoutMs) }),
    );
    // Draft -01: the directory is the URL itself, answered 200; a redirect (even to the same origin) is not followed.
    if (response.status !== 200) {
      await response.body?.cancel();
      const redirect = response.status >= 300 && response.status < 400;
      throw new DirectoryError(`the directory at ${href} ${redirect ? "redirects (not followed)" : `answered ${response.status}`}`);
    }
    const type = response.headers.get("content-type") ?? "";
    if (type.split(";")[0]!.trim().toLowerCase() !== DIRECTORY_TYPE) {
      await response.body?.cancel();
      throw new DirectoryError(`the directory at ${href} is not ${DIRECTORY_TYPE}`);
    }
    const read = await readBounded(response, this.options.maxBytes);
    if (read === null) throw new DirectoryError(`the directory at ${href} is larger than ${this.options.maxBytes} bytes`);
    const keys = await readDirectory({ status: response.status, headers: response.headers, body: read.bytes }, url.href, {
      now: Math.floor(this.now()),
      clockSkew: this.options.clockSkew,
    });
    return { keys, ttl: cacheSeconds(response.headers.get("cache-control")) ?? this.options.defaultAgeSeconds };
  }
}
