// Rows (snake_case columns, as both dialects return them) to records.
import type { AuditEntry } from "./records";
import { int } from "../connection/columns";

export const toAudit = (row: any): AuditEntry => ({
  seq: int(row.seq),
  at: int(row.at),
  keyId: row.key_id,
  event: row.event,
  sessionId: row.session_id,
  agentId: row.agent_id,
  action: row.action,
  result: row.result,
  reason: row.reason ?? null,
  requestId: row.request_id ?? null,
  groupId: row.group_id ?? null,
  commitment: row.commitment ?? null,
});
