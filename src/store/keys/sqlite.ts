// API keys on SQLite.
import type { SqliteDb } from "../connection/sqlite";
import { originsText, toKey, toUsage } from "./rows";
import type { ApiKeyRecord, KeysStore, Usage } from "./records";

export function sqliteKeys({ db, immediate }: SqliteDb): KeysStore {
  const q = {
    insertKey: db.query(
      "INSERT INTO api_keys (id, name, hash, rate_limit, agent_rate_limit, created_at, revoked_at) VALUES ($id, $name, $hash, $rateLimit, $agentRateLimit, $createdAt, $revokedAt)",
    ),
    getKey: db.query("SELECT * FROM api_keys WHERE id = ?"),
    listKeys: db.query("SELECT * FROM api_keys ORDER BY created_at, id"),
    revokeKey: db.query("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"),
    setRateLimit: db.query("UPDATE api_keys SET rate_limit = ? WHERE id = ?"),
    setAgentRateLimit: db.query("UPDATE api_keys SET agent_rate_limit = ? WHERE id = ?"),
    setOrigins: db.query("UPDATE api_keys SET origins = ? WHERE id = ?"),
  };
  return {
    async createKey(key: ApiKeyRecord): Promise<void> {
      const { id, name, hash, rateLimit, createdAt, revokedAt } = key;
      q.insertKey.run({ id, name, hash, rateLimit, agentRateLimit: key.agentRateLimit ?? null, createdAt, revokedAt });
    },

    async getKey(id: string): Promise<ApiKeyRecord | null> {
      const row = q.getKey.get(id);
      return row ? toKey(row) : null;
    },

    async listKeys(): Promise<ApiKeyRecord[]> {
      return q.listKeys.all().map(toKey);
    },

    async revokeKey(id: string, at: number): Promise<boolean> {
      return q.revokeKey.run(at, id).changes === 1;
    },

    async setRateLimit(id: string, perMinute: number): Promise<boolean> {
      return immediate("set rate limit", () => q.setRateLimit.run(perMinute, id).changes === 1);
    },

    async setAgentRateLimit(id: string, perMinute: number | null): Promise<boolean> {
      return immediate("set agent rate limit", () => q.setAgentRateLimit.run(perMinute, id).changes === 1);
    },

    async setOrigins(id: string, origins: readonly string[]): Promise<boolean> {
      return immediate("set origins", () => q.setOrigins.run(originsText(origins), id).changes === 1);
    },

    async usage(id: string): Promise<Usage | null> {
      const row = q.getKey.get(id);
      return row ? toUsage(row) : null;
    },
  };
}
