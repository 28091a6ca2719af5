// Picks the store from the configured database URL: a postgres:// or
// postgresql:// URL selects PostgreSQL (multi-node); anything else is the path
// of a SQLite file, or ":memory:" (the embedded default).
import type { Store } from "./interface";
import { openPostgres } from "./postgres";
import { openSqlite } from "./sqlite";

export type { Store } from "./interface";

export interface OpenStoreOptions {
  /** SQLite only: FULL also survives power loss, at some write throughput. */
  sqliteSynchronous?: "NORMAL" | "FULL";
  /** PostgreSQL only: connections in this process's pool. */
  postgresPoolSize?: number;
  /** How long a replaced group root stays acceptable (GROUP_ROOT_DURATION_S; default one hour). */
  groupRootDurationMs?: number;
}

export const isPostgresUrl = (databaseUrl: string): boolean => /^postgres(ql)?:\/\//i.test(databaseUrl);

export async function openStore(databaseUrl: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (isPostgresUrl(databaseUrl)) return openPostgres(databaseUrl, { poolSize: options.postgresPoolSize, groupRootDurationMs: options.groupRootDurationMs });
  return openSqlite(databaseUrl, { synchronous: options.sqliteSynchronous ?? "NORMAL", groupRootDurationMs: options.groupRootDurationMs });
}
