// The active signing key as every node sees it: read from the store, kept for
// KEY_REFRESH_MS, then read again, so a rotation made by any process (the
// CLI, another node) is signing everywhere within that time, without a
// restart. The JWKS is cached for the same interval.
import { CompactSign, type JWK } from "jose";
import type { KeyObject } from "node:crypto";
import { Refreshing } from "../refreshing";
import type { SigningKeyRecord, SigningKeysStore } from "../store/signing-keys/records";
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

export class ReceiptSigner {
  private readonly active: Refreshing<{ kid: string; key: KeyObject }>;
  private readonly published: Refreshing<Jwks>;
  private readonly opened = new Map<string, KeyObject>();

  constructor(
    private readonly store: SigningKeysStore,
    private readonly options: SignerOptions = {},
  ) {
    const refreshMs = options.refreshMs ?? KEY_REFRESH_MS;
    this.active = new Refreshing((readAt) => this.load(readAt), refreshMs, options.now);
    this.published = new Refreshing(
      async () => {
        await this.active.get(); // on a fresh store, the first key exists before it is listed
        return { keys: (await this.store.listSigningKeys()).filter((k) => k.state !== "retired").map(jwkOf) };
      },
      refreshMs,
      options.now,
    );
  }

  /** The active key's id, creating the first key when the store has none. */
  async activeKid(): Promise<string> {
    return (await this.active.get()).kid;
  }

  /**
   * Whether a key has been loaded: signing then needs at most a read of the
   * store (a refresh), never the write that creates the first key.
   */
  get hasKey(): boolean {
    return this.active.loaded;
  }

  async sign(claims: ReceiptClaims): Promise<string> {
    const { kid, key } = await this.active.get();
    const payload = new TextEncoder().encode(JSON.stringify(claims));
    return new CompactSign(payload).setProtectedHeader({ alg: RECEIPT_ALG, kid, typ: RECEIPT_TYPE }).sign(key);
  }

  /** Every key whose receipts may still be checked: the active and the published ones. */
  jwks(): Promise<Jwks> {
    return this.published.get();
  }

  private async load(readAt: number): Promise<{ kid: string; key: KeyObject }> {
    const record = (await this.store.activeSigningKey()) ?? (await this.store.ensureSigningKey(await newSigningKey(readAt, this.options.secret)));
    let key = this.opened.get(record.kid);
    if (!key) {
      key = openPrivateKey(record, this.options.secret);
      this.opened.set(record.kid, key);
    }
    return { kid: record.kid, key };
  }
}

/** A stored key as a JWKS entry: the public members only, with kid, alg and use. */
export function jwkOf(record: SigningKeyRecord): JWK {
  const { kty, crv, x } = JSON.parse(record.publicJwk) as JWK;
  return { kty, crv, x, kid: record.kid, alg: RECEIPT_ALG, use: "sig" };
}
