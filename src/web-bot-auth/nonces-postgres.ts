// A NonceStore on PostgreSQL, for merchants whose processes already share a
// database: one UNLOGGED table (no write-ahead log: a nonce store lost in a
// crash costs at most the replays of signatures still in their windows, and
// the store is written on every signed request), one statement per nonce,
//
//   INSERT INTO <table> (key, expires_at) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING 1
//
// atomic on the server (a row returned: the first claim; none: a replay),
// and rows past their expiry deleted now and then (at most once every
// `purgeEverySeconds`, after a claim, not on its path). A key is a nonce's
// digest, never claimed again once expired (a new signature has a new
// nonce), so an expired row not yet purged refuses nothing honest.
//
// It takes the client the merchant already has, so @zkagent/merchant
// depends on none: Bun's SQL or postgres.js (sql.unsafe(text, params)), or
// node-postgres (pool.query(text, params)). Fails closed: an error or no
// answer within `timeoutMs` throws NonceStoreUnavailable (503, Retry-After).
import { type NonceStore, NonceStoreUnavailable, withTimeout } from "./nonces";

/** Any of the clients above: a parameterised query. */
export type PostgresQueryClient =
  | { unsafe(text: string, params?: unknown[]): PromiseLike<unknown> }
  | { query(text: string, params?: unknown[]): Promise<unknown> };

export interface PostgresNonceStoreOptions {
  /** The table (created when missing). Default zkagent_wba_nonces. */
  table?: string;
  /** How long a claim may take before it is refused, ms. Default 2 000. */
  timeoutMs?: number;
  /** The least time between two purges of expired rows, s. Default 60. */
  purgeEverySeconds?: number;
  /** Unix seconds (tests). */
  now?: () => number;
}

/** The rows a query answered, whichever client ran it (an array, or node-postgres's { rows }). */
function rowsOf(result: unknown): unknown[] {
  if (Array.isArray(result)) return result;
  const rows = (result as { rows?: unknown } | null)?.rows;
  if (Array.isArray(rows)) return rows;
  throw new NonceStoreUnavailable("the PostgreSQL client answered no rows");
}

export class PostgresNonceStore implements NonceStore {
  private readonly run: (text: string, params: unknown[]) => Promise<unknown[]>;
  private readonly table: string;
  private readonly timeoutMs: number;
  private readonly purgeEvery: number;
  private readonly now: () => number;
  private ready: Promise<void> | null = null;
  private lastPurge = 0;

  constructor(client: PostgresQueryClient, options: PostgresNonceStoreOptions = {}) {
    this.table = options.table ?? "zkagent_wba_nonces";
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(this.table)) throw new TypeError(`PostgresNonceStore: table must be a lower-case SQL identifier, not ${this.table}`);
    if ("unsafe" in client && typeof client.unsafe === "function") this.run = async (text, params) => rowsOf(await client.unsafe(text, params));
    else if ("query" in client && typeof client.query === "function") this.run = async (text, params) => rowsOf(await client.query(text, params));
    else throw new TypeError("PostgresNonceStore needs a PostgreSQL client: Bun's SQL or postgres.js (unsafe), or node-postgres (query)");
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.purgeEvery = options.purgeEverySeconds ?? 60;
    this.now = options.now ?? (() => Date.now() / 1000);
  }

  /** Creates the table when missing; claim() does it first when not called. */
  init(): Promise<void> {
    const create = () => this.run(`CREATE UNLOGGED TABLE IF NOT EXISTS ${this.table} (key text PRIMARY KEY, expires_at bigint NOT NULL)`, []);
    // Two processes creating the table at once: one of them may fail on the catalog's unique index; the table then exists, and a second try sees it.
    this.ready ??= create()
      .catch(create)
      .then(
        () => {},
        (error) => {
          this.ready = null; // try again on the next claim
          throw error;
        },
      );
    return this.ready;
  }

  async claim(key: string, expiresAt: number): Promise<boolean> {
    let rows: unknown[];
    try {
      rows = await withTimeout(
        (async () => {
          await this.init();
          return this.run(`INSERT INTO ${this.table} (key, expires_at) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING 1`, [key, Math.ceil(expiresAt)]);
        })(),
        this.timeoutMs,
        "the PostgreSQL nonce store",
      );
    } catch (error) {
      if (error instanceof NonceStoreUnavailable) throw error;
      throw new NonceStoreUnavailable(`the PostgreSQL nonce store failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.purgeNowAndThen();
    return rows.length === 1;
  }

  /** Deletes expired rows, at most once every purgeEverySeconds; off the claim's path, its failure ignored (the next one retries). */
  private purgeNowAndThen(): void {
    const now = this.now();
    if (now - this.lastPurge < this.purgeEvery) return;
    this.lastPurge = now;
    this.run(`DELETE FROM ${this.table} WHERE expires_at < $1`, [Math.floor(now)]).catch(() => {});
  }

  /** Deletes expired rows now (tests, or a merchant's own schedule). */
  async purge(): Promise<number> {
    const rows = await this.run(`DELETE FROM ${this.table} WHERE expires_at < $1 RETURNING 1`, [Math.floor(this.now())]);
    return rows.length;
  }
}
