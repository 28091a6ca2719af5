// Agents on PostgreSQL: registration under the key's agent quota (the key's
// row locked, its window counted, in the registration's transaction),
// signing key ids, mandates.
import type { SQL } from "bun";
import { carriedCount, MINUTE_MS } from "../../sliding-window";
import type { StoredMandate } from "../../mandates/enforce";
import { NO_SPEND, type Spend, type SpendKey } from "../../mandates/evaluate";
import { hasNul, mapUnreachable } from "../connection/postgres";
import { setMandateRefusal, toAgent, toSpend } from "./rows";
import type { AgentQuota, AgentRecord, AgentsStore, RegisterAgentResult, SetMandateResult } from "./records";

export function postgresAgents(sql: SQL): AgentsStore {
  const store: AgentsStore = {
    async registerAgent(agent: AgentRecord, quota?: AgentQuota): Promise<RegisterAgentResult> {
      const { keyId, agentId, identityCommitment, signingKey, createdAt } = agent;
      const signingKeyId = agent.signingKeyId ?? null;
      const [principalKey, mandate, mandateJws, mandateIat] = [
        agent.principalKey ?? null,
        agent.mandate ?? null,
        agent.mandateJws ?? null,
        agent.mandateIat ?? null,
      ];
      return sql.begin(async (tx): Promise<RegisterAgentResult> => {
        // The key's row, locked: registrations of one key are serialised, so the
        // row count and the cap stay exact across nodes.
        const [key] = await tx`SELECT agents FROM api_keys WHERE id = ${keyId} FOR UPDATE`;
        const [current] = await tx`SELECT revoked_at FROM agents WHERE key_id = ${keyId} AND agent_id = ${agentId}`;
        if (current && current.revoked_at === null) return "exists";
        if (quota && quota.limit > 0) {
          const [row] = await tx`
          INSERT INTO agent_rate_windows (key_id, window_start, count) VALUES (${keyId}, ${quota.windowStart}, 1)
          ON CONFLICT (key_id, window_start) DO UPDATE SET count = agent_rate_windows.count + 1
          RETURNING count`;
          // Returning (not throwing) commits the count, as for challenges.
          const current = Number(row.count);
          const weight = quota.previousWeight ?? 0;
          let previous = 0;
          if (weight > 0) {
            const [before] = await tx`SELECT count FROM agent_rate_windows WHERE key_id = ${keyId} AND window_start = ${quota.windowStart - MINUTE_MS}`;
            previous = Number(before?.count ?? 0);
          }
          if (current + carriedCount(previous, weight) > quota.limit) return { outcome: "rate_limited", previous, current };
        }
        if (!current) {
          if (quota && quota.maxAgents > 0 && Number(key?.agents ?? 0) >= quota.maxAgents) return "too_many_agents";
          await tx`UPDATE api_keys SET agents = agents + 1 WHERE id = ${keyId}`;
        }
        // An active agent stays as it is; a revoked one is registered afresh.
        await tx`
        INSERT INTO agents (key_id, agent_id, identity_commitment, signing_key, signing_key_id, created_at, revoked_at, principal_key, mandate, mandate_jws, mandate_iat)
        VALUES (${keyId}, ${agentId}, ${identityCommitment}, ${signingKey}, ${signingKeyId}, ${createdAt}, NULL, ${principalKey}, ${mandate}, ${mandateJws}, ${mandateIat})
        ON CONFLICT (key_id, agent_id) DO UPDATE SET
          identity_commitment = excluded.identity_commitment, signing_key = excluded.signing_key, signing_key_id = excluded.signing_key_id,
          created_at = excluded.created_at, revoked_at = NULL, principal_key = excluded.principal_key,
          mandate = excluded.mandate, mandate_jws = excluded.mandate_jws, mandate_iat = excluded.mandate_iat
        WHERE agents.revoked_at IS NOT NULL`;
        return "created";
      });
    },

    async getAgent(keyId: string, agentId: string): Promise<AgentRecord | null> {
      if (hasNul(keyId, agentId)) return null;
      const [row] = await sql`SELECT * FROM agents WHERE key_id = ${keyId} AND agent_id = ${agentId}`;
      return row ? toAgent(row) : null;
    },

    async agentsBySigningKeyId(keyId: string, signingKeyId: string, limit: number): Promise<AgentRecord[]> {
      if (hasNul(keyId, signingKeyId)) return [];
      const rows = await sql`
      SELECT * FROM agents WHERE key_id = ${keyId} AND signing_key_id = ${signingKeyId} ORDER BY created_at, agent_id LIMIT ${limit}`;
      return rows.map(toAgent);
    },

    async agentsMissingSigningKeyId(limit: number): Promise<AgentRecord[]> {
      const rows = await sql`SELECT * FROM agents WHERE signing_key IS NOT NULL AND signing_key_id IS NULL LIMIT ${limit}`;
      return rows.map(toAgent);
    },

    async setSigningKeyId(keyId: string, agentId: string, signingKey: string, signingKeyId: string): Promise<boolean> {
      const rows = await sql`
      UPDATE agents SET signing_key_id = ${signingKeyId} WHERE key_id = ${keyId} AND agent_id = ${agentId} AND signing_key = ${signingKey} RETURNING agent_id`;
      return rows.length > 0;
    },

    async revokeAgent(keyId: string, agentId: string, at: number): Promise<AgentRecord | null> {
      if (hasNul(keyId, agentId)) return null;
      const [row] = await sql`
      UPDATE agents SET revoked_at = ${at}
      WHERE key_id = ${keyId} AND agent_id = ${agentId} AND revoked_at IS NULL RETURNING *`;
      return row ? toAgent(row) : null;
    },

    async setMandate(keyId: string, agentId: string, mandate: StoredMandate | null): Promise<SetMandateResult> {
      if (hasNul(keyId, agentId)) return { outcome: "not_found", agent: null };
      const { mandate: text = null, mandateJws = null, mandateIat = null } = mandate ?? {};
      // One conditional statement, so a concurrent replacement cannot slip an
      // older signed mandate (lower iat) in after a newer one.
      const [row] = await sql`
      UPDATE agents SET mandate = ${text}, mandate_jws = ${mandateJws}, mandate_iat = ${mandateIat}
      WHERE key_id = ${keyId} AND agent_id = ${agentId} AND revoked_at IS NULL
        AND (principal_key IS NULL OR ${mandateJws}::text IS NOT NULL)
        AND (${mandateIat}::bigint IS NULL OR mandate_iat IS NULL OR mandate_iat < ${mandateIat}::bigint OR mandate_jws = ${mandateJws}::text)
      RETURNING *`;
      if (row) return { outcome: "set", agent: toAgent(row) };
      return setMandateRefusal(await store.getAgent(keyId, agentId), mandate);
    },

    async readSpend(keyId: string, agentId: string, keys: readonly SpendKey[]): Promise<Spend[]> {
      const spend: Spend[] = [];
      for (const key of keys) {
        // A scope with NUL names no row (a mandate stored before issue 18 refused it): nothing spent, as on SQLite.
        if (hasNul(keyId, agentId, key.action, key.currency)) {
          spend.push(NO_SPEND);
          continue;
        }
        const [row] = await sql`
        SELECT total, count FROM mandate_spend
        WHERE key_id = ${keyId} AND agent_id = ${agentId} AND action = ${key.action} AND currency = ${key.currency}
          AND period = ${key.period} AND period_start = ${key.periodStart}`;
        spend.push(row ? toSpend(row) : NO_SPEND);
      }
      return spend;
    },
  };
  return mapUnreachable(store);
}
