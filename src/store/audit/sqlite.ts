// The audit trail on SQLite: triggers write it; this reads and purges it.
import type { SqliteDb } from "../connection/sqlite";
import { toAudit } from "./rows";
import type { AuditEntry, AuditQuery, AuditStore } from "./records";

export function sqliteAudit({ db, immediate }: SqliteDb): AuditStore {
  const q = {
    openAuditGate: db.query("UPDATE audit_purge_gate SET before = ? WHERE id = 1"),
    purgeAudit: db.query("DELETE FROM audit_log WHERE at < ?"),
    audit: db.query(`SELECT * FROM audit_log WHERE seq > $afterSeq AND ($keyId IS NULL OR key_id = $keyId) ORDER BY seq LIMIT $limit`),
  };
  return {
    async listAudit(query: AuditQuery): Promise<AuditEntry[]> {
      return q.audit.all({ afterSeq: query.afterSeq ?? 0, keyId: query.keyId ?? null, limit: query.limit }).map(toAudit);
    },

    async purgeAudit(before: number): Promise<number> {
      return immediate("purge audit", () => {
        // Open the gate for rows older than `before`, delete, close it again — one transaction.
        q.openAuditGate.run(before);
        const removed = q.purgeAudit.run(before).changes;
        q.openAuditGate.run(0);
        return removed;
      });
    },
  };
}
