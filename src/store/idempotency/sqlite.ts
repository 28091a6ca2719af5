// Idempotency-Key reservations on SQLite.
import type { SqliteDb } from "../connection/sqlite";
import { heldIdempotency } from "./rows";
import type { IdempotencyState, IdempotencyStore } from "./records";

export function sqliteIdempotency({ db, immediate }: SqliteDb): IdempotencyStore {
  const q = {
    reserveIdem: db.query(
      `INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, status, body, created_at) VALUES (?, ?, ?, NULL, NULL, ?)
       ON CONFLICT (key_id, idem_key) DO NOTHING`,
    ),
    getIdem: db.query("SELECT * FROM idempotency_keys WHERE key_id = ? AND idem_key = ?"),
    takeOverIdem: db.query(
      `UPDATE idempotency_keys SET created_at = ? WHERE key_id = ? AND idem_key = ? AND fingerprint = ? AND status IS NULL AND created_at < ?`,
    ),
    completeIdem: db.query("UPDATE idempotency_keys SET status = ?, body = ? WHERE key_id = ? AND idem_key = ?"),
    releaseIdem: db.query("DELETE FROM idempotency_keys WHERE key_id = ? AND idem_key = ? AND status IS NULL"),
    purgeIdem: db.query("DELETE FROM idempotency_keys WHERE created_at < ?"),
  };

  const reserveTx = (keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number): IdempotencyState => {
    if (q.reserveIdem.run(keyId, idemKey, fingerprint, now).changes === 1) return { state: "new" };
    if (q.takeOverIdem.run(now, keyId, idemKey, fingerprint, staleBefore).changes === 1) return { state: "new" };
    return heldIdempotency(q.getIdem.get(keyId, idemKey), fingerprint);
  };

  return {
    async reserveIdempotency(keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number): Promise<IdempotencyState> {
      return immediate("reserve idempotency key", () => reserveTx(keyId, idemKey, fingerprint, now, staleBefore));
    },

    async completeIdempotency(keyId: string, idemKey: string, status: number, body: string): Promise<void> {
      await immediate("complete idempotency key", () => q.completeIdem.run(status, body, keyId, idemKey));
    },

    async releaseIdempotency(keyId: string, idemKey: string): Promise<void> {
      await immediate("release idempotency key", () => q.releaseIdem.run(keyId, idemKey));
    },

    async purgeIdempotency(before: number): Promise<number> {
      return immediate("purge idempotency keys", () => q.purgeIdem.run(before).changes);
    },
  };
}
