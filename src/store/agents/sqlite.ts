// Agents on SQLite: registration under the key's agent quota (its window and
// row count, in the registration's transaction), signing key ids, mandates.
import type { StoredMandate } from "../../mandates/enforce";
import { NO_SPEND, type Spend, type SpendKey } from "../../mandates/evaluate";
import { carriedCount, MINUTE_MS } from "../../sliding-window";
import type { SqliteDb } from "../connection/sqlite";
import { setMandateRefusal, toAgent, toSpend } from "./rows";
import type { AgentQuota, AgentRecord, AgentsStore, RegisterAgentResult, SetMandateResult } from "./records";

export function sqliteAgents({ db, immediate }: SqliteDb): AgentsStore {
  const q = {
    insertAgent: db.query(
      `INSERT INTO agents (key_id, agent_id, identity_commitment, signing_key, signing_key_id, created_at, revoked_at, principal_key, mandate, mandate_jws, mandate_iat)
       VALUES ($keyId, $agentId, $identityCommitment, $signingKey, $signingKeyId, $createdAt, NULL, $principalKey, $mandate, $mandateJws, $mandateIat)
       ON CONFLICT (key_id, agent_id) DO UPDATE SET
         identity_commitment = excluded.identity_commitment, signing_key = excluded.signing_key, signing_key_id = excluded.signing_key_id,
         created_at = excluded.created_at, revoked_at = NULL, principal_key = excluded.principal_key,
         mandate = excluded.mandate, mandate_jws = excluded.mandate_jws, mandate_iat = excluded.mandate_iat
       WHERE agents.revoked_at IS NOT NULL`,
    ),
    setMandate: db.query(
      `UPDATE agents SET mandate = $mandate, mandate_jws = $mandateJws, mandate_iat = $mandateIat
       WHERE key_id = $keyId AND agent_id = $agentId AND revoked_at IS NULL
         AND (principal_key IS NULL OR $mandateJws IS NOT NULL)
         AND ($mandateIat IS NULL OR mandate_iat IS NULL OR mandate_iat < $mandateIat OR mandate_jws = $mandateJws)
       RETURNING *`,
    ),
    getSpend: db.query(
      `SELECT total, count FROM mandate_spend
       WHERE key_id = $keyId AND agent_id = $agentId AND action = $action AND currency = $currency AND period = $period AND period_start = $periodStart`,
    ),
    getAgent: db.query("SELECT * FROM agents WHERE key_id = ? AND agent_id = ?"),
    agentsBySigningKeyId: db.query("SELECT * FROM agents WHERE key_id = ? AND signing_key_id = ? ORDER BY created_at, agent_id LIMIT ?"),
    agentsMissingSigningKeyId: db.query("SELECT * FROM agents WHERE signing_key IS NOT NULL AND signing_key_id IS NULL LIMIT ?"),
    setSigningKeyId: db.query("UPDATE agents SET signing_key_id = ? WHERE key_id = ? AND agent_id = ? AND signing_key = ?"),
    revokeAgent: db.query("UPDATE agents SET revoked_at = ? WHERE key_id = ? AND agent_id = ? AND revoked_at IS NULL RETURNING *"),
    countAgentWindow: db.query(
      `INSERT INTO agent_rate_windows (key_id, window_start, count) VALUES (?, ?, 1)
       ON CONFLICT (key_id, window_start) DO UPDATE SET count = count + 1 RETURNING count`,
    ),
    agentWindow: db.query("SELECT count FROM agent_rate_windows WHERE key_id = ? AND window_start = ?"),
    agentRows: db.query("SELECT agents FROM api_keys WHERE id = ?"),
    countAgentRow: db.query("UPDATE api_keys SET agents = agents + 1 WHERE id = ?"),
  };

  const spendRow = (keyId: string, agentId: string, key: SpendKey): Spend => {
    const row = q.getSpend.get({ keyId, agentId, ...key });
    return row ? toSpend(row) : NO_SPEND;
  };

  return {
    async registerAgent(agent: AgentRecord, quota?: AgentQuota): Promise<RegisterAgentResult> {
      return immediate("register agent", (): RegisterAgentResult => {
        const { keyId, agentId, identityCommitment, signingKey, createdAt } = agent;
        const current = q.getAgent.get(keyId, agentId) as { revoked_at: number | null } | null;
        if (current && current.revoked_at === null) return "exists";
        if (quota && quota.limit > 0) {
          // Committed even when refused: a refused attempt holds its place in the window.
          const current = (q.countAgentWindow.get(keyId, quota.windowStart) as { count: number }).count;
          const weight = quota.previousWeight ?? 0;
          const previous = weight > 0 ? ((q.agentWindow.get(keyId, quota.windowStart - MINUTE_MS) as { count: number } | null)?.count ?? 0) : 0;
          if (current + carriedCount(previous, weight) > quota.limit) return { outcome: "rate_limited", previous, current };
        }
        if (!current) {
          const rows = (q.agentRows.get(keyId) as { agents: number } | null)?.agents ?? 0;
          if (quota && quota.maxAgents > 0 && rows >= quota.maxAgents) return "too_many_agents";
          q.countAgentRow.run(keyId);
        }
        const mandate = {
          principalKey: agent.principalKey ?? null,
          mandate: agent.mandate ?? null,
          mandateJws: agent.mandateJws ?? null,
          mandateIat: agent.mandateIat ?? null,
        };
        q.insertAgent.run({ keyId, agentId, identityCommitment, signingKey, signingKeyId: agent.signingKeyId ?? null, createdAt, ...mandate });
        return "created";
      });
    },

    async getAgent(keyId: string, agentId: string): Promise<AgentRecord | null> {
      const row = q.getAgent.get(keyId, agentId);
      return row ? toAgent(row) : null;
    },

    async agentsBySigningKeyId(keyId: string, signingKeyId: string, limit: number): Promise<AgentRecord[]> {
      return q.agentsBySigningKeyId.all(keyId, signingKeyId, limit).map(toAgent);
    },

    async agentsMissingSigningKeyId(limit: number): Promise<AgentRecord[]> {
      return q.agentsMissingSigningKeyId.all(limit).map(toAgent);
    },

    async setSigningKeyId(keyId: string, agentId: string, signingKey: string, signingKeyId: string): Promise<boolean> {
      return immediate("set signing key id", () => q.setSigningKeyId.run(signingKeyId, keyId, agentId, signingKey).changes > 0);
    },

    async revokeAgent(keyId: string, agentId: string, at: number): Promise<AgentRecord | null> {
      const row = await immediate("revoke agent", () => q.revokeAgent.get(at, keyId, agentId));
      return row ? toAgent(row) : null;
    },

    async setMandate(keyId: string, agentId: string, mandate: StoredMandate | null): Promise<SetMandateResult> {
      const { mandate: text = null, mandateJws = null, mandateIat = null } = mandate ?? {};
      // On the HTTP path: waits for another process's lock on timers, like every server write.
      return immediate("set mandate", (): SetMandateResult => {
        const row = q.setMandate.get({ keyId, agentId, mandate: text, mandateJws, mandateIat });
        if (row) return { outcome: "set", agent: toAgent(row) };
        const current = q.getAgent.get(keyId, agentId);
        return setMandateRefusal(current ? toAgent(current) : null, mandate);
      });
    },

    async readSpend(keyId: string, agentId: string, keys: readonly SpendKey[]): Promise<Spend[]> {
      return keys.map((key) => spendRow(keyId, agentId, key));
    },
  };
}
