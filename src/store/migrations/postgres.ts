// PostgreSQL schema, one entry per version, the same tables as the SQLite
// schema (migrations/sqlite.ts). Append only (new ones at the end of
// migrations/postgres-from-10.ts): never edit a shipped migration;
// schema_migrations records which versions have run.
//
// Times are Unix milliseconds and counters can outgrow 32 bits, so both are
// BIGINT; confidence is DOUBLE PRECISION; everything else TEXT, as in SQLite.
import type { SQL } from "bun";
import { postgresMigrationsFrom10 } from "./postgres-from-10";

export const postgresMigrations: string[] = [
  `CREATE TABLE api_keys (
     id          TEXT PRIMARY KEY,
     name        TEXT NOT NULL,
     hash        TEXT NOT NULL,
     rate_limit  BIGINT NOT NULL,
     created_at  BIGINT NOT NULL,
     revoked_at  BIGINT,
     challenges  BIGINT NOT NULL DEFAULT 0,
     verified    BIGINT NOT NULL DEFAULT 0,
     failed      BIGINT NOT NULL DEFAULT 0
   );
   CREATE TABLE agents (
     key_id              TEXT NOT NULL,
     agent_id            TEXT NOT NULL,
     identity_commitment TEXT NOT NULL,
     signing_key         TEXT,
     created_at          BIGINT NOT NULL,
     revoked_at          BIGINT,
     PRIMARY KEY (key_id, agent_id)
   );
   CREATE TABLE challenges (
     id          TEXT PRIMARY KEY,
     key_id      TEXT NOT NULL,
     agent_id    TEXT NOT NULL,
     action      TEXT NOT NULL,
     context     TEXT,
     nonce       TEXT NOT NULL,
     created_at  BIGINT NOT NULL,
     expires_at  BIGINT NOT NULL,
     status      TEXT NOT NULL DEFAULT 'pending',
     decided_at  BIGINT,
     confidence  DOUBLE PRECISION,
     reason      TEXT
   );
   CREATE INDEX challenges_by_expiry ON challenges (expires_at);
   CREATE INDEX challenges_pending ON challenges (key_id, expires_at) WHERE status = 'pending';
   CREATE TABLE rate_windows (
     key_id       TEXT NOT NULL,
     window_start BIGINT NOT NULL,
     count        BIGINT NOT NULL,
     PRIMARY KEY (key_id, window_start)
   );`,
  // 2: audit trail and idempotency keys (see migrations/sqlite.ts): audit rows
  // come from triggers, in the transaction of the change they record, and
  // the table refuses UPDATE and DELETE.
  `ALTER TABLE challenges ADD COLUMN request_id TEXT;
   ALTER TABLE challenges ADD COLUMN decided_request_id TEXT;
   CREATE TABLE audit_log (
     seq         BIGSERIAL PRIMARY KEY,
     at          BIGINT NOT NULL,
     key_id      TEXT NOT NULL,
     event       TEXT NOT NULL,
     session_id  TEXT NOT NULL,
     agent_id    TEXT NOT NULL,
     action      TEXT NOT NULL,
     result      TEXT NOT NULL,
     reason      TEXT,
     request_id  TEXT
   );
   CREATE INDEX audit_by_key ON audit_log (key_id, seq);
   CREATE FUNCTION audit_challenge() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP = 'INSERT' THEN
       INSERT INTO audit_log (at, key_id, event, session_id, agent_id, action, result, reason, request_id)
       VALUES (NEW.created_at, NEW.key_id, 'challenge.created', NEW.id, NEW.agent_id, NEW.action, 'pending', NULL, NEW.request_id);
     ELSIF OLD.status = 'pending' AND NEW.status <> 'pending' THEN
       INSERT INTO audit_log (at, key_id, event, session_id, agent_id, action, result, reason, request_id)
       VALUES (NEW.decided_at, NEW.key_id, 'verification.decided', NEW.id, NEW.agent_id, NEW.action, NEW.status, NEW.reason, NEW.decided_request_id);
     END IF;
     RETURN NULL;
   END $$;
   CREATE TRIGGER audit_challenge AFTER INSERT OR UPDATE OF status ON challenges FOR EACH ROW EXECUTE FUNCTION audit_challenge();
   CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$;
   CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
   CREATE TABLE idempotency_keys (
     key_id       TEXT NOT NULL,
     idem_key     TEXT NOT NULL,
     fingerprint  TEXT NOT NULL,
     status       INTEGER,
     body         TEXT,
     created_at   BIGINT NOT NULL,
     PRIMARY KEY (key_id, idem_key)
   );
   CREATE INDEX idempotency_by_age ON idempotency_keys (created_at);`,
  // 3: signed receipts (see migrations/sqlite.ts): decision evidence and the
  // receipt on the challenge row; signing keys shared by every node, at most
  // one active (partial unique index).
  `ALTER TABLE challenges ADD COLUMN evidence TEXT;
   ALTER TABLE challenges ADD COLUMN receipt TEXT;
   CREATE TABLE signing_keys (
     kid          TEXT PRIMARY KEY,
     public_jwk   TEXT NOT NULL,
     private_key  TEXT NOT NULL,
     state        TEXT NOT NULL CHECK (state IN ('active', 'published', 'retired')),
     created_at   BIGINT NOT NULL,
     retired_at   BIGINT
   );
   CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (state) WHERE state = 'active';`,
  // 4: usage counters out of the key row. Every creation and decision used to
  // update api_keys in place, so all of a key's writers, on every node, queued
  // on that one row lock through their commits. Counts now live in a few
  // shard rows per key (postgres.ts picks one per write); usage is their sum.
  `CREATE TABLE usage_counters (
     key_id      TEXT NOT NULL,
     shard       SMALLINT NOT NULL,
     challenges  BIGINT NOT NULL DEFAULT 0,
     verified    BIGINT NOT NULL DEFAULT 0,
     failed      BIGINT NOT NULL DEFAULT 0,
     PRIMARY KEY (key_id, shard)
   );
   INSERT INTO usage_counters (key_id, shard, challenges, verified, failed)
     SELECT id, 0, challenges, verified, failed FROM api_keys
     WHERE challenges <> 0 OR verified <> 0 OR failed <> 0;
   ALTER TABLE api_keys DROP COLUMN challenges, DROP COLUMN verified, DROP COLUMN failed;`,
  // 5: mandates. The agent row holds the mandate in force (canonical JSON,
  // and the principal's JWS verbatim when signed); mandate_spend holds the
  // verified total and count per agent, limit scope and UTC period. Totals
  // are exact decimal text, computed with BigInt by the code that holds the
  // row (docs/mandates.md), never a binary float.
  `ALTER TABLE agents ADD COLUMN principal_key TEXT;
   ALTER TABLE agents ADD COLUMN mandate TEXT;
   ALTER TABLE agents ADD COLUMN mandate_jws TEXT;
   ALTER TABLE agents ADD COLUMN mandate_iat BIGINT;
   CREATE TABLE mandate_spend (
     key_id        TEXT NOT NULL,
     agent_id      TEXT NOT NULL,
     action        TEXT NOT NULL,
     currency      TEXT NOT NULL,
     period        TEXT NOT NULL,
     period_start  BIGINT NOT NULL,
     total         TEXT NOT NULL,
     count         BIGINT NOT NULL,
     PRIMARY KEY (key_id, agent_id, action, currency, period, period_start)
   );`,
  // 6: write quotas and audit retention (see migrations/sqlite.ts). The
  // purge opens the gate with a transaction-local setting
  // (zkagent.audit_purge_before); any other DELETE, and every UPDATE, is refused.
  `ALTER TABLE api_keys ADD COLUMN agent_rate_limit BIGINT;
   ALTER TABLE api_keys ADD COLUMN agents BIGINT NOT NULL DEFAULT 0;
   UPDATE api_keys SET agents = (SELECT count(*) FROM agents WHERE agents.key_id = api_keys.id);
   CREATE TABLE agent_rate_windows (
     key_id       TEXT NOT NULL,
     window_start BIGINT NOT NULL,
     count        BIGINT NOT NULL,
     PRIMARY KEY (key_id, window_start)
   );
   CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP = 'DELETE' AND OLD.at < coalesce(nullif(current_setting('zkagent.audit_purge_before', true), '')::bigint, 0) THEN
       RETURN OLD;
     END IF;
     RAISE EXCEPTION 'audit_log is append-only';
   END $$;`,
  // 7: circuits as versioned data (see migrations/sqlite.ts).
  `CREATE TABLE circuits (
     id            TEXT PRIMARY KEY,
     state         TEXT NOT NULL CHECK (state IN ('active', 'accepted', 'retired')),
     vk            TEXT NOT NULL,
     vk_hash       TEXT NOT NULL,
     zkey_sha256   TEXT NOT NULL,
     wasm_sha256   TEXT NOT NULL,
     transcript    TEXT NOT NULL,
     zkey          BYTEA NOT NULL,
     wasm          BYTEA NOT NULL,
     created_at    BIGINT NOT NULL,
     activated_at  BIGINT,
     retired_at    BIGINT
   );
   CREATE UNIQUE INDEX circuits_one_active ON circuits (state) WHERE state = 'active';
   ALTER TABLE challenges ADD COLUMN circuit_id TEXT;`,
  // 8: verification claims (issue 18, see migrations/sqlite.ts): the claimant
  // and the end of its lease, set by one conditional UPDATE.
  `ALTER TABLE challenges ADD COLUMN claim_token TEXT;
   ALTER TABLE challenges ADD COLUMN claim_until BIGINT;`,
  // 9: webhooks (issue 27, docs/webhooks.md). Endpoints per API key; an
  // outbox of events, each written by the decision's own transaction
  // (decideChallenge) only when the key has an endpoint for its type; one
  // delivery row per (event, endpoint), claimed by a node with a lease
  // (lease_token, lease_until) so no two nodes send it at once, retried at
  // next_at until delivered or failed. `events` is the subscribed types
  // between commas (",session.verified,session.failed,") so the decision
  // selects its endpoints with one LIKE.
  `CREATE TABLE webhook_endpoints (
     id               TEXT PRIMARY KEY,
     key_id           TEXT NOT NULL,
     url              TEXT NOT NULL,
     events           TEXT NOT NULL,
     secret           TEXT NOT NULL,
     previous_secret  TEXT,
     previous_until   BIGINT,
     created_at       BIGINT NOT NULL,
     deleted_at       BIGINT
   );
   CREATE INDEX webhook_endpoints_key ON webhook_endpoints (key_id) WHERE deleted_at IS NULL;
   CREATE TABLE webhook_events (
     id          TEXT PRIMARY KEY,
     key_id      TEXT NOT NULL,
     type        TEXT NOT NULL,
     session_id  TEXT NOT NULL,
     created_at  BIGINT NOT NULL,
     payload     TEXT
   );
   CREATE TABLE webhook_deliveries (
     event_id      TEXT NOT NULL,
     endpoint_id   TEXT NOT NULL,
     key_id        TEXT NOT NULL,
     state         TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
     attempts      INTEGER NOT NULL DEFAULT 0,
     next_at       BIGINT NOT NULL,
     lease_token   TEXT,
     lease_until   BIGINT,
     last_status   INTEGER,
     last_error    TEXT,
     created_at    BIGINT NOT NULL,
     finished_at   BIGINT,
     PRIMARY KEY (event_id, endpoint_id)
   );
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE state = 'pending';
   CREATE INDEX webhook_deliveries_key ON webhook_deliveries (key_id, created_at);`,
  // 10 onward: migrations/postgres-from-10.ts.
  ...postgresMigrationsFrom10,
];

/**
 * An arbitrary constant identifying "zkagent schema migration" among advisory
 * locks; every node uses the same one so only one migrates at a time.
 */
export const MIGRATION_LOCK_ID = 7_316_402_917n;

/**
 * Applies the migrations not yet recorded in schema_migrations, in one
 * transaction that holds a transaction-scoped advisory lock. Several nodes
 * starting at once queue on the lock; each one after the first finds the
 * versions already recorded and applies nothing. The lock is released by
 * COMMIT or ROLLBACK, so a crashed migrator never leaves it held.
 *
 * `migrations` is a parameter so tests can exercise a later version.
 */
export async function migratePostgres(sql: SQL, migrations: readonly string[] = postgresMigrations): Promise<number> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_ID.toString()}::bigint)`;
    // Created under the lock: CREATE TABLE IF NOT EXISTS alone still races on
    // the catalog (a unique violation on pg_type) when two nodes run it at once.
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    INT PRIMARY KEY,
      applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
    )`;
    const [{ current }] = await tx`SELECT coalesce(max(version), 0)::int AS current FROM schema_migrations`;
    let applied = 0;
    for (let version = Number(current) + 1; version <= migrations.length; version++) {
      // Migration text is a constant from this file, never input; unsafe runs
      // it as a multi-statement simple query.
      await tx.unsafe(migrations[version - 1]!);
      await tx`INSERT INTO schema_migrations (version) VALUES (${version})`;
      applied++;
    }
    return applied;
  });
}
