// The guard's cache of the trusted operators' key directories (Web Bot
// Auth, docs/http-auth.md "Trust configuration"): fetched with the rules
// every fetch of the project follows (src/bounded-fetch.ts: https, or http to
// loopback only when allowed; bounded size; a timeout; no cross-origin
// redirect), read and checked by src/web-bot-auth/directory.ts, kept per
// Cache-Control within bounds.
import { acceptedSource, readBounded } from "../bounded-fetch";
import { DIRECTORY_PATH, DIRECTORY_TYPE, DirectoryError, type DirectoryKeys, readDirectory } from "../web-bot-auth/directory";

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
