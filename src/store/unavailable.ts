// The one failure both stores name: the database cannot be reached.
/**
 * The database cannot be reached (PostgreSQL down, connection refused or
 * closed), or another process holds SQLite's write lock past the bounded
 * wait. Both stores throw this and only this for such failures, so the HTTP
 * layer can answer 503 (and a retry may succeed) instead of 500.
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
