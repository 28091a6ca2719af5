// PostgreSQL migrations 10 onward (groups, then everything after them), in
// order: the second half of the one history that migrations/postgres.ts
// lists, split only to keep each file readable. Append new migrations here.

export const postgresMigrationsFrom10: string[] = [
  // 10: groups (issue 24, docs/protocol.md "Groups"). A group is a Semaphore
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
     created_at      BIGINT NOT NULL,
     version         BIGINT NOT NULL,
     size            BIGINT NOT NULL,
     active_members  BIGINT NOT NULL,
     depth           BIGINT NOT NULL,
     root            TEXT NOT NULL,
     removed_version BIGINT NOT NULL,
     mandate         TEXT
   );
   CREATE TABLE group_members (
     group_id    TEXT NOT NULL,
     leaf_index  BIGINT NOT NULL,
     commitment  TEXT NOT NULL,
     version     BIGINT NOT NULL,
     PRIMARY KEY (group_id, leaf_index)
   );
   CREATE UNIQUE INDEX group_members_active ON group_members (group_id, commitment) WHERE commitment <> '0';
   CREATE INDEX group_members_by_version ON group_members (group_id, version);
   CREATE TABLE group_roots (
     group_id  TEXT NOT NULL,
     version   BIGINT NOT NULL,
     root      TEXT NOT NULL,
     PRIMARY KEY (group_id, version)
   );
   CREATE INDEX group_roots_by_root ON group_roots (group_id, root);
   CREATE TABLE group_nodes (
     group_id  TEXT NOT NULL,
     level     BIGINT NOT NULL,
     idx       BIGINT NOT NULL,
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
     period_start  BIGINT NOT NULL,
     total         TEXT NOT NULL,
     count         BIGINT NOT NULL,
     PRIMARY KEY (key_id, group_id, pseudonym, action, currency, period, period_start)
   );
   ALTER TABLE challenges ADD COLUMN group_id TEXT;
   ALTER TABLE challenges ADD COLUMN group_root TEXT;
   ALTER TABLE challenges ADD COLUMN group_depth BIGINT;`,
  // 11: the circuit list at add time (issue 23): what GET /v1/circuits lists of a circuit is computed once,
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
  // 12: groups at scale and their owners' limits (see migrations/sqlite.ts):
  // removed commitments kept per group, the challengers allow-list, and an
  // audit row per membership change from a trigger on group_members.
  `ALTER TABLE groups ADD COLUMN challengers TEXT, ADD COLUMN changed_at BIGINT, ADD COLUMN changed_request_id TEXT;
   CREATE INDEX groups_by_key ON groups (key_id);
   CREATE TABLE group_removed (
     group_id    TEXT NOT NULL,
     commitment  TEXT NOT NULL,
     PRIMARY KEY (group_id, commitment)
   );
   ALTER TABLE audit_log ADD COLUMN group_id TEXT, ADD COLUMN commitment TEXT;
   CREATE FUNCTION audit_group_member() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP = 'INSERT' AND NEW.commitment <> '0' THEN
       INSERT INTO audit_log (at, key_id, event, session_id, agent_id, action, result, reason, request_id, group_id, commitment)
       SELECT g.changed_at, g.key_id, 'group.member_added', '', '', '', 'added', NULL, g.changed_request_id, NEW.group_id, NEW.commitment
       FROM groups g WHERE g.group_id = NEW.group_id;
     ELSIF TG_OP = 'UPDATE' AND OLD.commitment <> '0' AND NEW.commitment = '0' THEN
       INSERT INTO group_removed (group_id, commitment) VALUES (NEW.group_id, OLD.commitment) ON CONFLICT DO NOTHING;
       INSERT INTO audit_log (at, key_id, event, session_id, agent_id, action, result, reason, request_id, group_id, commitment)
       SELECT g.changed_at, g.key_id, 'group.member_removed', '', '', '', 'removed', NULL, g.changed_request_id, NEW.group_id, OLD.commitment
       FROM groups g WHERE g.group_id = NEW.group_id;
     END IF;
     RETURN NULL;
   END $$;
   CREATE TRIGGER audit_group_member AFTER INSERT OR UPDATE OF commitment ON group_members FOR EACH ROW EXECUTE FUNCTION audit_group_member();`,
  // 13: the thumbprint of an agent's signing key (issue 31): the keyid a Web
  // Bot Auth signature names, so the guard can ask which of its agents signed
  // (GET /v1/signing-keys/{keyid}). Rows from before are filled by the
  // first start that finds them (SQL cannot hash a JWK: main.ts).
  `ALTER TABLE agents ADD COLUMN signing_key_id TEXT;
   CREATE INDEX agents_by_signing_key_id ON agents (key_id, signing_key_id);`,
  // 14: when each group root was made (issue 37), so that a replaced root is
  // accepted only for the root duration after its successor was made
  // (src/groups/roots.ts). Roots from before have none: only a group's
  // current root among them stays acceptable.
  `ALTER TABLE group_roots ADD COLUMN made_at BIGINT;`,
  // 15: budget spends (issue 40): each group's nullifier set (the unique
  // key is what admits exactly one spend of a note), its notes in commit
  // order, and the head row that hands out the next index.
  `CREATE TABLE budget_nullifiers (
     group_id   TEXT NOT NULL,
     nullifier  TEXT NOT NULL,
     commitment TEXT NOT NULL,
     at         BIGINT NOT NULL,
     PRIMARY KEY (group_id, nullifier)
   );
   CREATE TABLE budget_heads (
     group_id TEXT PRIMARY KEY,
     size     BIGINT NOT NULL
   );
   CREATE TABLE budget_notes (
     group_id   TEXT NOT NULL,
     idx        BIGINT NOT NULL,
     commitment TEXT NOT NULL,
     PRIMARY KEY (group_id, idx)
   );`,
  // 16: budget enrolments (issue 40). A budgeted group takes leaves only
  // through enrolment (the service computes them from verified terms);
  // a mandate (τ) is enrolled once service-wide (its primary key) and an
  // identity once per group, ever, so neither a removed member nor a
  // second mandate multiplies a budget.
  `ALTER TABLE groups ADD COLUMN budget BOOLEAN NOT NULL DEFAULT false;
   CREATE TABLE budget_enrolments (
     mandate             TEXT PRIMARY KEY,
     group_id            TEXT NOT NULL,
     identity_commitment TEXT NOT NULL,
     leaf                TEXT NOT NULL,
     enrolled_at         BIGINT NOT NULL,
     UNIQUE (group_id, identity_commitment)
   );`,
  // 17: budget spends at the service (issue 40). A key's registered origins
  // (a JSON array: the payees a budget challenge of that key may bind); a
  // budget challenge's public values, fixed at creation from one clock
  // reading (JSON: group, payee, amount, currency, periods, ctx); and each
  // budgeted group's notes checkpoints, whose (group, sequence) key is how
  // concurrent checkpointers agree on one sequence.
  `ALTER TABLE api_keys ADD COLUMN origins TEXT;
   ALTER TABLE challenges ADD COLUMN budget TEXT;
   CREATE TABLE budget_checkpoints (
     group_id  TEXT NOT NULL,
     sequence  BIGINT NOT NULL,
     size      BIGINT NOT NULL,
     root      TEXT NOT NULL,
     at        BIGINT NOT NULL,
     PRIMARY KEY (group_id, sequence)
   );`,
];
