// API keys on PostgreSQL (usage is summed over the key's shard rows).
import type { SQL } from "bun";
import { hasNul, mapUnreachable } from "../connection/postgres";
import { originsText, toKey, toUsage } from "./rows";
import type { ApiKeyRecord, KeysStore, Usage } from "./records";

export function postgresKeys(sql: SQL): KeysStore {
  const store: KeysStore = {
    async createKey(key: ApiKeyRecord): Promise<void> {
      await sql`
      INSERT INTO api_keys (id, name, hash, rate_limit, agent_rate_limit, created_at, revoked_at)
      VALUES (${key.id}, ${key.name}, ${key.hash}, ${key.rateLimit}, ${key.agentRateLimit ?? null}, ${key.createdAt}, ${key.revokedAt})`;
    },

    async getKey(id: string): Promise<ApiKeyRecord | null> {
      if (hasNul(id)) return null;
      const [row] = await sql`SELECT * FROM api_keys WHERE id = ${id}`;
      return row ? toKey(row) : null;
    },

    async listKeys(): Promise<ApiKeyRecord[]> {
      const rows = await sql`SELECT * FROM api_keys ORDER BY created_at, id`;
      return rows.map(toKey);
    },

    async revokeKey(id: string, at: number): Promise<boolean> {
      const rows = await sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL RETURNING id`;
      return rows.length === 1;
    },

    async setRateLimit(id: string, perMinute: number): Promise<boolean> {
      const rows = await sql`UPDATE api_keys SET rate_limit = ${perMinute} WHERE id = ${id} RETURNING id`;
      return rows.length === 1;
    },

    async usage(id: string): Promise<Usage | null> {
      if (hasNul(id)) return null;
      const [row] = await sql`
      SELECT coalesce(sum(u.challenges), 0) AS challenges, coalesce(sum(u.verified), 0) AS verified, coalesce(sum(u.failed), 0) AS failed
      FROM api_keys k LEFT JOIN usage_counters u ON u.key_id = k.id WHERE k.id = ${id} GROUP BY k.id`;
      return row ? toUsage(row) : null;
    },

    async setAgentRateLimit(id: string, perMinute: number | null): Promise<boolean> {
      const rows = await sql`UPDATE api_keys SET agent_rate_limit = ${perMinute} WHERE id = ${id} RETURNING id`;
      return rows.length === 1;
    },

    async setOrigins(id: string, origins: readonly string[]): Promise<boolean> {
      if (hasNul(id)) return false;
      const rows = await sql`UPDATE api_keys SET origins = ${originsText(origins)} WHERE id = ${id} RETURNING id`;
      return rows.length === 1;
    },
  };
  return mapUnreachable(store);
}
