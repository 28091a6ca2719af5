// API keys: `zka_<16 hex id>_<43 base64url secret>` — 256 random bits, shown
// once at creation. Only SHA-256(key) is stored: the key has full entropy, so
// a fast hash is as safe as a slow one (the practice of Stripe and Unkey), and
// lookups stay cheap. The id inside the key finds the row; the hash comparison
// is constant-time. The listing shows only `zka_<id>`, the key's prefix.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Clock } from "../../clock";
import { ApiError } from "../../errors";
import type { ApiKeyRecord, KeysStore, Usage } from "../../store/keys/records";

const KEY_PATTERN = /^zka_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/;

export const keyPrefix = (id: string): string => `zka_${id}`;
export const hashKey = (key: string): string => createHash("sha256").update(key, "utf8").digest("hex");

export interface CreatedKey {
  record: ApiKeyRecord;
  /** The full key; this is the only time it exists outside its owner. */
  key: string;
}

export async function createKey(store: KeysStore, clock: Clock, name: string, rateLimit: number): Promise<CreatedKey> {
  const id = randomBytes(8).toString("hex");
  const key = `${keyPrefix(id)}_${randomBytes(32).toString("base64url")}`;
  const record: ApiKeyRecord = { id, name, hash: hashKey(key), rateLimit, createdAt: clock.now(), revokedAt: null };
  await store.createKey(record);
  return { record, key };
}

/** The live key a request's X-Api-Key header names, or the 401/403 to answer. */
export async function authenticate(store: KeysStore, header: string | null | undefined): Promise<ApiKeyRecord> {
  if (header === null || header === undefined || header === "") throw new ApiError("missing_api_key");
  const match = KEY_PATTERN.exec(header);
  if (!match) throw new ApiError("invalid_api_key");
  const record = await store.getKey(match[1]!);
  if (!record || record.revokedAt !== null) throw new ApiError("invalid_api_key");
  const presented = Buffer.from(hashKey(header), "hex");
  if (!timingSafeEqual(presented, Buffer.from(record.hash, "hex"))) throw new ApiError("invalid_api_key");
  return record;
}

export interface KeyView {
  id: string;
  prefix: string;
  name: string;
  rate_limit_per_minute: number;
  /** Agent registrations per minute; null: the server's default (DEFAULT_AGENT_RATE_LIMIT). */
  agent_rate_limit_per_minute: number | null;
  created_at: string;
  revoked_at: string | null;
  /** The origins a budget spend's payee may be (keys set-origins); empty: none. */
  origins: string[];
}

export const keyView = (record: ApiKeyRecord): KeyView => ({
  id: record.id,
  prefix: keyPrefix(record.id),
  name: record.name,
  rate_limit_per_minute: record.rateLimit,
  agent_rate_limit_per_minute: record.agentRateLimit ?? null,
  created_at: new Date(record.createdAt).toISOString(),
  revoked_at: record.revokedAt === null ? null : new Date(record.revokedAt).toISOString(),
  origins: record.origins ?? [],
});

export const usageView = (record: ApiKeyRecord, usage: Usage) => ({
  key_id: record.id,
  name: record.name,
  challenges: usage.challenges,
  verifications: { verified: usage.verified, failed: usage.failed },
  rate_limit_per_minute: record.rateLimit,
});

/** Creates the first key when the store has none, so a new user can try the API at once. */
export async function bootstrapKey(store: KeysStore, clock: Clock, rateLimit: number): Promise<CreatedKey | null> {
  if ((await store.listKeys()).length > 0) return null;
  return createKey(store, clock, "bootstrap", rateLimit);
}
