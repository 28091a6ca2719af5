// Idempotency-Key reservations and their stored responses.
// The types the domain sees and what it asks of this aggregate; sqlite.ts and
// postgres.ts beside this file answer it. Times are Unix milliseconds.

/**
 * What an Idempotency-Key names: nothing yet (`new`, now reserved for the
 * caller), a request still running, a finished one (replay its response), or
 * a different request under the same key (`mismatch`).
 */
export type IdempotencyState = { state: "new" } | { state: "in_progress" } | { state: "mismatch" } | { state: "done"; status: number; body: string };

export interface IdempotencyStore {
  /**
   * Reserves (keyId, idemKey) for a request with this fingerprint, or reports
   * what holds it. A reservation older than `staleBefore` that never completed
   * (its process died) is taken over.
   */
  reserveIdempotency(keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number): Promise<IdempotencyState>;

  completeIdempotency(keyId: string, idemKey: string, status: number, body: string): Promise<void>;

  /** Drops an unfinished reservation so the request can be retried (after a 429 or 5xx). */
  releaseIdempotency(keyId: string, idemKey: string): Promise<void>;

  /** Deletes idempotency records created before `before`. */
  purgeIdempotency(before: number): Promise<number>;
}
