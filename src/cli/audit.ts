import type { Config } from "../config";
import { openStore } from "../store";
import { nonNegativeInteger, parse, printJson, say } from "./args";

export const auditHelp = `zkagent audit [--key ID] [--after SEQ] [--limit N] [--json]
  Exports the append-only audit trail as JSON lines on stdout, oldest first:
  every challenge created and every verification decided, with key id, agent,
  action, result, reason, request id and time; every group member added or
  removed, with key id, group id, commitment, request id and time. API keys and secrets are never
  in it. Page with --after (the last "seq" seen); --limit defaults to all.
  --json: one JSON object instead, {"entries": [...], "last_seq": N|null}
  (last_seq: the --after of the next page; null when there were none).`;

const PAGE = 1000;

export async function auditCommand(argv: string[], config: Config): Promise<number> {
  const { values } = parse(argv, { key: { type: "string" }, after: { type: "string" }, limit: { type: "string" }, json: { type: "boolean" } });
  if (values.help) return (say(auditHelp), 0);
  let afterSeq = nonNegativeInteger(values.after, "after") ?? 0;
  let remaining = nonNegativeInteger(values.limit, "limit") ?? Number.POSITIVE_INFINITY;
  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  // --json gathers the lines into one object; without it each is printed as its page arrives.
  const gathered: Record<string, unknown>[] | null = values.json ? [] : null;
  const emit = (line: Record<string, unknown>) => (gathered ? gathered.push(line) : printJson(line));
  try {
    while (remaining > 0) {
      const entries = await store.listAudit({ afterSeq, keyId: values.key, limit: Math.min(PAGE, remaining) });
      for (const entry of entries) {
        // Agent ids and actions are the API callers' text: printJson escapes what JSON leaves raw (C1 controls).
        emit({
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
    if (gathered) printJson({ entries: gathered, last_seq: gathered.length ? afterSeq : null });
    return 0;
  } finally {
    await store.close();
  }
}
