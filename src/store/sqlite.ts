// The embedded default: one SQLite file through bun:sqlite, in WAL mode.
//
// synchronous=NORMAL in WAL mode makes every committed transaction survive a
// crash of the process (kill -9): the commit is in the WAL file before the
// call returns. Only a power loss can lose the last commits; set
// SQLITE_SYNCHRONOUS=FULL where that matters more than write throughput.
import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { applyMandate, type MandateDecision, type MandateScope, planMandate, type StoredMandate } from "../mandates/enforce";
import { type MandateResult, NO_SPEND, type Spend, type SpendKey, spendKeyId } from "../mandates/evaluate";
import type { CircuitListing } from "../circuits/listing";
import type {
  ActivateCircuitResult,
  AgentQuota,
  AgentRecord,
  ApiKeyRecord,
  AuditEntry,
  AuditQuery,
  ChallengeRecord,
  CircuitRecord,
  CircuitState,
  CircuitWithArtifacts,
  Claim,
  ClaimResult,
  CreateChallengeResult,
  Decision,
  DecideResult,
  ChangeGroupResult,
  GroupChange,
  GroupRecord,
  IdempotencyState,
  RateWindow,
  RegisterAgentResult,
  RetireCircuitResult,
  SetMandateResult,
  SigningKeyRecord,
  Store,
  Usage,
  ClaimedWebhookDelivery,
  WebhookAttemptOutcome,
  WebhookClaim,
  WebhookDeliveryQuery,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
} from "./interface";
import { StoreUnavailableError } from "./interface";
import { sqliteMigrations } from "./migrations/sqlite";
import { eventTypeOf, newEventId, subscribedPattern } from "../webhooks/events";
import { outboxWritten } from "../webhooks/wake";
import { changeGroupOptimistically, levelsOf, type NodeRow, refuseRoot, toLeaf } from "./groups";
import { carriedCount, MINUTE_MS } from "../sliding-window";
import type { TreeCache } from "../groups/cache";
import type { Leaf } from "../groups/tree";
import {
  evidenceText,
  heldIdempotency,
  setMandateRefusal,
  toAgent,
  toAudit,
  toChallenge,
  toCircuit,
  toKey,
  toSigningKey,
  toSpend,
  toUsage,
  toClaimedWebhookDelivery,
  toWebhookDelivery,
  toWebhookEndpoint,
  toGroup,
} from "./rows";

export interface SqliteOptions {
  synchronous?: "NORMAL" | "FULL";
  /** How long a write waits for another process's lock before StoreUnavailableError (default LOCK_WAIT_MS). */
  lockWaitMs?: number;
}

export function openSqlite(path: string, options: SqliteOptions = {}): SqliteStore {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec(`PRAGMA synchronous = ${options.synchronous === "FULL" ? "FULL" : "NORMAL"}`);
  // Several processes (workers, the CLI next to a running server) share the
  // file. The CLI may wait in SQLite's busy handler; the server's writes never
  // do (see immediate() below), so this only covers migration and reads.
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.exec("PRAGMA foreign_keys = ON");
  migrate(db);
  return new SqliteStore(db, options.lockWaitMs ?? LOCK_WAIT_MS);
}

function migrate(db: Database): void {
  // BEGIN IMMEDIATE: two processes starting at once must not both migrate.
  db.transaction(() => {
    const { user_version: applied } = db.query("PRAGMA user_version").get() as { user_version: number };
    for (let version = applied; version < sqliteMigrations.length; version++) db.exec(sqliteMigrations[version]!);
    if (applied < sqliteMigrations.length) db.exec(`PRAGMA user_version = ${sqliteMigrations.length}`);
  }).immediate();
}

/** PRAGMA busy_timeout: for migration, reads during a WAL checkpoint, and the CLI. */
const BUSY_TIMEOUT_MS = 10_000;
/**
 * How long a server write waits for another process's write lock (a sqlite3
 * shell, a backup, the CLI) before giving up with StoreUnavailableError → 503.
 * It waits by retrying on timers, so the event loop keeps serving meanwhile.
 */
export const LOCK_WAIT_MS = 5_000;
const LOCK_RETRY_FIRST_MS = 1;
const LOCK_RETRY_MAX_MS = 25;

const locked = (what: string, waitedMs: number) => new StoreUnavailableError(`SQLite: another connection has held the write lock for ${waitedMs} ms (${what})`);

export class SqliteStore implements Store {
  readonly kind = "sqlite" as const;
  private readonly q;

  constructor(
    private readonly db: Database,
    private readonly lockWaitMs = LOCK_WAIT_MS,
  ) {
    this.q = {
      insertKey: db.query(
        "INSERT INTO api_keys (id, name, hash, rate_limit, agent_rate_limit, created_at, revoked_at) VALUES ($id, $name, $hash, $rateLimit, $agentRateLimit, $createdAt, $revokedAt)",
      ),
      getKey: db.query("SELECT * FROM api_keys WHERE id = ?"),
      listKeys: db.query("SELECT * FROM api_keys ORDER BY created_at, id"),
      revokeKey: db.query("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"),
      setRateLimit: db.query("UPDATE api_keys SET rate_limit = ? WHERE id = ?"),
      insertAgent: db.query(
        `INSERT INTO agents (key_id, agent_id, identity_commitment, signing_key, signing_key_id, created_at, revoked_at, principal_key, mandate, mandate_jws, mandate_iat)
         VALUES ($keyId, $agentId, $identityCommitment, $signingKey, $signingKeyId, $createdAt, NULL, $principalKey, $mandate, $mandateJws, $mandateIat)
         ON CONFLICT (key_id, agent_id) DO UPDATE SET
           identity_commitment = excluded.identity_commitment, signing_key = excluded.signing_key, signing_key_id = excluded.signing_key_id,
           created_at = excluded.created_at, revoked_at = NULL, principal_key = excluded.principal_key,
           mandate = excluded.mandate, mandate_jws = excluded.mandate_jws, mandate_iat = excluded.mandate_iat
         WHERE agents.revoked_at IS NOT NULL`,
      ),
      setMandate: db.query(
        `UPDATE agents SET mandate = $mandate, mandate_jws = $mandateJws, mandate_iat = $mandateIat
         WHERE key_id = $keyId AND agent_id = $agentId AND revoked_at IS NULL
           AND (principal_key IS NULL OR $mandateJws IS NOT NULL)
           AND ($mandateIat IS NULL OR mandate_iat IS NULL OR mandate_iat < $mandateIat OR mandate_jws = $mandateJws)
         RETURNING *`,
      ),
      getSpend: db.query(
        `SELECT total, count FROM mandate_spend
         WHERE key_id = $keyId AND agent_id = $agentId AND action = $action AND currency = $currency AND period = $period AND period_start = $periodStart`,
      ),
      putSpend: db.query(
        `INSERT INTO mandate_spend (key_id, agent_id, action, currency, period, period_start, total, count)
         VALUES ($keyId, $agentId, $action, $currency, $period, $periodStart, $total, $count)
         ON CONFLICT (key_id, agent_id, action, currency, period, period_start) DO UPDATE SET total = excluded.total, count = excluded.count`,
      ),
      getGroupSpend: db.query(
        `SELECT total, count FROM group_spend
         WHERE key_id = $keyId AND group_id = $groupId AND pseudonym = $pseudonym AND action = $action AND currency = $currency
           AND period = $period AND period_start = $periodStart`,
      ),
      putGroupSpend: db.query(
        `INSERT INTO group_spend (key_id, group_id, pseudonym, action, currency, period, period_start, total, count)
         VALUES ($keyId, $groupId, $pseudonym, $action, $currency, $period, $periodStart, $total, $count)
         ON CONFLICT (key_id, group_id, pseudonym, action, currency, period, period_start) DO UPDATE SET total = excluded.total, count = excluded.count`,
      ),
      insertGroup: db.query(
        `INSERT INTO groups (group_id, key_id, created_at, version, size, active_members, depth, root, removed_version, mandate, challengers)
         VALUES ($groupId, $keyId, $createdAt, 0, 0, 0, 0, '0', 0, $mandate, $challengers) ON CONFLICT (group_id) DO NOTHING`,
      ),
      getGroup: db.query("SELECT * FROM groups WHERE group_id = ?"),
      leavesSince: db.query("SELECT leaf_index, commitment FROM group_members WHERE group_id = ? AND version > ? ORDER BY leaf_index"),
      // A change's leaves and nodes in one statement each, from JSON arrays of [index, value] and [level, index, value]: row by
      // row, 10,000 leaves with their audit trigger held the write lock (and the event loop) for 350–520 ms; this way ≈ 35 ms.
      putLeaves: db.query(
        `INSERT INTO group_members (group_id, leaf_index, commitment, version)
         SELECT $groupId, value ->> 0, value ->> 1, $version FROM json_each($leaves) WHERE true
         ON CONFLICT (group_id, leaf_index) DO UPDATE SET commitment = excluded.commitment, version = excluded.version`,
      ),
      updateGroup: db.query(
        `UPDATE groups SET version = $version, size = $size, active_members = $active, depth = $depth, root = $root, removed_version = $removedVersion,
           changed_at = $at, changed_request_id = $requestId
         WHERE group_id = $groupId RETURNING *`,
      ),
      insertRoot: db.query("INSERT INTO group_roots (group_id, version, root) VALUES (?, ?, ?)"),
      putNodes: db.query(
        `INSERT INTO group_nodes (group_id, level, idx, value)
         SELECT $groupId, value ->> 0, value ->> 1, value ->> 2 FROM json_each($nodes) WHERE true
         ON CONFLICT (group_id, level, idx) DO UPDATE SET value = excluded.value`,
      ),
      allLeaves: db.query("SELECT commitment FROM group_members WHERE group_id = ? ORDER BY leaf_index"),
      allNodes: db.query("SELECT level, idx, value FROM group_nodes WHERE group_id = ? ORDER BY level, idx"),
      members: db.query("SELECT commitment FROM group_members WHERE group_id = ? AND leaf_index >= ? ORDER BY leaf_index LIMIT ?"),
      setGroupMandate: db.query("UPDATE groups SET mandate = ? WHERE group_id = ? RETURNING *"),
      setGroupChallengers: db.query("UPDATE groups SET challengers = ? WHERE group_id = ? RETURNING *"),
      countGroups: db.query("SELECT count(*) AS n FROM groups WHERE key_id = ?"),
      groupExists: db.query("SELECT 1 AS ok FROM groups WHERE group_id = ?"),
      removedAmong: db.query("SELECT commitment FROM group_removed WHERE group_id = ? AND commitment IN (SELECT value FROM json_each(?)) LIMIT 1"),
      // Keyset (issue 37): a page starts at a leaf index, read on the primary key; the pages of one read scan the group once.
      changes: db.query("SELECT leaf_index, commitment FROM group_members WHERE group_id = ? AND version > ? AND leaf_index >= ? ORDER BY leaf_index LIMIT ?"),
      // Since version 0 every leaf is a change, and the n-th change is leaf n: a primary-key range, not an OFFSET scan.
      leavesFrom: db.query("SELECT leaf_index, commitment FROM group_members WHERE group_id = ? AND leaf_index >= ? ORDER BY leaf_index LIMIT ?"),
      acceptableRoot: db.query(
        `SELECT 1 AS ok FROM group_roots r JOIN groups g ON g.group_id = r.group_id
         WHERE r.group_id = ? AND r.root = ? AND r.version >= g.removed_version AND r.root <> '0' LIMIT 1`,
      ),
      getAgent: db.query("SELECT * FROM agents WHERE key_id = ? AND agent_id = ?"),
      agentsBySigningKeyId: db.query("SELECT * FROM agents WHERE key_id = ? AND signing_key_id = ? ORDER BY created_at, agent_id LIMIT ?"),
      agentsMissingSigningKeyId: db.query("SELECT * FROM agents WHERE signing_key IS NOT NULL AND signing_key_id IS NULL LIMIT ?"),
      setSigningKeyId: db.query("UPDATE agents SET signing_key_id = ? WHERE key_id = ? AND agent_id = ? AND signing_key = ?"),
      revokeAgent: db.query("UPDATE agents SET revoked_at = ? WHERE key_id = ? AND agent_id = ? AND revoked_at IS NULL RETURNING *"),
      setAgentRateLimit: db.query("UPDATE api_keys SET agent_rate_limit = ? WHERE id = ?"),
      countAgentWindow: db.query(
        `INSERT INTO agent_rate_windows (key_id, window_start, count) VALUES (?, ?, 1)
         ON CONFLICT (key_id, window_start) DO UPDATE SET count = count + 1 RETURNING count`,
      ),
      agentWindow: db.query("SELECT count FROM agent_rate_windows WHERE key_id = ? AND window_start = ?"),
      agentRows: db.query("SELECT agents FROM api_keys WHERE id = ?"),
      countAgentRow: db.query("UPDATE api_keys SET agents = agents + 1 WHERE id = ?"),
      purgeAgentWindows: db.query("DELETE FROM agent_rate_windows WHERE window_start < ?"),
      openAuditGate: db.query("UPDATE audit_purge_gate SET before = ? WHERE id = 1"),
      purgeAudit: db.query("DELETE FROM audit_log WHERE at < ?"),
      countWindow: db.query(
        `INSERT INTO rate_windows (key_id, window_start, count) VALUES (?, ?, 1)
         ON CONFLICT (key_id, window_start) DO UPDATE SET count = count + 1 RETURNING count`,
      ),
      insertChallenge: db.query(
        `INSERT INTO challenges (id, key_id, agent_id, action, context, nonce, created_at, expires_at, status, request_id, circuit_id, group_id, group_root, group_depth)
         VALUES ($id, $keyId, $agentId, $action, $context, $nonce, $createdAt, $expiresAt, 'pending', $requestId, $circuitId, $groupId, $groupRoot, $groupDepth)`,
      ),
      countChallenge: db.query("UPDATE api_keys SET challenges = challenges + 1 WHERE id = ?"),
      countWindowBy: db.query(
        `INSERT INTO rate_windows (key_id, window_start, count) VALUES (?, ?, ?)
         ON CONFLICT (key_id, window_start) DO UPDATE SET count = count + excluded.count RETURNING count`,
      ),
      countChallenges: db.query("UPDATE api_keys SET challenges = challenges + ? WHERE id = ?"),
      rateWindow: db.query("SELECT count FROM rate_windows WHERE key_id = ? AND window_start = ?"),
      getChallenge: db.query("SELECT * FROM challenges WHERE id = ?"),
      decide: db.query(
        `UPDATE challenges SET status = $status, decided_at = $decidedAt, confidence = $confidence, reason = $reason,
           decided_request_id = $requestId, evidence = $evidence, receipt = $receipt
         WHERE id = $id AND status = 'pending' AND expires_at >= $decidedAt RETURNING *`,
      ),
      claim: db.query(
        `UPDATE challenges SET claim_token = $token, claim_until = $until
         WHERE id = $id AND status = 'pending' AND expires_at >= $now AND (claim_until IS NULL OR claim_until < $now) RETURNING id`,
      ),
      releaseClaim: db.query("UPDATE challenges SET claim_until = NULL WHERE id = ? AND claim_token = ? AND status = 'pending'"),
      countVerified: db.query("UPDATE api_keys SET verified = verified + 1 WHERE id = ?"),
      countFailed: db.query("UPDATE api_keys SET failed = failed + 1 WHERE id = ?"),
      purge: db.query("DELETE FROM challenges WHERE expires_at < ?"),
      purgeWindows: db.query("DELETE FROM rate_windows WHERE window_start < ?"),
      audit: db.query(`SELECT * FROM audit_log WHERE seq > $afterSeq AND ($keyId IS NULL OR key_id = $keyId) ORDER BY seq LIMIT $limit`),
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
      storeReceipt: db.query("UPDATE challenges SET receipt = ? WHERE id = ? AND receipt IS NULL AND status <> 'pending' RETURNING receipt"),
      getReceipt: db.query("SELECT receipt FROM challenges WHERE id = ?"),
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
      insertCircuit: db.query(
        `INSERT INTO circuits (id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, transcript_sha256, ceremony, transcript_refused,
                               zkey, wasm, created_at, activated_at, retired_at)
         VALUES ($id, CASE WHEN EXISTS (SELECT 1 FROM circuits WHERE state = 'active') THEN 'accepted' ELSE 'active' END,
                 $vk, $vkHash, $zkeySha256, $wasmSha256, $transcript, $transcriptSha256, $ceremony, $refused, $zkey, $wasm, $createdAt,
                 CASE WHEN EXISTS (SELECT 1 FROM circuits WHERE state = 'active') THEN NULL ELSE $createdAt END, NULL)
         ON CONFLICT (id) DO NOTHING`,
      ),
      rebuildCircuitListing: db.query(
        `UPDATE circuits SET transcript_original = CASE WHEN transcript <> $transcript THEN transcript END, transcript = $transcript,
                transcript_sha256 = $transcriptSha256, ceremony = $ceremony
         WHERE id = $id AND transcript_sha256 IS NULL AND transcript_refused IS NULL`,
      ),
      refuseCircuitListing: db.query(
        "UPDATE circuits SET transcript_refused = $refused WHERE id = $id AND transcript_sha256 IS NULL AND transcript_refused IS NULL",
      ),
      listCircuits: db.query(
        `SELECT id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, transcript_sha256, ceremony, transcript_refused, created_at, activated_at, retired_at FROM circuits ORDER BY created_at, id`,
      ),
      getCircuit: db.query(
        `SELECT id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, transcript_sha256, ceremony, transcript_refused, created_at, activated_at, retired_at FROM circuits WHERE id = ?`,
      ),
      circuitZkey: db.query("SELECT zkey AS bytes FROM circuits WHERE id = ?"),
      circuitWasm: db.query("SELECT wasm AS bytes FROM circuits WHERE id = ?"),
      demoteActiveCircuit: db.query("UPDATE circuits SET state = 'accepted' WHERE state = 'active' AND id <> ?"),
      activateCircuit: db.query("UPDATE circuits SET state = 'active', activated_at = ? WHERE id = ? AND state = 'accepted'"),
      retireCircuit: db.query("UPDATE circuits SET state = 'retired', retired_at = ? WHERE id = ? AND state = 'accepted'"),
      subscribedEndpoints: db.query("SELECT id FROM webhook_endpoints WHERE key_id = ? AND deleted_at IS NULL AND events LIKE ?"),
      outboxEvent: db.query("INSERT INTO webhook_events (id, key_id, type, session_id, created_at) VALUES ($eventId, $keyId, $type, $sessionId, $at)"),
      outboxDelivery: db.query(
        `INSERT INTO webhook_deliveries (event_id, endpoint_id, key_id, state, attempts, next_at, created_at)
         VALUES ($eventId, $endpointId, $keyId, 'pending', 0, $at, $at)`,
      ),
      insertEndpoint: db.query(
        `INSERT INTO webhook_endpoints (id, key_id, url, events, secret, previous_secret, previous_until, created_at, deleted_at)
         VALUES ($id, $keyId, $url, $events, $secret, $previousSecret, $previousUntil, $createdAt, NULL)`,
      ),
      listEndpoints: db.query("SELECT * FROM webhook_endpoints WHERE deleted_at IS NULL AND ($keyId IS NULL OR key_id = $keyId) ORDER BY created_at, id"),
      getEndpoint: db.query("SELECT * FROM webhook_endpoints WHERE id = ? AND key_id = ? AND deleted_at IS NULL"),
      deleteEndpoint: db.query("UPDATE webhook_endpoints SET deleted_at = ? WHERE id = ? AND key_id = ? AND deleted_at IS NULL"),
      failEndpointDeliveries: db.query(
        "UPDATE webhook_deliveries SET state = 'failed', last_error = 'endpoint deleted', finished_at = ?, lease_token = NULL, lease_until = NULL WHERE endpoint_id = ? AND state = 'pending'",
      ),
      rotateSecret: db.query(
        `UPDATE webhook_endpoints SET previous_secret = secret, previous_until = $previousUntil, secret = $secret
         WHERE id = $id AND key_id = $keyId AND deleted_at IS NULL RETURNING *`,
      ),
      claimDeliveries: db.query(
        `WITH due AS (
           SELECT event_id, endpoint_id, next_at, row_number() OVER (PARTITION BY endpoint_id ORDER BY next_at, event_id) AS place
           FROM webhook_deliveries
           WHERE state = 'pending' AND next_at <= $now AND (lease_until IS NULL OR lease_until < $now)
             AND endpoint_id NOT IN (SELECT value FROM json_each($skip)))
         UPDATE webhook_deliveries SET lease_token = $token, lease_until = $until
         WHERE (event_id, endpoint_id) IN (SELECT event_id, endpoint_id FROM due WHERE place <= $perEndpoint ORDER BY next_at LIMIT $limit)
           AND state = 'pending' AND (lease_until IS NULL OR lease_until < $now)`,
      ),
      claimed: db.query(
        `SELECT d.*, ev.type, ev.session_id, ev.payload, e.url AS ep_url, e.events AS ep_events, e.secret AS ep_secret,
                e.previous_secret AS ep_previous_secret, e.previous_until AS ep_previous_until, e.created_at AS ep_created_at, e.deleted_at AS ep_deleted_at
         FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id JOIN webhook_endpoints e ON e.id = d.endpoint_id
         WHERE d.lease_token = ? AND d.state = 'pending'`,
      ),
      setPayload: db.query("UPDATE webhook_events SET payload = ? WHERE id = ? AND payload IS NULL"),
      finishDelivery: db.query(
        `UPDATE webhook_deliveries SET state = $state, attempts = $attempts, next_at = $nextAt, last_status = $status, last_error = $error,
           finished_at = CASE WHEN $state = 'pending' THEN NULL ELSE $at END, lease_token = NULL, lease_until = NULL
         WHERE event_id = $eventId AND endpoint_id = $endpointId AND lease_token = $token AND state = 'pending'`,
      ),
      listDeliveries: db.query(
        `SELECT d.*, ev.type, ev.session_id FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
         WHERE ($keyId IS NULL OR d.key_id = $keyId) AND ($state IS NULL OR d.state = $state) AND ($eventId IS NULL OR d.event_id = $eventId)
         ORDER BY d.created_at DESC, d.event_id LIMIT $limit`,
      ),
      redeliver: db.query(
        `UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_at = $now, created_at = $now, finished_at = NULL, lease_token = NULL, lease_until = NULL
         WHERE event_id = $eventId AND ($keyId IS NULL OR key_id = $keyId)
           AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE deleted_at IS NULL)
           AND NOT (state = 'pending' AND lease_until IS NOT NULL AND lease_until >= $now)`,
      ),
      oldestPending: db.query("SELECT min(created_at) AS at FROM webhook_deliveries WHERE state = 'pending'"),
      purgeDeliveries: db.query("DELETE FROM webhook_deliveries WHERE state <> 'pending' AND finished_at < ?"),
      purgeEvents: db.query("DELETE FROM webhook_events WHERE created_at < ? AND id NOT IN (SELECT event_id FROM webhook_deliveries)"),
      pendingAll: db.query("SELECT count(*) AS n FROM challenges WHERE status = 'pending' AND expires_at >= ?"),
      pendingForKey: db.query("SELECT count(*) AS n FROM challenges WHERE key_id = ? AND status = 'pending' AND expires_at >= ?"),
    };
  }

  async createKey(key: ApiKeyRecord): Promise<void> {
    const { id, name, hash, rateLimit, createdAt, revokedAt } = key;
    this.q.insertKey.run({ id, name, hash, rateLimit, agentRateLimit: key.agentRateLimit ?? null, createdAt, revokedAt });
  }

  async getKey(id: string): Promise<ApiKeyRecord | null> {
    const row = this.q.getKey.get(id);
    return row ? toKey(row) : null;
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    return this.q.listKeys.all().map(toKey);
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    return this.q.revokeKey.run(at, id).changes === 1;
  }

  async setRateLimit(id: string, perMinute: number): Promise<boolean> {
    return this.immediate("set rate limit", () => this.q.setRateLimit.run(perMinute, id).changes === 1);
  }

  async setAgentRateLimit(id: string, perMinute: number | null): Promise<boolean> {
    return this.immediate("set agent rate limit", () => this.q.setAgentRateLimit.run(perMinute, id).changes === 1);
  }

  async usage(id: string): Promise<Usage | null> {
    const row = this.q.getKey.get(id);
    return row ? toUsage(row) : null;
  }

  async registerAgent(agent: AgentRecord, quota?: AgentQuota): Promise<RegisterAgentResult> {
    return this.immediate("register agent", (): RegisterAgentResult => {
      const { keyId, agentId, identityCommitment, signingKey, createdAt } = agent;
      const current = this.q.getAgent.get(keyId, agentId) as { revoked_at: number | null } | null;
      if (current && current.revoked_at === null) return "exists";
      if (quota && quota.limit > 0) {
        // Committed even when refused: a refused attempt holds its place in the window.
        const current = (this.q.countAgentWindow.get(keyId, quota.windowStart) as { count: number }).count;
        const weight = quota.previousWeight ?? 0;
        const previous = weight > 0 ? ((this.q.agentWindow.get(keyId, quota.windowStart - MINUTE_MS) as { count: number } | null)?.count ?? 0) : 0;
        if (current + carriedCount(previous, weight) > quota.limit) return { outcome: "rate_limited", previous, current };
      }
      if (!current) {
        const rows = (this.q.agentRows.get(keyId) as { agents: number } | null)?.agents ?? 0;
        if (quota && quota.maxAgents > 0 && rows >= quota.maxAgents) return "too_many_agents";
        this.q.countAgentRow.run(keyId);
      }
      const mandate = {
        principalKey: agent.principalKey ?? null,
        mandate: agent.mandate ?? null,
        mandateJws: agent.mandateJws ?? null,
        mandateIat: agent.mandateIat ?? null,
      };
      this.q.insertAgent.run({ keyId, agentId, identityCommitment, signingKey, signingKeyId: agent.signingKeyId ?? null, createdAt, ...mandate });
      return "created";
    });
  }

  async getAgent(keyId: string, agentId: string): Promise<AgentRecord | null> {
    const row = this.q.getAgent.get(keyId, agentId);
    return row ? toAgent(row) : null;
  }

  async agentsBySigningKeyId(keyId: string, signingKeyId: string, limit: number): Promise<AgentRecord[]> {
    return this.q.agentsBySigningKeyId.all(keyId, signingKeyId, limit).map(toAgent);
  }

  async agentsMissingSigningKeyId(limit: number): Promise<AgentRecord[]> {
    return this.q.agentsMissingSigningKeyId.all(limit).map(toAgent);
  }

  async setSigningKeyId(keyId: string, agentId: string, signingKey: string, signingKeyId: string): Promise<boolean> {
    return this.immediate("set signing key id", () => this.q.setSigningKeyId.run(signingKeyId, keyId, agentId, signingKey).changes > 0);
  }

  async revokeAgent(keyId: string, agentId: string, at: number): Promise<AgentRecord | null> {
    const row = await this.immediate("revoke agent", () => this.q.revokeAgent.get(at, keyId, agentId));
    return row ? toAgent(row) : null;
  }

  async setMandate(keyId: string, agentId: string, mandate: StoredMandate | null): Promise<SetMandateResult> {
    const { mandate: text = null, mandateJws = null, mandateIat = null } = mandate ?? {};
    // On the HTTP path: waits for another process's lock on timers, like every server write.
    return this.immediate("set mandate", (): SetMandateResult => {
      const row = this.q.setMandate.get({ keyId, agentId, mandate: text, mandateJws, mandateIat });
      if (row) return { outcome: "set", agent: toAgent(row) };
      const current = this.q.getAgent.get(keyId, agentId);
      return setMandateRefusal(current ? toAgent(current) : null, mandate);
    });
  }

  async createGroup(group: GroupRecord, maxPerKey = 0): Promise<"created" | "exists" | "too_many"> {
    return this.immediate("create group", () => {
      if (this.q.groupExists.get(group.groupId)) return "exists";
      if (maxPerKey > 0 && (this.q.countGroups.get(group.keyId) as { n: number }).n >= maxPerKey) return "too_many";
      const challengers = group.challengers === null ? null : JSON.stringify(group.challengers);
      const inserted = this.q.insertGroup.run({ groupId: group.groupId, keyId: group.keyId, createdAt: group.createdAt, mandate: group.mandate, challengers });
      return inserted.changes === 1 ? "created" : "exists";
    });
  }

  async getGroup(groupId: string): Promise<GroupRecord | null> {
    const row = this.q.getGroup.get(groupId);
    return row ? toGroup(row) : null;
  }

  async changeGroup(groupId: string, keyId: string, change: GroupChange, trees: TreeCache): Promise<ChangeGroupResult> {
    return changeGroupOptimistically(trees, groupId, keyId, change, {
      read: async (id) => this.getGroup(id),
      leavesSince: async (id, version) => (this.q.leavesSince.all(id, version) as { leaf_index: number; commitment: string }[]).map(toLeaf),
      // One read transaction: in WAL mode it sees one commit's state throughout.
      snapshot: async (id) =>
        this.db.transaction(() => {
          const row = this.q.getGroup.get(id);
          if (!row) return null;
          const { version, root } = toGroup(row);
          const leaves = (this.q.allLeaves.all(id) as { commitment: string }[]).map((r) => r.commitment);
          return { version, root, leaves, levels: levelsOf(this.q.allNodes.all(id) as NodeRow[]) };
        })(),
      removedBefore: async (id, commitments) => {
        const row = this.q.removedAmong.get(id, JSON.stringify(commitments)) as { commitment: string } | null;
        return row ? commitments.indexOf(row.commitment) : -1;
      },
      commit: ({ group, leaves, nodes, at, requestId }) =>
        this.immediate("change group", (): GroupRecord | null => {
          const current = this.q.getGroup.get(groupId) as { version: number } | null;
          if (!current || current.version !== group.version - 1) return null;
          const { version, size, activeMembers: active, depth, root, removedVersion } = group;
          // The group row first: the audit triggers on the leaves read its changed_at and request id.
          const updated = toGroup(this.q.updateGroup.get({ groupId, version, size, active, depth, root, removedVersion, at, requestId }));
          this.q.putLeaves.run({ groupId, version, leaves: JSON.stringify(leaves.map((leaf) => [leaf.index, leaf.value])) });
          if (nodes.length > 0) this.q.putNodes.run({ groupId, nodes: JSON.stringify(nodes.map((node) => [node.level, node.index, node.value])) });
          this.q.insertRoot.run(groupId, version, root);
          return updated;
        }),
    });
  }

  async groupMembers(groupId: string, offset: number, limit: number): Promise<string[]> {
    return (this.q.members.all(groupId, offset, limit) as { commitment: string }[]).map((r) => r.commitment);
  }

  async groupChanges(groupId: string, since: number, from: number, limit: number): Promise<Leaf[]> {
    const rows = since === 0 ? this.q.leavesFrom.all(groupId, from, limit) : this.q.changes.all(groupId, since, from, limit);
    return (rows as { leaf_index: number; commitment: string }[]).map(toLeaf);
  }

  async setGroupChallengers(groupId: string, keyId: string, challengers: string[] | null) {
    return this.immediate("set group challengers", () => {
      const row = this.q.getGroup.get(groupId) as { key_id: string } | null;
      if (!row) return { outcome: "not_found" as const };
      if (row.key_id !== keyId) return { outcome: "forbidden" as const };
      const stored = challengers === null ? null : JSON.stringify(challengers);
      return { outcome: "set" as const, group: toGroup(this.q.setGroupChallengers.get(stored, groupId)) };
    });
  }

  async setGroupMandate(groupId: string, keyId: string, mandate: string | null) {
    return this.immediate("set group mandate", () => {
      const row = this.q.getGroup.get(groupId) as { key_id: string } | null;
      if (!row) return { outcome: "not_found" as const };
      if (row.key_id !== keyId) return { outcome: "forbidden" as const };
      return { outcome: "set" as const, group: toGroup(this.q.setGroupMandate.get(mandate, groupId)) };
    });
  }

  async acceptableRoot(groupId: string, root: string): Promise<boolean> {
    return this.q.acceptableRoot.get(groupId, root) !== null;
  }

  private spendRow(keyId: string, agentId: string, key: SpendKey): Spend {
    const row = this.q.getSpend.get({ keyId, agentId, ...key });
    return row ? toSpend(row) : NO_SPEND;
  }

  async readSpend(keyId: string, agentId: string, keys: readonly SpendKey[]): Promise<Spend[]> {
    return keys.map((key) => this.spendRow(keyId, agentId, key));
  }

  /** The previous minute's count, weighted as the sliding minute covers it (0 without a weight). */
  private carried(keyId: string, window: RateWindow): { previous: number; carried: number } {
    const weight = window.previousWeight ?? 0;
    if (weight <= 0) return { previous: 0, carried: 0 };
    const previous = (this.q.rateWindow.get(keyId, window.windowStart - MINUTE_MS) as { count: number } | null)?.count ?? 0;
    return { previous, carried: carriedCount(previous, weight) };
  }

  private readonly createChallengeTx = (challenge: ChallengeRecord, window: RateWindow): CreateChallengeResult => {
    let used = 0;
    if (window.limit > 0) {
      const current = (this.q.countWindow.get(challenge.keyId, window.windowStart) as { count: number }).count;
      const { previous, carried } = this.carried(challenge.keyId, window);
      used = current + carried;
      if (used > window.limit) return { created: false, used, previous, current };
    }
    this.insertChallenge(challenge);
    this.q.countChallenge.run(challenge.keyId);
    return { created: true, used };
  };

  /** The challenge's row, as both the single and the group-commit creation write it. */
  private insertChallenge(challenge: ChallengeRecord): void {
    const { id, keyId, agentId, action, context, nonce, createdAt, expiresAt } = challenge;
    this.q.insertChallenge.run({
      id,
      keyId,
      agentId,
      action,
      context,
      nonce,
      createdAt,
      expiresAt,
      requestId: challenge.requestId ?? null,
      circuitId: challenge.circuitId ?? null,
      groupId: challenge.groupId ?? null,
      groupRoot: challenge.groupRoot ?? null,
      groupDepth: challenge.groupDepth ?? null,
    });
  }

  // Group commit. A transaction's cost is mostly its COMMIT (the WAL append
  // and lock round trip), so the creations that reach the store in one turn
  // of the event loop share one transaction: each is queued, and a
  // setImmediate (which runs after the loop has dispatched every request
  // that arrived this turn) commits them together. Every caller's promise
  // settles only after that COMMIT returns, so no 200 is sent before its
  // challenge is durable. Each item runs in its own savepoint (bun:sqlite
  // nests db.transaction() that way): an item that throws is rolled back
  // alone, rate-window count included, and only its caller sees the error.
  // Rate limits stay exact because items run one after another inside the
  // transaction, each reading the count the previous one left.
  //
  // The batch is first written at once (writeTogether: one rate-window
  // increment by n per key and window, one usage increment per key); only
  // when an item fails is the transaction rolled back and the batch written
  // item by item, in savepoints, as above.
  private pending: { challenge: ChallengeRecord; window: RateWindow; resolve: (r: CreateChallengeResult) => void; reject: (e: unknown) => void }[] = [];
  private flushScheduled = false;
  // Built on first use: field initialisers run before the constructor has set this.db.
  private challengeSavepoint?: (challenge: ChallengeRecord, window: RateWindow) => CreateChallengeResult;

  async createChallenge(challenge: ChallengeRecord, window: RateWindow): Promise<CreateChallengeResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ challenge, window, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flushChallenges);
      }
    });
  }

  private readonly flushChallenges = (closing = false): void => {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    // Another process (a sibling worker, the CLI) may hold the write lock.
    // SQLite's busy handler would sleep this whole process in 1–100 ms steps;
    // instead try the lock without waiting and, when it is taken, keep
    // serving and queueing, and try again on the next turn — the batch only
    // grows meanwhile. After lockWaitMs of that, give up: StoreUnavailableError.
    this.flushWaitingSince ??= Date.now();
    const batch = this.pending;
    try {
      if (!this.tryBeginImmediate()) {
        const waited = Date.now() - this.flushWaitingSince;
        if (!closing && waited < this.lockWaitMs) {
          this.flushScheduled = true;
          setTimeout(this.flushChallenges, 0);
          return;
        }
        throw locked("create challenge", waited);
      }
    } catch (error) {
      this.flushWaitingSince = undefined;
      this.pending = [];
      for (const item of batch) item.reject(error);
      return;
    }
    this.flushWaitingSince = undefined;
    this.pending = [];
    let outcomes: ({ ok: true; value: CreateChallengeResult } | { ok: false; error: unknown })[] = [];
    const savepoint = (this.challengeSavepoint ??= this.db.transaction(this.createChallengeTx));
    try {
      const together = this.writeTogether(batch);
      if (together) outcomes = together.map((value) => ({ ok: true, value }));
      else {
        // Rare (an item's insert failed, and writeTogether rolled back): take
        // the lock again without waiting. If another process got it in
        // between, the batch answers 503 rather than park the event loop in
        // SQLite's busy handler. (A savepoint around writeTogether would keep
        // the lock, but its SAVEPOINT/RELEASE on every batch cost 15–25 % of
        // challenge creation under wrk.)
        if (!this.tryBeginImmediate()) throw locked("create challenge", 0);
        for (const item of batch) {
          try {
            outcomes.push({ ok: true, value: savepoint(item.challenge, item.window) });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      }
      this.db.exec("COMMIT");
    } catch (error) {
      // COMMIT failed (disk full, I/O error): nothing in the batch is stored,
      // so every caller gets the error.
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  };

  private flushWaitingSince: number | undefined;

  /**
   * The whole batch with one count per rate window and one usage update per
   * key, inside the open transaction; null when any item fails, after rolling
   * the whole transaction back (the caller then starts a new one and writes
   * the items one by one). Per (key, window, limit) the window's count goes up
   * by n at once and returns the new total C: the group's items are the
   * window's requests C − n + 1 … C in arrival order, and each is stored iff
   * its place is within the limit — what n single increments in that order
   * decide (a refused request keeps its place).
   *
   * No savepoint around it: inside one, every insert after the first needs a
   * statement journal, which made the batch 2–3× slower than the per-item
   * savepoints it replaces (measured in process, 64 creations per batch).
   */
  private writeTogether(batch: readonly { challenge: ChallengeRecord; window: RateWindow }[]): CreateChallengeResult[] | null {
    try {
      const results: CreateChallengeResult[] = new Array(batch.length);
      const groups = new Map<string, number[]>();
      batch.forEach(({ challenge, window }, i) => {
        if (window.limit === 0) {
          results[i] = { created: true, used: 0 };
          return;
        }
        const group = `${challenge.keyId}\u0000${window.windowStart}\u0000${window.limit}`;
        const members = groups.get(group);
        if (members) members.push(i);
        else groups.set(group, [i]);
      });
      for (const members of groups.values()) {
        const { challenge, window } = batch[members[0]!]!;
        const total = (this.q.countWindowBy.get(challenge.keyId, window.windowStart, members.length) as { count: number }).count;
        // One turn of the event loop: the first item's weight stands for the batch's (they differ by a millisecond or so).
        const { previous, carried } = this.carried(challenge.keyId, window);
        members.forEach((i, k) => {
          const current = total - members.length + 1 + k;
          const used = current + carried;
          results[i] = used <= window.limit ? { created: true, used } : { created: false, used, previous, current };
        });
      }
      const createdPerKey = new Map<string, number>();
      batch.forEach(({ challenge }, i) => {
        if (!results[i]!.created) return;
        this.insertChallenge(challenge);
        createdPerKey.set(challenge.keyId, (createdPerKey.get(challenge.keyId) ?? 0) + 1);
      });
      for (const [keyId, n] of createdPerKey) this.q.countChallenges.run(n, keyId);
      return results;
    } catch {
      this.db.exec("ROLLBACK");
      return null;
    }
  }

  /** BEGIN IMMEDIATE without waiting: false when another connection holds the write lock. */
  private tryBeginImmediate(): boolean {
    this.db.exec("PRAGMA busy_timeout = 0");
    try {
      this.db.exec("BEGIN IMMEDIATE");
      return true;
    } catch (error) {
      if ((error as { code?: string }).code === "SQLITE_BUSY") return false;
      throw error;
    } finally {
      this.db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /**
   * Runs `write` in a BEGIN IMMEDIATE transaction, waiting for another
   * process's write lock the way the group commit does: try without waiting,
   * and while it is taken, retry on a timer (1 ms doubling to 25 ms) so the
   * event loop keeps serving — /health answers, other requests proceed.
   * After lockWaitMs: StoreUnavailableError. `write` is synchronous, so no
   * other code of this process runs inside the transaction.
   */
  private async immediate<T>(what: string, write: () => T): Promise<T> {
    const started = Date.now();
    let pause = LOCK_RETRY_FIRST_MS;
    while (!this.tryBeginImmediate()) {
      const waited = Date.now() - started;
      if (waited >= this.lockWaitMs) throw locked(what, waited);
      await Bun.sleep(Math.min(pause, this.lockWaitMs - waited));
      pause = Math.min(pause * 2, LOCK_RETRY_MAX_MS);
    }
    try {
      const result = write();
      this.db.exec("COMMIT");
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      throw error;
    }
  }

  async getChallenge(id: string): Promise<ChallengeRecord | null> {
    const row = this.q.getChallenge.get(id);
    return row ? toChallenge(row) : null;
  }

  async getChallengeWithAgent(id: string): Promise<{ challenge: ChallengeRecord; agent: AgentRecord | null } | null> {
    const row = this.q.getChallenge.get(id);
    if (!row) return null;
    const challenge = toChallenge(row);
    const agent = this.q.getAgent.get(challenge.keyId, challenge.agentId);
    return { challenge, agent: agent ? toAgent(agent) : null };
  }

  private readonly decideTx = (id: string, proposed: Decision, scope?: MandateScope): DecideResult => {
    // The mandate check runs inside this write transaction, which excludes
    // every other writer on the file (any process), so the totals it reads
    // are the ones it updates.
    let decision = proposed;
    let mandate: MandateDecision | null = null;
    let checked: MandateResult | null = null;
    const group = scope?.group;
    if (scope && group && proposed.status === "verified") {
      // The root is judged here, inside the deciding write transaction: a
      // removal committed by any process before it refuses the removed member.
      if (this.q.acceptableRoot.get(group.groupId, group.root) === null) {
        decision = refuseRoot(proposed);
      } else {
        const row = this.q.getGroup.get(group.groupId) as { mandate: string | null } | null;
        const plan = planMandate(row ? { mandate: row.mandate, mandateJws: null } : null, scope, proposed.decidedAt);
        if (plan) {
          const spend = (key: SpendKey) => {
            const found = this.q.getGroupSpend.get({ keyId: scope.keyId, groupId: group.groupId, pseudonym: group.pseudonym, ...key });
            return found ? toSpend(found) : NO_SPEND;
          };
          checked = plan.evaluate(new Map(plan.keys.map((key) => [spendKeyId(key), spend(key)])));
          ({ decision, mandate } = applyMandate(proposed, plan, checked));
        }
      }
    } else if (scope && proposed.status === "verified") {
      const agent = this.q.getAgent.get(scope.keyId, scope.agentId);
      const plan = planMandate(agent ? toAgent(agent) : null, scope, proposed.decidedAt);
      if (plan) {
        checked = plan.evaluate(new Map(plan.keys.map((key) => [spendKeyId(key), this.spendRow(scope.keyId, scope.agentId, key)])));
        ({ decision, mandate } = applyMandate(proposed, plan, checked));
      }
    }
    const { status, decidedAt, confidence, reason } = decision;
    const evidence = evidenceText(decision.evidence);
    const receipt = decision.receipt ?? null;
    const row = this.q.decide.get({ id, status, decidedAt, confidence, reason, requestId: decision.requestId ?? null, evidence, receipt });
    if (!row) {
      const current = this.q.getChallenge.get(id);
      return { decided: false, record: current ? toChallenge(current) : null };
    }
    const record = toChallenge(row);
    if (checked?.ok) {
      for (const { key, spend } of checked.updates) {
        if (group) this.q.putGroupSpend.run({ keyId: scope!.keyId, groupId: group.groupId, pseudonym: group.pseudonym, ...key, ...spend });
        else this.q.putSpend.run({ keyId: scope!.keyId, agentId: scope!.agentId, ...key, ...spend });
      }
    }
    (decision.status === "verified" ? this.q.countVerified : this.q.countFailed).run(record.keyId);
    return { decided: true, record, ...(scope ? { mandate } : {}) };
  };

  async decideChallenge(id: string, decision: Decision, mandate?: MandateScope): Promise<DecideResult> {
    let evented = false;
    const result = await this.immediate("decide challenge", () => {
      const outcome = this.decideTx(id, decision, mandate);
      // The decision's webhook event, in the decision's own transaction: both commit or neither.
      if (outcome.decided) evented = this.writeOutbox(outcome.record);
      return outcome;
    });
    if (evented) outboxWritten();
    return result;
  }

  /** The decided record's event and its deliveries, when the key has an endpoint subscribed to it. Inside the open transaction. */
  private writeOutbox(record: ChallengeRecord): boolean {
    const type = eventTypeOf(record.status as "verified" | "failed");
    // A read, then single-row inserts: a key without endpoints costs the
    // decision one indexed read, and no INSERT … SELECT (which takes a
    // statement journal inside a transaction) runs at all (bench/outbox.ts).
    const endpoints = this.q.subscribedEndpoints.all(record.keyId, subscribedPattern(type)) as { id: string }[];
    if (endpoints.length === 0) return false;
    const params = { eventId: newEventId(), keyId: record.keyId, at: record.decidedAt! };
    this.q.outboxEvent.run({ ...params, type, sessionId: record.id });
    for (const { id } of endpoints) this.q.outboxDelivery.run({ ...params, endpointId: id });
    return true;
  }

  async claimChallenge(id: string, claim: Claim): Promise<ClaimResult> {
    return this.immediate("claim challenge", (): ClaimResult => {
      if (this.q.claim.get({ id, ...claim })) return { claimed: true };
      const current = this.q.getChallenge.get(id);
      return { claimed: false, record: current ? toChallenge(current) : null };
    });
  }

  async releaseClaim(id: string, token: string): Promise<void> {
    await this.immediate("release claim", () => this.q.releaseClaim.run(id, token));
  }

  async purgeChallenges(expiredBefore: number): Promise<number> {
    return this.immediate("purge challenges", () => {
      const removed = this.q.purge.run(expiredBefore).changes;
      this.q.purgeWindows.run(expiredBefore);
      this.q.purgeAgentWindows.run(expiredBefore);
      return removed;
    });
  }

  async purgeAudit(before: number): Promise<number> {
    return this.immediate("purge audit", () => {
      // Open the gate for rows older than `before`, delete, close it again — one transaction.
      this.q.openAuditGate.run(before);
      const removed = this.q.purgeAudit.run(before).changes;
      this.q.openAuditGate.run(0);
      return removed;
    });
  }

  async countPending(now: number, keyId?: string): Promise<number> {
    const row = (keyId === undefined ? this.q.pendingAll.get(now) : this.q.pendingForKey.get(keyId, now)) as { n: number };
    return row.n;
  }

  async listAudit(query: AuditQuery): Promise<AuditEntry[]> {
    return this.q.audit.all({ afterSeq: query.afterSeq ?? 0, keyId: query.keyId ?? null, limit: query.limit }).map(toAudit);
  }

  async storeReceipt(id: string, receipt: string): Promise<string | null> {
    // Conditional: the first receipt stored stays (see postgres.ts).
    // On the proof path: waits for another process's lock on timers, like decideChallenge.
    const row = (await this.immediate("store receipt", () => this.q.storeReceipt.get(receipt, id) ?? this.q.getReceipt.get(id))) as {
      receipt: string | null;
    } | null;
    return row?.receipt ?? null;
  }

  async ensureSigningKey(candidate: SigningKeyRecord): Promise<SigningKeyRecord> {
    const { kid, publicJwk, privateKey, createdAt } = candidate;
    // ON CONFLICT DO NOTHING: the unique index on the active state (or the
    // kid) refuses a second active key; the first one inserted stays.
    return this.immediate("create signing key", () => {
      this.q.insertFirstSigningKey.run({ kid, publicJwk, privateKey, createdAt });
      return toSigningKey(this.q.activeSigningKey.get());
    });
  }

  async activeSigningKey(): Promise<SigningKeyRecord | null> {
    const row = this.q.activeSigningKey.get();
    return row ? toSigningKey(row) : null;
  }

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    return this.q.listSigningKeys.all().map(toSigningKey);
  }

  private readonly rotateTx = (next: SigningKeyRecord): string | null => {
    const previous = this.q.demoteActiveKey.get() as { kid: string } | null;
    this.q.insertSigningKey.run({ ...next, state: "active", retiredAt: null });
    return previous?.kid ?? null;
  };

  async rotateSigningKey(next: SigningKeyRecord): Promise<string | null> {
    return this.db.transaction(this.rotateTx).immediate(next);
  }

  async retireSigningKey(kid: string, at: number): Promise<"retired" | "already_retired" | "active" | "unknown"> {
    if (this.q.retireSigningKey.run(at, kid).changes === 1) return "retired";
    const row = this.q.getSigningKey.get(kid) as { state: string } | null;
    if (!row) return "unknown";
    return row.state === "active" ? "active" : "already_retired";
  }

  private readonly addCircuitTx = (c: CircuitWithArtifacts): { added: boolean; state: CircuitState } => {
    const { id, vk, vkHash, zkeySha256, wasmSha256, transcript, transcriptSha256, refused, zkey, wasm, createdAt } = c;
    const ceremony = c.ceremony ? JSON.stringify(c.ceremony) : null;
    const added =
      this.q.insertCircuit.run({ id, vk, vkHash, zkeySha256, wasmSha256, transcript, transcriptSha256, ceremony, refused, zkey, wasm, createdAt }).changes ===
      1;
    return { added, state: (this.q.getCircuit.get(id) as { state: CircuitState }).state };
  };

  async addCircuit(circuit: CircuitWithArtifacts): Promise<{ added: boolean; state: CircuitState }> {
    return this.immediate("add circuit", () => this.addCircuitTx(circuit));
  }

  async rebuildCircuitListing(id: string, outcome: CircuitListing | { refused: string }): Promise<boolean> {
    const changed =
      "refused" in outcome
        ? this.q.refuseCircuitListing.run({ id, refused: outcome.refused })
        : this.q.rebuildCircuitListing.run({
            id,
            transcript: outcome.transcript,
            transcriptSha256: outcome.transcriptSha256,
            ceremony: JSON.stringify(outcome.ceremony),
          });
    return changed.changes === 1;
  }

  async listCircuits(): Promise<CircuitRecord[]> {
    return this.q.listCircuits.all().map(toCircuit);
  }

  async getCircuit(id: string): Promise<CircuitRecord | null> {
    const row = this.q.getCircuit.get(id);
    return row ? toCircuit(row) : null;
  }

  async circuitArtifact(id: string, artifact: "zkey" | "wasm"): Promise<Uint8Array | null> {
    const row = (artifact === "zkey" ? this.q.circuitZkey : this.q.circuitWasm).get(id) as { bytes: Uint8Array } | null;
    return row ? new Uint8Array(row.bytes) : null;
  }

  private readonly activateCircuitTx = (id: string, at: number): ActivateCircuitResult => {
    const row = this.q.getCircuit.get(id) as { state: CircuitState } | null;
    if (!row) return "unknown";
    if (row.state === "active") return "already_active";
    if (row.state === "retired") return "retired";
    this.q.demoteActiveCircuit.run(id);
    this.q.activateCircuit.run(at, id);
    return "activated";
  };

  async activateCircuit(id: string, at: number): Promise<ActivateCircuitResult> {
    return this.immediate("activate circuit", () => this.activateCircuitTx(id, at));
  }

  async retireCircuit(id: string, at: number): Promise<RetireCircuitResult> {
    if (this.q.retireCircuit.run(at, id).changes === 1) return "retired";
    const row = this.q.getCircuit.get(id) as { state: CircuitState } | null;
    if (!row) return "unknown";
    return row.state === "active" ? "active" : "already_retired";
  }

  private readonly reserveTx = (keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number): IdempotencyState => {
    if (this.q.reserveIdem.run(keyId, idemKey, fingerprint, now).changes === 1) return { state: "new" };
    if (this.q.takeOverIdem.run(now, keyId, idemKey, fingerprint, staleBefore).changes === 1) return { state: "new" };
    return heldIdempotency(this.q.getIdem.get(keyId, idemKey), fingerprint);
  };

  async reserveIdempotency(keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number): Promise<IdempotencyState> {
    return this.immediate("reserve idempotency key", () => this.reserveTx(keyId, idemKey, fingerprint, now, staleBefore));
  }

  async completeIdempotency(keyId: string, idemKey: string, status: number, body: string): Promise<void> {
    await this.immediate("complete idempotency key", () => this.q.completeIdem.run(status, body, keyId, idemKey));
  }

  async releaseIdempotency(keyId: string, idemKey: string): Promise<void> {
    await this.immediate("release idempotency key", () => this.q.releaseIdem.run(keyId, idemKey));
  }

  async purgeIdempotency(before: number): Promise<number> {
    return this.immediate("purge idempotency keys", () => this.q.purgeIdem.run(before).changes);
  }

  async createWebhookEndpoint(endpoint: WebhookEndpointRecord): Promise<void> {
    const { id, keyId, url, events, secret, previousSecret, previousUntil, createdAt } = endpoint;
    await this.immediate("create webhook endpoint", () =>
      this.q.insertEndpoint.run({ id, keyId, url, events, secret, previousSecret, previousUntil, createdAt }),
    );
  }

  async listWebhookEndpoints(keyId: string | null): Promise<WebhookEndpointRecord[]> {
    return this.q.listEndpoints.all({ keyId }).map(toWebhookEndpoint);
  }

  async getWebhookEndpoint(keyId: string, id: string): Promise<WebhookEndpointRecord | null> {
    const row = this.q.getEndpoint.get(id, keyId);
    return row ? toWebhookEndpoint(row) : null;
  }

  async deleteWebhookEndpoint(keyId: string, id: string, at: number): Promise<boolean> {
    return this.immediate("delete webhook endpoint", () => {
      if (this.q.deleteEndpoint.run(at, id, keyId).changes !== 1) return false;
      this.q.failEndpointDeliveries.run(at, id);
      return true;
    });
  }

  async rotateWebhookSecret(keyId: string, id: string, secret: string, previousUntil: number): Promise<WebhookEndpointRecord | null> {
    const row = await this.immediate("rotate webhook secret", () => this.q.rotateSecret.get({ id, keyId, secret, previousUntil }));
    return row ? toWebhookEndpoint(row) : null;
  }

  async claimWebhookDeliveries(claim: WebhookClaim): Promise<ClaimedWebhookDelivery[]> {
    const { token, now, until, limit, perEndpoint } = claim;
    return this.immediate("claim webhook deliveries", () => {
      this.q.claimDeliveries.run({ token, now, until, limit, perEndpoint, skip: JSON.stringify(claim.skipEndpoints) });
      return this.q.claimed.all(token).map(toClaimedWebhookDelivery);
    });
  }

  async finishWebhookDelivery(eventId: string, endpointId: string, token: string, outcome: WebhookAttemptOutcome): Promise<boolean> {
    const { payload, ...fields } = outcome;
    return this.immediate("record webhook attempt", () => {
      if (this.q.finishDelivery.run({ eventId, endpointId, token, ...fields }).changes !== 1) return false;
      if (payload !== undefined) this.q.setPayload.run(payload, eventId);
      return true;
    });
  }

  async listWebhookDeliveries(query: WebhookDeliveryQuery): Promise<WebhookDeliveryRecord[]> {
    const { keyId = null, state = null, eventId = null, limit } = query;
    return this.q.listDeliveries.all({ keyId, state, eventId, limit }).map(toWebhookDelivery);
  }

  async redeliverWebhook(eventId: string, keyId: string | null, now: number): Promise<number> {
    const changed = await this.immediate("redeliver webhook", () => this.q.redeliver.run({ eventId, keyId, now }).changes);
    if (changed > 0) outboxWritten();
    return changed;
  }

  async purgeWebhooks(before: number): Promise<number> {
    return this.immediate("purge webhooks", () => {
      const removed = this.q.purgeDeliveries.run(before).changes;
      this.q.purgeEvents.run(before);
      return removed;
    });
  }

  async oldestPendingWebhook(): Promise<number | null> {
    const row = this.q.oldestPending.get() as { at: number | null };
    return row.at === null ? null : Number(row.at);
  }

  async ping(): Promise<void> {
    this.db.query("SELECT 1").get();
  }

  async close(): Promise<void> {
    this.flushChallenges(true); // creations already accepted are committed, not dropped
    this.db.close(false);
  }
}
