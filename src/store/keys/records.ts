// API keys: the key rows, their limits and usage counters.
// The types the domain sees and what it asks of this aggregate; sqlite.ts and
// postgres.ts beside this file answer it. Times are Unix milliseconds.

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** SHA-256 of the full key, hex. The key itself is never stored. */
  hash: string;
  /** Challenge creations allowed per minute; 0 means unlimited. */
  rateLimit: number;
  /** Agent registrations allowed per minute; 0 means unlimited; absent: the configured default. */
  agentRateLimit?: number;
  createdAt: number;
  revokedAt: number | null;
  /**
   * The origins (RFC 6454 serializations) this key's merchant takes payment
   * at: a budget spend's payee is one of them (docs/api.md, "Budget spends").
   * Absent: none registered.
   */
  origins?: string[];
}

export interface Usage {
  /** Successful challenge creations: the counter the interface specifies. */
  challenges: number;
  verified: number;
  failed: number;
}

export interface KeysStore {
  createKey(key: ApiKeyRecord): Promise<void>;

  getKey(id: string): Promise<ApiKeyRecord | null>;

  listKeys(): Promise<ApiKeyRecord[]>;

  /** Marks the key revoked; false when no such key (or already revoked). */
  revokeKey(id: string, at: number): Promise<boolean>;

  setRateLimit(id: string, perMinute: number): Promise<boolean>;

  usage(id: string): Promise<Usage | null>;

  /** Sets the key's agent registrations per minute (null: back to the configured default). */
  setAgentRateLimit(id: string, perMinute: number | null): Promise<boolean>;

  /** Replaces the key's registered origins (empty: none); false when no such key. */
  setOrigins(id: string, origins: readonly string[]): Promise<boolean>;
}
