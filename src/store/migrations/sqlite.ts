// SQLite schema, one entry per version; PRAGMA user_version records how many
// have run. Append only: never edit a shipped migration.
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
];
