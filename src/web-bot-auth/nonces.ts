// Nonces a verifier has accepted: a signature's nonce is accepted once
// within the signature's window, so a captured request cannot be sent again.
//
// One merchant process: MemoryNonceStore (the default). Several processes
// behind a load balancer must share one store, or a request replayed to
// another process passes there: implement NonceStore over what they already
// share, e.g. Redis `SET wba:<key> 1 NX EXAT <expiresAt>` (true when it was
// set), or SQL `INSERT INTO seen_nonces (key, expires_at) VALUES (…) ON
// CONFLICT DO NOTHING` (true when a row was inserted; delete rows past
// expires_at now and then). docs/http-auth.md, "Signature rules".

export interface NonceStore {
  /**
   * Records `key` until `expiresAt` (Unix seconds): true when it was not
   * recorded already (accept the request), false when it was (a replay).
   * Atomic: of two concurrent claims of one key, exactly one gets true. A
   * store that cannot answer throws; the request is then refused.
   */
  claim(key: string, expiresAt: number): boolean | Promise<boolean>;
}

/** The memory store is full of nonces still inside their windows: refuse rather than forget one (a forgotten nonce can be replayed). */
export class NonceStoreFull extends Error {}

/**
 * An in-process NonceStore with bounded memory: at most `capacity` nonces
 * (default 100 000, some 10 MB). Expired ones are dropped as it fills; when
 * every remembered nonce is still live, a new one is refused (NonceStoreFull)
 * rather than an old one forgotten. Only signatures that verified reach the
 * store, so filling it takes a trusted operator's keys.
 */
export class MemoryNonceStore implements NonceStore {
  private readonly seen = new Map<string, number>();
  constructor(
    private readonly capacity = 100_000,
    private readonly now: () => number = () => Date.now() / 1000,
  ) {}

  claim(key: string, expiresAt: number): boolean {
    const now = this.now();
    const known = this.seen.get(key);
    if (known !== undefined && known >= now) return false;
    if (known === undefined && this.seen.size >= this.capacity) {
      for (const [seenKey, until] of this.seen) if (until < now) this.seen.delete(seenKey);
      if (this.seen.size >= this.capacity) throw new NonceStoreFull(`${this.capacity} nonces are live`);
    }
    this.seen.set(key, expiresAt);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}
