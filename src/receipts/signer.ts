// The active signing key as every node sees it: read from the store, kept for
// KEY_REFRESH_MS, then read again, so a rotation made by any process (the
// CLI, another node) is signing everywhere within that time, without a
// restart. The JWKS is cached for the same interval.
import { CompactSign, type JWK } from "jose";
import type { KeyObject } from "node:crypto";
import type { SigningKeyRecord, Store } from "../store/interface";
import { RECEIPT_ALG, RECEIPT_TYPE, type ReceiptClaims } from "./claims";
import { newSigningKey, openPrivateKey } from "./keys";

/** How long a node keeps using the active key it read before asking the store again. */
export const KEY_REFRESH_MS = 5_000;

export interface Jwks {
  keys: JWK[];
}

export interface SignerOptions {
  /** RECEIPT_KEY_SECRET: seals new keys and unseals stored ones. */
  secret?: string;
  refreshMs?: number;
  /** Monotonic-enough time for the cache; Date.now by default. */
  now?: () => number;
}

interface Cached<T> {
  value: T;
  readAt: number;
}

export class ReceiptSigner {
  private active?: Cached<{ kid: string; key: KeyObject }>;
  private published?: Cached<Jwks>;
  private loading?: Promise<{ kid: string; key: KeyObject }>;
  private readonly opened = new Map<string, KeyObject>();
  private readonly refreshMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    private readonly options: SignerOptions = {},
  ) {
    this.refreshMs = options.refreshMs ?? KEY_REFRESH_MS;
    this.now = options.now ?? Date.now;
  }

  /** The active key's id, creating the first key when the store has none. */
  async activeKid(): Promise<string> {
    return (await this.activeKey()).kid;
  }

  /**
   * Whether a key has been loaded: signing then needs at most a read of the
   * store (a refresh), never the write that creates the first key.
   */
  get hasKey(): boolean {
    return this.active !== undefined;
  }

  async sign(claims: ReceiptClaims): Promise<string> {
    const { kid, key } = await this.activeKey();
    const payload = new TextEncoder().encode(JSON.stringify(claims));
    return new CompactSign(payload).setProtectedHeader({ alg: RECEIPT_ALG, kid, typ: RECEIPT_TYPE }).sign(key);
  }

  /** Every key whose receipts may still be checked: the active and the published ones. */
  async jwks(): Promise<Jwks> {
    if (this.published && this.now() - this.published.readAt < this.refreshMs) return this.published.value;
    const readAt = this.now();
    await this.activeKey(); // on a fresh store, the first key exists before it is listed
    const keys = (await this.store.listSigningKeys()).filter((k) => k.state !== "retired").map(jwkOf);
    this.published = { value: { keys }, readAt };
    return this.published.value;
  }

  private async activeKey(): Promise<{ kid: string; key: KeyObject }> {
    if (this.active && this.now() - this.active.readAt < this.refreshMs) return this.active.value;
    // One read in flight per process, however many requests are waiting.
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async load(): Promise<{ kid: string; key: KeyObject }> {
    const readAt = this.now();
    const record = (await this.store.activeSigningKey()) ?? (await this.store.ensureSigningKey(await newSigningKey(readAt, this.options.secret)));
    let key = this.opened.get(record.kid);
    if (!key) {
      key = openPrivateKey(record, this.options.secret);
      this.opened.set(record.kid, key);
    }
    this.active = { value: { kid: record.kid, key }, readAt };
    return this.active.value;
  }
}

/** A stored key as a JWKS entry: the public members only, with kid, alg and use. */
export function jwkOf(record: SigningKeyRecord): JWK {
  const { kty, crv, x } = JSON.parse(record.publicJwk) as JWK;
  return { kty, crv, x, kid: record.kid, alg: RECEIPT_ALG, use: "sig" };
}
