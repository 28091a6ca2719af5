// The embedded default: one SQLite file (connection/sqlite.ts), each
// aggregate's SQL in its folder, composed into one Store.
import { DEFAULT_ROOT_DURATION_MS } from "../groups/roots";
import type { Store } from "./interface";
import { sqliteAgents } from "./agents/sqlite";
import { sqliteBudgets } from "./budgets/sqlite";
import { sqliteAudit } from "./audit/sqlite";
import { sqliteChallenges } from "./challenges/sqlite";
import { sqliteCircuits } from "./circuits/sqlite";
import { openSqliteDb, type SqliteOptions } from "./connection/sqlite";
import { sqliteDecisions } from "./decisions/sqlite";
import { sqliteGroups } from "./groups/sqlite";
import { sqliteIdempotency } from "./idempotency/sqlite";
import { sqliteKeys } from "./keys/sqlite";
import { sqliteSigningKeys } from "./signing-keys/sqlite";
import { sqliteWebhooks } from "./webhooks/sqlite";

export { LOCK_WAIT_MS, type SqliteOptions } from "./connection/sqlite";

export type SqliteStore = Store & { readonly kind: "sqlite" };

export function openSqlite(path: string, options: SqliteOptions = {}): SqliteStore {
  const connection = openSqliteDb(path, options);
  const rootDurationMs = options.groupRootDurationMs ?? DEFAULT_ROOT_DURATION_MS;
  const { flushOnClose, ...challenges } = sqliteChallenges(connection);
  return {
    kind: "sqlite",
    ...sqliteKeys(connection),
    ...sqliteAgents(connection),
    ...challenges,
    ...sqliteDecisions(connection, rootDurationMs),
    ...sqliteAudit(connection),
    ...sqliteSigningKeys(connection),
    ...sqliteCircuits(connection),
    ...sqliteIdempotency(connection),
    ...sqliteGroups(connection, rootDurationMs),
    ...sqliteBudgets(connection),
    ...sqliteWebhooks(connection),

    async ping(): Promise<void> {
      connection.db.query("SELECT 1").get();
    },

    async close(): Promise<void> {
      flushOnClose(); // creations already accepted are committed, not dropped
      connection.db.close(false);
    },
  };
}
