// Nonces a verifier has accepted: a signature's nonce is accepted once
// within the signature's window, so a captured request cannot be sent again.
//
// One contract, NonceStore: claim a key until a time, true the first time
// only. Three stores keep it: MemoryNonceStore (the default, one process),
// and for several processes behind a load balancer (each must see the
// others' nonces, or a request replayed to another process passes there)
// RedisNonceStore (Redis or Valkey, nonces-redis.ts) and PostgresNonceStore
// (nonces-postgres.ts), each over the client the merchant already has.
// docs/http-auth.md, "Nonces and replay".
import { createHash } from "node:crypto";

export interface NonceStore {
  /**
   * Records `key` until `expiresAt` (Unix seconds): true when it was not
   * recorded already (accept the request), false when it was (a replay).
   * Atomic: of two concurrent claims of one key, exactly one gets true. A
   * store that cannot answer throws; the request is then refused (503), never
   * admitted.
   */
  claim(key: string, expiresAt: number): boolean | Promise<boolean>;
}

/** A store that cannot answer (down, timed out, full): the signature is refused, 503 with Retry-After. */
export class NonceStoreUnavailable extends Error {}

/** The memory store holds as many live nonces as it may for this party (or in all): refuse rather than forget one (a forgotten nonce can be replayed). */
export class NonceStoreFull extends NonceStoreUnavailable {}

const hash = (text: string): string => createHash("sha256").update(text).digest("base64url");

/**
 * The key a nonce is claimed under: `wba:<party>:<nonce>`, each part a
 * SHA-256 (fixed size whatever the nonce's length). The party is whose
 * nonces they are (an operator's directory URL, or `agent:<keyid>` for a
 * registered agent); the nonce part binds the key id, so two keys' nonces
 * never collide.
 */
export const nonceKey = (party: string, keyid: string, nonce: string): string => `wba:${hash(party)}:${hash(`${keyid}\n${nonce}`)}`;

/** The party part of a nonceKey (what MemoryNonceStore bounds each of). */
const partyOf = (key: string): string => key.slice(0, key.lastIndexOf(":") + 1);

export interface MemoryNonceStoreOptions {
  /** Live nonces one party (an operator, a registered agent's key) may hold. Default 10 000. */
  perParty?: number;
  /** Live nonces in all. Default 1 000 000 (about 170 MB at most: 167 bytes a nonce, measured). */
  capacity?: number;
  /** Unix seconds (tests). */
  now?: () => number;
}

/**
 * An in-process NonceStore with bounded memory, per party: a party that
 * holds `perParty` live nonces is refused its next one (NonceStoreFull,
 * answered 503) while every other party's nonces are still accepted, so one
 * trusted operator cannot lock the others (or the merchant's registered
 * agents) out. Expired nonces are dropped as a party fills; a live one is
 * never forgotten (it could be replayed). Only signatures that verified
 * reach the store, so filling even one party takes that party's keys.
 */
export class MemoryNonceStore implements NonceStore {
  private readonly parties = new Map<string, { seen: Map<string, number>; soonest: number }>();
  private total = 0;
  private readonly perParty: number;
  private readonly capacity: number;
  private readonly now: () => number;

  constructor(options: MemoryNonceStoreOptions = {}) {
    this.perParty = options.perParty ?? 10_000;
    this.capacity = options.capacity ?? 1_000_000;
    this.now = options.now ?? (() => Date.now() / 1000);
  }

  claim(key: string, expiresAt: number): boolean {
    const now = this.now();
    const party = partyOf(key);
    let held = this.parties.get(party);
    if (held === undefined) {
      held = { seen: new Map(), soonest: Number.POSITIVE_INFINITY };
      this.parties.set(party, held);
    }
    const known = held.seen.get(key);
    if (known !== undefined && known >= now) return false;
    if (known === undefined && (held.seen.size >= this.perParty || this.total >= this.capacity)) {
      this.sweep(held, now);
      if (held.seen.size >= this.perParty) throw new NonceStoreFull(`this party has ${this.perParty} live nonces`);
      if (this.total >= this.capacity) for (const other of this.parties.values()) this.sweep(other, now);
      if (this.total >= this.capacity) throw new NonceStoreFull(`${this.capacity} nonces are live`);
    }
    if (known === undefined) this.total++;
    held.seen.set(key, expiresAt);
    held.soonest = Math.min(held.soonest, expiresAt);
    return true;
  }

  /** Drops a party's expired nonces; nothing to do (no walk) until its soonest expiry has passed. */
  private sweep(held: { seen: Map<string, number>; soonest: number }, now: number): void {
    if (held.soonest >= now) return;
    let soonest = Number.POSITIVE_INFINITY;
    for (const [key, until] of held.seen) {
      if (until < now) {
        held.seen.delete(key);
        this.total--;
      } else soonest = Math.min(soonest, until);
    }
    held.soonest = soonest;
  }

  /** Live and expired nonces still held. */
  get size(): number {
    return this.total;
  }
}

/** `promise`, or NonceStoreUnavailable after `ms`: a store that hangs must refuse, not hold the request. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NonceStoreUnavailable(`${what} did not answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
