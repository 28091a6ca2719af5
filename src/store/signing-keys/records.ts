// The receipts' signing keys.
// The types the domain sees and what it asks of this aggregate; sqlite.ts and
// postgres.ts beside this file answer it. Times are Unix milliseconds.

/**
 * A receipt signing key. `active` signs (exactly one at a time), `published`
 * no longer signs but stays in the JWKS, `retired` is withdrawn from it.
 */
export type SigningKeyState = "active" | "published" | "retired";

export interface SigningKeyRecord {
  /** RFC 7638 thumbprint of the public key. */
  kid: string;
  /** The public key as JWK JSON text ({"crv":"Ed25519","kty":"OKP","x":…}). */
  publicJwk: string;
  /** The private key at rest (src/receipts/keys.ts: plain or AES-256-GCM sealed PKCS#8). Never logged or served. */
  privateKey: string;
  state: SigningKeyState;
  createdAt: number;
  retiredAt: number | null;
}

export interface SigningKeysStore {
  /**
   * Inserts `candidate` as the active signing key when there is none, and
   * returns the active key — the candidate or the one another process
   * inserted first (at most one active key, enforced by a unique index).
   */
  ensureSigningKey(candidate: SigningKeyRecord): Promise<SigningKeyRecord>;

  activeSigningKey(): Promise<SigningKeyRecord | null>;

  /** Every signing key, oldest first. */
  listSigningKeys(): Promise<SigningKeyRecord[]>;

  /**
   * Makes `next` the active key; the previously active one becomes
   * `published` (still verifiable). One transaction; returns the previous kid.
   */
  rotateSigningKey(next: SigningKeyRecord): Promise<string | null>;

  /**
   * Withdraws a `published` key from the JWKS. The active key cannot be
   * retired (rotate first).
   */
  retireSigningKey(kid: string, at: number): Promise<"retired" | "already_retired" | "active" | "unknown">;
}
