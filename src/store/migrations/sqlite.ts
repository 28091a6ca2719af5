// SQLite schema, one entry per version; PRAGMA user_version records how many
// have run. Append only: never edit a shipped migration (16 onward are in
// sqlite-from-16.ts).
import { sqliteMigrationsFrom16 } from "./sqlite-from-16";

export const sqliteMigrations: string[] = [
  `CREATE TABLE api_keys (
     id          TEXT PRIMARY KEY,
     name        TEXT NOT NULL,
     hash        TEXT NOT NULL,
     rate_limit  INTEGER NOT NULL,
     created_at  INTEGER NOT NULL,
     revoked_at  INTEGER,
     challenges  INTEGER NOT NULL DEFAULT 0,
     verified    INTEGER NOT NULL DEFAULT 0,
     failed      INTEGER NOT NULL DEFAULT 0
   );
   CREATE TABLE agents (
     key_id              TEXT NOT NULL,
     agent_id            TEXT NOT NULL,
     identity_commitment TEXT NOT NULL,
     signing_key         TEXT,
     created_at          INTEGER NOT NULL,
     revoked_at          INTEGER,
     PRIMARY KEY (key_id, agent_id)
   );
   CREATE TABLE challenges (
     id          TEXT PRIMARY KEY,
     key_id      TEXT NOT NULL,
     agent_id    TEXT NOT NULL,
     action      TEXT NOT NULL,
     context     TEXT,
     nonce       TEXT NOT NULL,
     created_at  INTEGER NOT NULL,
     expires_at  INTEGER NOT NULL,
     status      TEXT NOT NULL DEFAULT 'pending',
     decided_at  INTEGER,
     confidence  REAL,
     reason      TEXT
   );
   CREATE INDEX challenges_by_expiry ON challenges (expires_at);
   CREATE INDEX challenges_pending ON challenges (key_id, expires_at) WHERE status = 'pending';
   CREATE TABLE rate_windows (
     key_id       TEXT NOT NULL,
     window_start INTEGER NOT NULL,
     count        INTEGER NOT NULL,
     PRIMARY KEY (key_id, window_start)
   );`,
  // 2: audit trail and idempotency keys. The audit rows are written by
  // triggers, so an entry commits in the same transaction as the state change
  // it records and no code path can forget it. The table is append-only:
  // triggers refuse UPDATE and DELETE on it.
  `ALTER TABLE challenges ADD COLUMN request_id TEXT;
   ALTER TABLE challenges ADD COLUMN decided_request_id TEXT;
   CREATE TABLE audit_log (
     seq         INTEGER PRIMARY KEY AUTOINCREMENT,
     at          INTEGER NOT NULL,
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
   CREATE TRIGGER audit_challenge_created AFTER INSERT ON challenges BEGIN
     INSERT INTO audit_log (at, key_id, event, session_id, agent_id, action, result, reason, request_id)
     VALUES (NEW.created_at, NEW.key_id, 'challenge.created', NEW.id, NEW.agent_id, NEW.action, 'pending', NULL, NEW.request_id);
   END;
   CREATE TRIGGER audit_challenge_decided AFTER UPDATE OF status ON challenges
   WHEN OLD.status = 'pending' AND NEW.status <> 'pending' BEGIN
     INSERT INTO audit_log (at, key_id, event, session_id, agent_id, action, result, reason, request_id)
     VALUES (NEW.decided_at, NEW.key_id, 'verification.decided', NEW.id, NEW.agent_id, NEW.action, NEW.status, NEW.reason, NEW.decided_request_id);
   END;
   CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
   CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
   CREATE TABLE idempotency_keys (
     key_id       TEXT NOT NULL,
     idem_key     TEXT NOT NULL,
     fingerprint  TEXT NOT NULL,
     status       INTEGER,
     body         TEXT,
     created_at   INTEGER NOT NULL,
     PRIMARY KEY (key_id, idem_key)
   );
   CREATE INDEX idempotency_by_age ON idempotency_keys (created_at);`,
  // 3: signed receipts. A decision stores its evidence (the checks that
  // passed, the commitment and verification key used) in the same UPDATE, and
  // its receipt in a later conditional one. Receipt signing keys are shared by
  // every process through this table; the partial unique index allows at
  // most one active key, so concurrent first starts insert only one.
  `ALTER TABLE challenges ADD COLUMN evidence TEXT;
   ALTER TABLE challenges ADD COLUMN receipt TEXT;
   CREATE TABLE signing_keys (
     kid          TEXT PRIMARY KEY,
     public_jwk   TEXT NOT NULL,
     private_key  TEXT NOT NULL,
     state        TEXT NOT NULL CHECK (state IN ('active', 'published', 'retired')),
     created_at   INTEGER NOT NULL,
     retired_at   INTEGER
   );
   CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (state) WHERE state = 'active';`,
  // 4: mandates. The agent row holds the mandate in force (canonical JSON,
  // and the principal's JWS verbatim when signed); mandate_spend holds the
  // verified total and count per agent, limit scope and UTC period. Totals
  // are exact decimal text, computed with BigInt by the code that holds the
  // row (docs/mandates.md), never a binary float.
  `ALTER TABLE agents ADD COLUMN principal_key TEXT;
   ALTER TABLE agents ADD COLUMN mandate TEXT;
   ALTER TABLE agents ADD COLUMN mandate_jws TEXT;
   ALTER TABLE agents ADD COLUMN mandate_iat INTEGER;
   CREATE TABLE mandate_spend (
     key_id        TEXT NOT NULL,
     agent_id      TEXT NOT NULL,
     action        TEXT NOT NULL,
     currency      TEXT NOT NULL,
     period        TEXT NOT NULL,
     period_start  INTEGER NOT NULL,
     total         TEXT NOT NULL,
     count         INTEGER NOT NULL,
     PRIMARY KEY (key_id, agent_id, action, currency, period, period_start)
   );`,
  // 5: write quotas and audit retention (issue 11). Agent registrations get
  // their own rate windows and a per-key row count (maintained here, never
  // counted per request); agent_rate_limit NULL means the configured default.
  // The audit log stays append-only except for the retention purge: DELETE is
  // refused unless the row is older than the gate's `before`, which only the
  // purge sets, inside its own transaction (store.purgeAudit).
  `ALTER TABLE api_keys ADD COLUMN agent_rate_limit INTEGER;
   ALTER TABLE api_keys ADD COLUMN agents INTEGER NOT NULL DEFAULT 0;
   UPDATE api_keys SET agents = (SELECT count(*) FROM agents WHERE agents.key_id = api_keys.id);
   CREATE TABLE agent_rate_windows (
     key_id       TEXT NOT NULL,
     window_start INTEGER NOT NULL,
     count        INTEGER NOT NULL,
     PRIMARY KEY (key_id, window_start)
   );
   CREATE TABLE audit_purge_gate (
     id     INTEGER PRIMARY KEY CHECK (id = 1),
     before INTEGER NOT NULL
   );
   INSERT INTO audit_purge_gate (id, before) VALUES (1, 0);
   DROP TRIGGER audit_log_no_delete;
   CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
   WHEN OLD.at >= (SELECT before FROM audit_purge_gate WHERE id = 1) BEGIN
     SELECT RAISE(ABORT, 'audit_log is append-only');
   END;`,
  // 6: circuits as versioned data (issue 17, docs/trust.md). Each row is a
  // verified ceremony's output: its verification key, the hashes agents check
  // the artifacts against, the transcript, and the zkey and wasm themselves so
  // any node can serve them. At most one circuit is active (new challenges
  // use it); `accepted` ones still verify the challenges that name them;
  // `retired` ones verify nothing. A challenge records its circuit (NULL on
  // rows from before: the shipped circuit the first start seeded).
  `CREATE TABLE circuits (
     id            TEXT PRIMARY KEY,
     state         TEXT NOT NULL CHECK (state IN ('active', 'accepted', 'retired')),
     vk            TEXT NOT NULL,
     vk_hash       TEXT NOT NULL,
     zkey_sha256   TEXT NOT NULL,
     wasm_sha256   TEXT NOT NULL,
     transcript    TEXT NOT NULL,
     zkey          BLOB NOT NULL,
     wasm          BLOB NOT NULL,
     created_at    INTEGER NOT NULL,
     activated_at  INTEGER,
     retired_at    INTEGER
   );
   CREATE UNIQUE INDEX circuits_one_active ON circuits (state) WHERE state = 'active';
   ALTER TABLE challenges ADD COLUMN circuit_id TEXT;`,
  // 7: verification claims (issue 18). A submission claims the pending
  // challenge before its proof check; claim_until is the lease, after which a
  // claim left by a process that died no longer holds anyone back. Not part
  // of the challenge record, and not audited (the trigger watches status).
  `ALTER TABLE challenges ADD COLUMN claim_token TEXT;
   ALTER TABLE challenges ADD COLUMN claim_until INTEGER;`,
  // 8: webhooks (issue 27, docs/webhooks.md). Endpoints per API key; an
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
     previous_until   INTEGER,
     created_at       INTEGER NOT NULL,
     deleted_at       INTEGER
   );
   CREATE INDEX webhook_endpoints_key ON webhook_endpoints (key_id) WHERE deleted_at IS NULL;
   CREATE TABLE webhook_events (
     id          TEXT PRIMARY KEY,
     key_id      TEXT NOT NULL,
     type        TEXT NOT NULL,
     session_id  TEXT NOT NULL,
     created_at  INTEGER NOT NULL,
     payload     TEXT
   );
   CREATE TABLE webhook_deliveries (
     event_id      TEXT NOT NULL,
     endpoint_id   TEXT NOT NULL,
     key_id        TEXT NOT NULL,
     state         TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
     attempts      INTEGER NOT NULL DEFAULT 0,
     next_at       INTEGER NOT NULL,
     lease_token   TEXT,
     lease_until   INTEGER,
     last_status   INTEGER,
     last_error    TEXT,
     created_at    INTEGER NOT NULL,
     finished_at   INTEGER,
     PRIMARY KEY (event_id, endpoint_id)
   );
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE state = 'pending';
   CREATE INDEX webhook_deliveries_key ON webhook_deliveries (key_id, created_at);`,
  // 9: groups (issue 24, docs/protocol.md "Groups"). A group is a Semaphore
  // v4 tree: its leaves (group_members, "0" once removed), its current state
  // and version (groups), and every root it has had with the version that
  // made it (group_roots): a root is acceptable when its version is no older
  // than the group's last removal (removed_version). Each leaf row carries
  // the version that last wrote it, so a process whose cached tree is behind
  // replays only what changed since. Group challenges name their group, the
  // root and the depth; group_spend keeps a group mandate's totals per
  // pseudonym (the proof's nullifier) per platform key. group_nodes keeps the
  // tree's internal nodes (levels 1…depth) as the last change left them, so a
  // process without the tree loads it rather than hashing every leaf again.
  `CREATE TABLE groups (
     group_id        TEXT PRIMARY KEY,
     key_id          TEXT NOT NULL,
     created_at      INTEGER NOT NULL,
     version         INTEGER NOT NULL,
     size            INTEGER NOT NULL,
     active_members  INTEGER NOT NULL,
     depth           INTEGER NOT NULL,
     root            TEXT NOT NULL,
     removed_version INTEGER NOT NULL,
     mandate         TEXT
   );
   CREATE TABLE group_members (
     group_id    TEXT NOT NULL,
     leaf_index  INTEGER NOT NULL,
     commitment  TEXT NOT NULL,
     version     INTEGER NOT NULL,
     PRIMARY KEY (group_id, leaf_index)
   );
   CREATE UNIQUE INDEX group_members_active ON group_members (group_id, commitment) WHERE commitment <> '0';
   CREATE INDEX group_members_by_version ON group_members (group_id, version);
   CREATE TABLE group_roots (
     group_id  TEXT NOT NULL,
     version   INTEGER NOT NULL,
     root      TEXT NOT NULL,
     PRIMARY KEY (group_id, version)
   );
   CREATE INDEX group_roots_by_root ON group_roots (group_id, root);
   CREATE TABLE group_nodes (
     group_id  TEXT NOT NULL,
     level     INTEGER NOT NULL,
     idx       INTEGER NOT NULL,
     value     TEXT NOT NULL,
     PRIMARY KEY (group_id, level, idx)
   );
   CREATE TABLE group_spend (
     key_id        TEXT NOT NULL,
     group_id      TEXT NOT NULL,
     pseudonym     TEXT NOT NULL,
     action        TEXT NOT NULL,
     currency      TEXT NOT NULL,
     period        TEXT NOT NULL,
     period_start  INTEGER NOT NULL,
     total         TEXT NOT NULL,
     count         INTEGER NOT NULL,
     PRIMARY KEY (key_id, group_id, pseudonym, action, currency, period, period_start)
   );
   ALTER TABLE challenges ADD COLUMN group_id TEXT;
   ALTER TABLE challenges ADD COLUMN group_root TEXT;
   ALTER TABLE challenges ADD COLUMN group_depth INTEGER;`,
  // 10: the circuit list at add time (issue 23): what GET /v1/circuits lists of a circuit is computed once,
  // when it is added, and stored: the transcript's hash and summary (JSON).
  // Rows from before are rebuilt once by the first start that finds them
  // (their transcript re-checked; SQL cannot parse or hash one):
  // transcript_refused says why a row's stored transcript failed, and such a
  // circuit is not served; transcript_original keeps a stored transcript the
  // rebuild replaced by its known fields.
  `ALTER TABLE circuits ADD COLUMN transcript_sha256 TEXT;
   ALTER TABLE circuits ADD COLUMN ceremony TEXT;
   ALTER TABLE circuits ADD COLUMN transcript_refused TEXT;
   ALTER TABLE circuits ADD COLUMN transcript_original TEXT;`,
  // 11: groups at scale and their owners' limits (issues 32, 34). A removed
  // commitment is kept per group (group_removed, never served) so that it
  // cannot be added back; the group's owner may name which keys may challenge
  // it (challengers, JSON array; NULL: any key). Every membership change is in
  // the audit trail, written by triggers on group_members in the change's own
  // transaction: the time and request come from the group row, which the
  // change updates first (changed_at, changed_request_id). The removal trigger
  // also fills group_removed, so no code path can forget either.
  `ALTER TABLE groups ADD COLUMN challengers TEXT;
   ALTER TABLE groups ADD COLUMN changed_at INTEGER;
   ALTER TABLE groups ADD COLUMN changed_request_id TEXT;
   CREATE INDEX groups_by_key ON groups (key_id);
   CREATE TABLE group_removed (
     group_id    TEXT NOT NULL,
     commitment  TEXT NOT NULL,
     PRIMARY KEY (group_id, commitment)
   );
   ALTER TABLE audit_log ADD COLUMN group_id TEXT;
   ALTER TABLE audit_log ADD COLUMN commitment TEXT;
   CREATE TRIGGER audit_group_member_added AFTER INSERT ON group_members WHEN NEW.commitment <> '0' BEGIN
     INSERT INTO audit_log (at, key_id, event, session_id, agent_id, action, result, reason, request_id, group_id, commitment)
     SELECT g.changed_at, g.key_id, 'group.member_added', '', '', '', 'added', NULL, g.changed_request_id, NEW.group_id, NEW.commitment
     FROM groups g WHERE g.group_id = NEW.group_id;
   END;
   CREATE TRIGGER audit_group_member_removed AFTER UPDATE OF commitment ON group_members
   WHEN OLD.commitment <> '0' AND NEW.commitment = '0' BEGIN
     INSERT INTO group_removed (group_id, commitment) VALUES (NEW.group_id, OLD.commitment) ON CONFLICT DO NOTHING;
     INSERT INTO audit_log (at, key_id, event, session_id, agent_id, action, result, reason, request_id, group_id, commitment)
     SELECT g.changed_at, g.key_id, 'group.member_removed', '', '', '', 'removed', NULL, g.changed_request_id, NEW.group_id, OLD.commitment
     FROM groups g WHERE g.group_id = NEW.group_id;
   END;`,
  // 12: the thumbprint of an agent's signing key (issue 31): the keyid a Web
  // Bot Auth signature names, so the guard can ask which of its agents signed
  // (GET /v1/signing-keys/{keyid}). Rows from before are filled by the
  // first start that finds them (SQL cannot hash a JWK: main.ts).
  `ALTER TABLE agents ADD COLUMN signing_key_id TEXT;
   CREATE INDEX agents_by_signing_key_id ON agents (key_id, signing_key_id);`,
  // 13: when each group root was made (issue 37), so that a replaced root is
  // accepted only for the root duration after its successor was made
  // (src/groups/roots.ts). Roots from before have none: only a group's
  // current root among them stays acceptable.
  `ALTER TABLE group_roots ADD COLUMN made_at INTEGER;`,
  // 14: budget spends (issue 40): each group's nullifier set (the unique
  // key is what admits exactly one spend of a note), its notes in commit
  // order, and the head row that hands out the next index.
  `CREATE TABLE budget_nullifiers (
     group_id   TEXT NOT NULL,
     nullifier  TEXT NOT NULL,
     commitment TEXT NOT NULL,
     at         INTEGER NOT NULL,
     PRIMARY KEY (group_id, nullifier)
   );
   CREATE TABLE budget_heads (
     group_id TEXT PRIMARY KEY,
     size     INTEGER NOT NULL
   );
   CREATE TABLE budget_notes (
     group_id   TEXT NOT NULL,
     idx        INTEGER NOT NULL,
     commitment TEXT NOT NULL,
     PRIMARY KEY (group_id, idx)
   );`,
  // 15: budget enrolments (issue 40). A budgeted group takes leaves only
  // through enrolment (the service computes them from verified terms);
  // a mandate (τ) is enrolled once service-wide (its primary key) and an
  // identity once per group, ever, so neither a removed member nor a
  // second mandate multiplies a budget.
  `ALTER TABLE groups ADD COLUMN budget INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE budget_enrolments (
     mandate             TEXT PRIMARY KEY,
     group_id            TEXT NOT NULL,
     identity_commitment TEXT NOT NULL,
     leaf                TEXT NOT NULL,
     enrolled_at         INTEGER NOT NULL,
     UNIQUE (group_id, identity_commitment)
   );`,
  ...sqliteMigrationsFrom16,
];
