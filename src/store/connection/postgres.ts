// The PostgreSQL pool every aggregate's postgres.ts shares, its migration,
// and the one place "the database cannot be reached" becomes
// StoreUnavailableError (503 at the HTTP layer).
//
// Several service processes on several hosts share one database, so every
// guarantee lives in a single statement or transaction on the server, never in
// this process: one-time use is one conditional UPDATE (PostgreSQL's row lock
// makes concurrent updaters of the same row wait and then re-check the WHERE
// against the committed row, so exactly one matches); rate windows and
// counters are atomic increments. Behaviour mirrors the SQLite files exactly;
// the same contract suite (test/store/contract.ts) runs against both.
import { SQL } from "bun";
import { migratePostgres } from "../migrations/postgres";
import { StoreUnavailableError } from "../unavailable";

export interface PostgresOptions {
  /** Connections in this process's pool. */
  poolSize?: number;
  /** How long a replaced group root stays acceptable (default DEFAULT_ROOT_DURATION_MS, src/groups/roots.ts). */
  groupRootDurationMs?: number;
}

export const DEFAULT_POOL_SIZE = 10;
const CONNECT_TIMEOUT_S = 5;

/**
 * Whether an error means "the database cannot be reached" rather than "this
 * query is wrong": the client's connection errors (refused, closed, timed
 * out), and the server's SQLSTATE classes 08 (connection exception), 57P01–03
 * (shutting down, cannot connect now), 53300 (too many connections), and
 * those refusing a new connection: 3D000 (the database is gone), 28xxx
 * (authorization).
 */
export function isConnectionFailure(error: unknown): boolean {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  if (typeof code === "string" && /^ERR_POSTGRES_(CONNECTION_|IDLE_TIMEOUT|LIFETIME_TIMEOUT|TLS)/.test(code)) return true;
  if (typeof code === "string" && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH)$/.test(code)) return true;
  const state = typeof errno === "string" ? errno : "";
  return (
    state.startsWith("08") || state.startsWith("28") || state === "57P01" || state === "57P02" || state === "57P03" || state === "53300" || state === "3D000"
  );
}

/**
 * PostgreSQL TEXT cannot hold U+0000; a query naming one fails with
 * "invalid byte sequence" (22021). An identifier with NUL names no row, so
 * lookups answer "none" without asking, as SQLite's do.
 */
export const hasNul = (...texts: string[]) => texts.some((text) => text.includes("\0"));

/** Usage shard rows per key: concurrent writers of one key pick different rows (migration 4). */
export const USAGE_SHARDS = 16;
export const usageShard = (): number => Math.floor(Math.random() * USAGE_SHARDS);

/** The pool, migrated; closed again when the migration fails. */
export async function openPostgresSql(url: string, options: PostgresOptions = {}): Promise<SQL> {
  const sql = new SQL(url, {
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    // Bun prefers PGDATABASE from the environment over the database named in
    // the URL; the URL is the configuration, so pass its database explicitly.
    ...databaseFromUrl(url),
    // int8 columns come back as strings (bigint: false); each aggregate's rows.ts maps them
    // with Number(), exact for millisecond times and realistic counters.
    bigint: false,
    // An unreachable server (not a refusing one) must not hold a request for
    // Bun's default 30 s: after this the query fails, and the caller gets 503.
    connectionTimeout: CONNECT_TIMEOUT_S,
  });
  try {
    await migratePostgres(sql);
  } catch (error) {
    await sql.close({ timeout: 0 });
    throw error;
  }
  return sql;
}

function databaseFromUrl(url: string): { database?: string } {
  try {
    const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));
    return name ? { database: name } : {};
  } catch {
    return {};
  }
}

/**
 * Every method of an aggregate maps "the database cannot be reached" to
 * StoreUnavailableError, here rather than in each method. Other errors pass
 * through unchanged.
 */
export function mapUnreachable<T extends object>(methods: T): T {
  const mapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(methods)) {
    mapped[name] =
      typeof method !== "function"
        ? method
        : async (...args: unknown[]) => {
            try {
              return await method.apply(methods, args);
            } catch (error) {
              if (isConnectionFailure(error)) throw new StoreUnavailableError(`PostgreSQL unreachable: ${(error as Error).message}`, { cause: error });
              throw error;
            }
          };
  }
  return mapped as T;
}
