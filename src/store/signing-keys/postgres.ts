// The receipts' signing keys on PostgreSQL.
import type { SQL } from "bun";
import { mapUnreachable } from "../connection/postgres";
import { toSigningKey } from "./rows";
import type { SigningKeyRecord, SigningKeysStore } from "./records";

/** Advisory lock id for "rotating the receipt signing key" (arbitrary, fixed). */
const SIGNING_KEY_LOCK_ID = 7_316_402_918n;

export function postgresSigningKeys(sql: SQL): SigningKeysStore {
  const store: SigningKeysStore = {
    async ensureSigningKey(candidate: SigningKeyRecord): Promise<SigningKeyRecord> {
      const { kid, publicJwk, privateKey, createdAt } = candidate;
      // The partial unique index admits one active key: of several nodes
      // starting at once, one insert wins and the others do nothing.
      await sql`
      INSERT INTO signing_keys (kid, public_jwk, private_key, state, created_at, retired_at)
      VALUES (${kid}, ${publicJwk}, ${privateKey}, 'active', ${createdAt}, NULL) ON CONFLICT DO NOTHING`;
      const active = await store.activeSigningKey();
      // Only a concurrent rotation between the two statements could leave none.
      return active ?? store.ensureSigningKey(candidate);
    },

    async activeSigningKey(): Promise<SigningKeyRecord | null> {
      const [row] = await sql`SELECT * FROM signing_keys WHERE state = 'active'`;
      return row ? toSigningKey(row) : null;
    },

    async listSigningKeys(): Promise<SigningKeyRecord[]> {
      const rows = await sql`SELECT * FROM signing_keys ORDER BY created_at, kid`;
      return rows.map(toSigningKey);
    },

    async rotateSigningKey(next: SigningKeyRecord): Promise<string | null> {
      return sql.begin(async (tx) => {
        // Two rotations at once queue here instead of one failing on the
        // unique index after the other demoted the key it saw.
        await tx`SELECT pg_advisory_xact_lock(${SIGNING_KEY_LOCK_ID.toString()}::bigint)`;
        const [previous] = await tx`UPDATE signing_keys SET state = 'published' WHERE state = 'active' RETURNING kid`;
        await tx`
        INSERT INTO signing_keys (kid, public_jwk, private_key, state, created_at, retired_at)
        VALUES (${next.kid}, ${next.publicJwk}, ${next.privateKey}, 'active', ${next.createdAt}, NULL)`;
        return previous?.kid ?? null;
      });
    },

    async retireSigningKey(kid: string, at: number): Promise<"retired" | "already_retired" | "active" | "unknown"> {
      const [retired] = await sql`
      UPDATE signing_keys SET state = 'retired', retired_at = ${at} WHERE kid = ${kid} AND state = 'published' RETURNING kid`;
      if (retired) return "retired";
      const [row] = await sql`SELECT state FROM signing_keys WHERE kid = ${kid}`;
      if (!row) return "unknown";
      return row.state === "active" ? "active" : "already_retired";
    },
  };
  return mapUnreachable(store);
}
