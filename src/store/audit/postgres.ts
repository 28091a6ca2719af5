// The audit trail on PostgreSQL: triggers write it; this reads and purges it.
import type { SQL } from "bun";
import { mapUnreachable } from "../connection/postgres";
import { toAudit } from "./rows";
import type { AuditEntry, AuditQuery, AuditStore } from "./records";

export function postgresAudit(sql: SQL): AuditStore {
  const store: AuditStore = {
    async listAudit(query: AuditQuery): Promise<AuditEntry[]> {
      const afterSeq = query.afterSeq ?? 0;
      const rows =
        query.keyId === undefined
          ? await sql`SELECT * FROM audit_log WHERE seq > ${afterSeq} ORDER BY seq LIMIT ${query.limit}`
          : await sql`SELECT * FROM audit_log WHERE seq > ${afterSeq} AND key_id = ${query.keyId} ORDER BY seq LIMIT ${query.limit}`;
      return rows.map(toAudit);
    },

    async purgeAudit(before: number): Promise<number> {
      return sql.begin(async (tx) => {
        // Transaction-local: the gate closes with COMMIT, whatever happens.
        await tx`SELECT set_config('zkagent.audit_purge_before', ${String(before)}, true)`;
        return (await tx`DELETE FROM audit_log WHERE at < ${before}`).count;
      });
    },
  };
  return mapUnreachable(store);
}
