// The SQLite file every aggregate's sqlite.ts shares: one bun:sqlite
// connection in WAL mode, its migration, and how a server write takes the
// write lock without parking the event loop.
//
// synchronous=NORMAL in WAL mode makes every committed transaction survive a
// crash of the process (kill -9): the commit is in the WAL file before the
// call returns. Only a power loss can lose the last commits; set
// SQLITE_SYNCHRONOUS=FULL where that matters more than write throughput.
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { sqliteMigrations } from "../migrations/sqlite";
import { StoreUnavailableError } from "../unavailable";

export interface SqliteOptions {
  synchronous?: "NORMAL" | "FULL";
  /** How long a write waits for another process's lock before StoreUnavailableError (default LOCK_WAIT_MS). */
  lockWaitMs?: number;
  /** How long a replaced group root stays acceptable (default DEFAULT_ROOT_DURATION_MS, src/groups/roots.ts). */
  groupRootDurationMs?: number;
}

/** PRAGMA busy_timeout: for migration, reads during a WAL checkpoint, and the CLI. */
const BUSY_TIMEOUT_MS = 10_000;
/**
 * How long a server write waits for another process's write lock (a sqlite3
 * shell, a backup, the CLI) before giving up with StoreUnavailableError → 503.
 * It waits by retrying on timers, so the event loop keeps serving meanwhile.
 */
export const LOCK_WAIT_MS = 5_000;
const LOCK_RETRY_FIRST_MS = 1;
const LOCK_RETRY_MAX_MS = 25;

export const locked = (what: string, waitedMs: number) =>
  new StoreUnavailableError(`SQLite: another connection has held the write lock for ${waitedMs} ms (${what})`);

/** The open file and the write discipline the aggregates share. */
export interface SqliteDb {
  readonly db: Database;
  readonly lockWaitMs: number;
  /** BEGIN IMMEDIATE without waiting: false when another connection holds the write lock. */
  tryBeginImmediate(): boolean;
  /**
   * Runs `write` in a BEGIN IMMEDIATE transaction, waiting for another
   * process's write lock the way the group commit does: try without waiting,
   * and while it is taken, retry on a timer (1 ms doubling to 25 ms) so the
   * event loop keeps serving — /health answers, other requests proceed.
   * After lockWaitMs: StoreUnavailableError. `write` is synchronous, so no
   * other code of this process runs inside the transaction.
   */
  immediate<T>(what: string, write: () => T): Promise<T>;
}

export function openSqliteDb(path: string, options: SqliteOptions = {}): SqliteDb {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec(`PRAGMA synchronous = ${options.synchronous === "FULL" ? "FULL" : "NORMAL"}`);
  // Several processes (workers, the CLI next to a running server) share the
  // file. The CLI may wait in SQLite's busy handler; the server's writes never
  // do (see immediate() below), so this only covers migration and reads.
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.exec("PRAGMA foreign_keys = ON");
  migrate(db);
  const lockWaitMs = options.lockWaitMs ?? LOCK_WAIT_MS;

  const tryBeginImmediate = (): boolean => {
    db.exec("PRAGMA busy_timeout = 0");
    try {
      db.exec("BEGIN IMMEDIATE");
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === "SQLITE_BUSY") return false;
      throw error;
    } finally {
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  };

  const immediate = async <T>(what: string, write: () => T): Promise<T> => {
    const started = Date.now();
    let pause = LOCK_RETRY_FIRST_MS;
    while (!tryBeginImmediate()) {
      const waited = Date.now() - started;
      if (waited >= lockWaitMs) throw locked(what, waited);
      await Bun.sleep(Math.min(pause, lockWaitMs - waited));
      pause = Math.min(pause * 2, LOCK_RETRY_MAX_MS);
    }
    try {
      const result = write();
      db.exec("COMMIT");
      return result;
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw error;
    }
  };

  return { db, lockWaitMs, tryBeginImmediate, immediate };
}

function migrate(db: Database): void {
  // BEGIN IMMEDIATE: two processes starting at once must not both migrate.
  db.transaction(() => {
    const { user_version: applied } = db.query("PRAGMA user_version").get() as { user_version: number };
    for (let version = applied; version < sqliteMigrations.length; version++) db.exec(sqliteMigrations[version]!);
    if (applied < sqliteMigrations.length) db.exec(`PRAGMA user_version = ${sqliteMigrations.length}`);
  }).immediate();
}
