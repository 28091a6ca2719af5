// Rows (snake_case columns, as both dialects return them) to records.
import type { BudgetChallenge, ChallengeRecord, DecisionEvidence, StoredStatus } from "./records";
import { int, intOrNull } from "../connection/columns";

export const toChallenge = (row: any): ChallengeRecord => ({
  id: row.id,
  keyId: row.key_id,
  agentId: row.agent_id,
  action: row.action,
  context: row.context ?? null,
  nonce: row.nonce,
  createdAt: int(row.created_at),
  expiresAt: int(row.expires_at),
  status: row.status as StoredStatus,
  decidedAt: intOrNull(row.decided_at),
  confidence: row.confidence === null || row.confidence === undefined ? null : Number(row.confidence),
  reason: row.reason ?? null,
  evidence: row.evidence ? (JSON.parse(row.evidence) as DecisionEvidence) : null,
  receipt: row.receipt ?? null,
  // Absent rather than null when unset, so records built without it compare equal.
  ...(row.circuit_id ? { circuitId: row.circuit_id as string } : {}),
  ...(row.group_id ? { groupId: row.group_id as string, groupRoot: row.group_root as string, groupDepth: int(row.group_depth) } : {}),
  ...(row.budget ? { budget: JSON.parse(row.budget) as BudgetChallenge } : {}),
});

/** The budget column's text: JSON, or NULL for a challenge that is no budget spend. */
export const budgetText = (budget: BudgetChallenge | null | undefined): string | null => (budget ? JSON.stringify(budget) : null);

/** The evidence column's text: JSON, or NULL when the decision carries none. */
export const evidenceText = (evidence: DecisionEvidence | null | undefined): string | null => (evidence ? JSON.stringify(evidence) : null);
