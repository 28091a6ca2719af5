// Rows (snake_case columns, as both dialects return them) to records.
import type { Spend } from "../../mandates/evaluate";
import type { AgentRecord, SetMandateResult } from "./records";
import { int, intOrNull } from "../connection/columns";

export const toAgent = (row: any): AgentRecord => ({
  keyId: row.key_id,
  agentId: row.agent_id,
  identityCommitment: row.identity_commitment,
  signingKey: row.signing_key ?? null,
  signingKeyId: row.signing_key_id ?? null,
  createdAt: int(row.created_at),
  revokedAt: intOrNull(row.revoked_at),
  principalKey: row.principal_key ?? null,
  mandate: row.mandate ?? null,
  mandateJws: row.mandate_jws ?? null,
  mandateIat: intOrNull(row.mandate_iat),
});

export const toSpend = (row: any): Spend => ({ total: row.total, count: int(row.count) });

/** Why a conditional setMandate matched no row, judged from the agent as it now is. */
export function setMandateRefusal(agent: AgentRecord | null, mandate: { mandateJws: string | null } | null): SetMandateResult {
  if (!agent) return { outcome: "not_found", agent: null };
  if (agent.revokedAt !== null) return { outcome: "revoked", agent };
  if (agent.principalKey && (mandate === null || mandate.mandateJws === null)) return { outcome: "signature_required", agent };
  return { outcome: "superseded", agent };
}
