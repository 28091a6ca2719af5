// Idempotency-Key reservations on PostgreSQL.
import type { SQL } from "bun";
import { mapUnreachable } from "../connection/postgres";
import { heldIdempotency } from "./rows";
import type { IdempotencyState, IdempotencyStore } from "./records";

export function postgresIdempotency(sql: SQL): IdempotencyStore {
  const store: IdempotencyStore = {
    async reserveIdempotency(keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number): Promise<IdempotencyState> {
      // One statement decides who holds the key: insert, or take over a stale
      // unfinished reservation with the same fingerprint.
      const [won] = await sql`
      INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, status, body, created_at)
      VALUES (${keyId}, ${idemKey}, ${fingerprint}, NULL, NULL, ${now})
      ON CONFLICT (key_id, idem_key) DO UPDATE SET created_at = EXCLUDED.created_at
      WHERE idempotency_keys.status IS NULL AND idempotency_keys.fingerprint = EXCLUDED.fingerprint
        AND idempotency_keys.created_at < ${staleBefore}
      RETURNING 1 AS ok`;
      if (won) return { state: "new" };
      const [row] = await sql`SELECT * FROM idempotency_keys WHERE key_id = ${keyId} AND idem_key = ${idemKey}`;
      return row ? heldIdempotency(row, fingerprint) : store.reserveIdempotency(keyId, idemKey, fingerprint, now, staleBefore);
    },

    async completeIdempotency(keyId: string, idemKey: string, status: number, body: string): Promise<void> {
      await sql`UPDATE idempotency_keys SET status = ${status}, body = ${body} WHERE key_id = ${keyId} AND idem_key = ${idemKey}`;
    },

    async releaseIdempotency(keyId: string, idemKey: string): Promise<void> {
      await sql`DELETE FROM idempotency_keys WHERE key_id = ${keyId} AND idem_key = ${idemKey} AND status IS NULL`;
    },

    async purgeIdempotency(before: number): Promise<number> {
      return (await sql`DELETE FROM idempotency_keys WHERE created_at < ${before}`).count;
    },
  };
  return mapUnreachable(store);
}
