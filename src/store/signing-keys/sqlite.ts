// The receipts' signing keys on SQLite.
import type { SqliteDb } from "../connection/sqlite";
import { toSigningKey } from "./rows";
import type { SigningKeyRecord, SigningKeysStore } from "./records";

export function sqliteSigningKeys({ db, immediate }: SqliteDb): SigningKeysStore {
  const q = {
    insertSigningKey: db.query(
      `INSERT INTO signing_keys (kid, public_jwk, private_key, state, created_at, retired_at)
       VALUES ($kid, $publicJwk, $privateKey, $state, $createdAt, $retiredAt)`,
    ),
    insertFirstSigningKey: db.query(
      `INSERT INTO signing_keys (kid, public_jwk, private_key, state, created_at, retired_at)
       VALUES ($kid, $publicJwk, $privateKey, 'active', $createdAt, NULL) ON CONFLICT DO NOTHING`,
    ),
    activeSigningKey: db.query("SELECT * FROM signing_keys WHERE state = 'active'"),
    listSigningKeys: db.query("SELECT * FROM signing_keys ORDER BY created_at, kid"),
    getSigningKey: db.query("SELECT * FROM signing_keys WHERE kid = ?"),
    demoteActiveKey: db.query("UPDATE signing_keys SET state = 'published' WHERE state = 'active' RETURNING kid"),
    retireSigningKey: db.query("UPDATE signing_keys SET state = 'retired', retired_at = ? WHERE kid = ? AND state = 'published'"),
  };

  const rotate = db.transaction((next: SigningKeyRecord): string | null => {
    const previous = q.demoteActiveKey.get() as { kid: string } | null;
    q.insertSigningKey.run({ ...next, state: "active", retiredAt: null });
    return previous?.kid ?? null;
  });

  return {
    async ensureSigningKey(candidate: SigningKeyRecord): Promise<SigningKeyRecord> {
      const { kid, publicJwk, privateKey, createdAt } = candidate;
      // ON CONFLICT DO NOTHING: the unique index on the active state (or the
      // kid) refuses a second active key; the first one inserted stays.
      return immediate("create signing key", () => {
        q.insertFirstSigningKey.run({ kid, publicJwk, privateKey, createdAt });
        return toSigningKey(q.activeSigningKey.get());
      });
    },

    async activeSigningKey(): Promise<SigningKeyRecord | null> {
      const row = q.activeSigningKey.get();
      return row ? toSigningKey(row) : null;
    },

    async listSigningKeys(): Promise<SigningKeyRecord[]> {
      return q.listSigningKeys.all().map(toSigningKey);
    },

    async rotateSigningKey(next: SigningKeyRecord): Promise<string | null> {
      return rotate.immediate(next);
    },

    async retireSigningKey(kid: string, at: number): Promise<"retired" | "already_retired" | "active" | "unknown"> {
      if (q.retireSigningKey.run(at, kid).changes === 1) return "retired";
      const row = q.getSigningKey.get(kid) as { state: string } | null;
      if (!row) return "unknown";
      return row.state === "active" ? "active" : "already_retired";
    },
  };
}
