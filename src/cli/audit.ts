import type { Config } from "../config";
import { openStore } from "../store";
import { nonNegativeInteger, parse, printJson, say } from "./args";

export const auditHelp = `zkagent audit [--key ID] [--after SEQ] [--limit N]
  Exports the append-only audit trail as JSON lines on stdout, oldest first:
  every challenge created and every verification decided, with key id, agent,
  action, result, reason, request id and time; every group member added or
  removed, with key id, group id, commitment, request id and time. API keys and secrets are never
  in it. Page with --after (the last "seq" seen); --limit defaults to all.`;

const PAGE = 1000;

export async function auditCommand(argv: string[], config: Config): Promise<number> {
  const { values } = parse(argv, { key: { type: "string" }, after: { type: "string" }, limit: { type: "string" } });
  if (values.help) return (say(auditHelp), 0);
  let afterSeq = nonNegativeInteger(values.after, "after") ?? 0;
  let remaining = nonNegativeInteger(values.limit, "limit") ?? Number.POSITIVE_INFINITY;
  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  try {
    while (remaining > 0) {
      const entries = await store.listAudit({ afterSeq, keyId: values.key, limit: Math.min(PAGE, remaining) });
      for (const entry of entries) {
        // Agent ids and actions are the API callers' text: printJson escapes what JSON leaves raw (C1 controls).
        printJson({
          seq: entry.seq,
          time: new Date(entry.at).toISOString(),
          event: entry.event,
          key_id: entry.keyId,
          session_id: entry.sessionId,
          agent_id: entry.agentId,
          action: entry.action,
          result: entry.result,
          reason: entry.reason,
          request_id: entry.requestId,
          ...(entry.groupId === null ? {} : { group_id: entry.groupId, commitment: entry.commitment }),
        });
      }
      if (entries.length === 0) break;
      afterSeq = entries.at(-1)!.seq;
      remaining -= entries.length;
    }
    return 0;
  } finally {
    await store.close();
  }
}
