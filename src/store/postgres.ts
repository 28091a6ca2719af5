// The multi-node store: PostgreSQL through Bun's built-in SQL client.
//
// Several service processes on several hosts share one database, so every
// guarantee lives in a single statement or transaction on the server, never in
// this process: one-time use is one conditional UPDATE (PostgreSQL's row lock
// makes concurrent updaters of the same row wait and then re-check the WHERE
// against the committed row, so exactly one matches); rate windows and
// counters are atomic increments. Behaviour mirrors sqlite.ts exactly; the
// same contract suite (test/store/contract.ts) runs against both.
import { SQL } from "bun";
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
  DecideResult,
  Decision,
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
import { migratePostgres } from "./migrations/postgres";
import { eventTypeOf, newEventId, subscribedPattern } from "../webhooks/events";
import { outboxWritten } from "../webhooks/wake";
import { changeGroupOptimistically, levelsOf, refuseRoot, toLeaf } from "./groups";
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
  toClaimedWebhookDelivery,
  toKey,
  toSigningKey,
  toSpend,
  toUsage,
  toWebhookDelivery,
  toWebhookEndpoint,
  toGroup,
} from "./rows";

export interface PostgresOptions {
  /** Connections in this process's pool. */
  poolSize?: number;
}

export const DEFAULT_POOL_SIZE = 10;
const CONNECT_TIMEOUT_S = 5;

/**
 * Whether an error means "the database cannot be reached" rather than "this
 * query is wrong": the client's connection errors (refused, closed, timed
 * out), and the server's SQLSTATE classes 08 (connection exception), 57P01–03
 * (shutting down, cannot connect now), 53300 (too many connections), and
 * those refusing a new connection: 3D000 (the database is gone), 28xxx
 * (authorization).
 */
export function isConnectionFailure(error: unknown): boolean {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  if (typeof code === "string" && /^ERR_POSTGRES_(CONNECTION_|IDLE_TIMEOUT|LIFETIME_TIMEOUT|TLS)/.test(code)) return true;
  if (typeof code === "string" && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH)$/.test(code)) return true;
  const state = typeof errno === "string" ? errno : "";
  return (
    state.startsWith("08") || state.startsWith("28") || state === "57P01" || state === "57P02" || state === "57P03" || state === "53300" || state === "3D000"
  );
}

/**
 * PostgreSQL TEXT cannot hold U+0000; a query naming one fails with
 * "invalid byte sequence" (22021). An identifier with NUL names no row, so
 * lookups answer "none" without asking, as SQLite's do.
 */
const hasNul = (...texts: string[]) => texts.some((text) => text.includes("\0"));

/** Advisory lock id for "adding or activating a circuit" (arbitrary, fixed). */
const CIRCUIT_LOCK_ID = 7_316_402_919n;
/** Advisory lock id for "rotating the receipt signing key" (arbitrary, fixed). */
const SIGNING_KEY_LOCK_ID = 7_316_402_918n;

export async function openPostgres(url: string, options: PostgresOptions = {}): Promise<PostgresStore> {
  const sql = new SQL(url, {
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    // Bun prefers PGDATABASE from the environment over the database named in
    // the URL; the URL is the configuration, so pass its database explicitly.
    ...databaseFromUrl(url),
    // int8 columns come back as strings (bigint: false); rows.ts maps them
    // with Number(), exact for millisecond times and realistic counters.
    bigint: false,
    // An unreachable server (not a refusing one) must not hold a request for
    // Bun's default 30 s: after this the query fails, and the caller gets 503.
    connectionTimeout: CONNECT_TIMEOUT_S,
  });
  try {
    await migratePostgres(sql);
  } catch (error) {
    await sql.close({ timeout: 0 });
    throw error;
  }
  return new PostgresStore(sql);
}

function databaseFromUrl(url: string): { database?: string } {
  try {
    const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));
    return name ? { database: name } : {};
  } catch {
    return {};
  }
}

interface QueuedCreation {
  challenge: ChallengeRecord;
  window: RateWindow;
  resolve: (result: CreateChallengeResult) => void;
  reject: (error: unknown) => void;
}

/** Items per creation statement; a larger queue is written in several. */
const MAX_GROUP = 500;

/** Usage shard rows per key: concurrent writers of one key pick different rows (migration 4). */
export const USAGE_SHARDS = 16;
const usageShard = (): number => Math.floor(Math.random() * USAGE_SHARDS);

export class PostgresStore implements Store {
  readonly kind = "postgres" as const;

  constructor(private readonly sql: SQL) {}

  async createKey(key: ApiKeyRecord): Promise<void> {
    await this.sql`
      INSERT INTO api_keys (id, name, hash, rate_limit, agent_rate_limit, created_at, revoked_at)
      VALUES (${key.id}, ${key.name}, ${key.hash}, ${key.rateLimit}, ${key.agentRateLimit ?? null}, ${key.createdAt}, ${key.revokedAt})`;
  }

  async getKey(id: string): Promise<ApiKeyRecord | null> {
    if (hasNul(id)) return null;
    const [row] = await this.sql`SELECT * FROM api_keys WHERE id = ${id}`;
    return row ? toKey(row) : null;
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    const rows = await this.sql`SELECT * FROM api_keys ORDER BY created_at, id`;
    return rows.map(toKey);
  }

  async revokeKey(id: string, at: number): Promise<boolean> {
    const rows = await this.sql`UPDATE api_keys SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL RETURNING id`;
    return rows.length === 1;
  }

  async setRateLimit(id: string, perMinute: number): Promise<boolean> {
    const rows = await this.sql`UPDATE api_keys SET rate_limit = ${perMinute} WHERE id = ${id} RETURNING id`;
    return rows.length === 1;
  }

  async setAgentRateLimit(id: string, perMinute: number | null): Promise<boolean> {
    const rows = await this.sql`UPDATE api_keys SET agent_rate_limit = ${perMinute} WHERE id = ${id} RETURNING id`;
    return rows.length === 1;
  }

  async usage(id: string): Promise<Usage | null> {
    if (hasNul(id)) return null;
    const [row] = await this.sql`
      SELECT coalesce(sum(u.challenges), 0) AS challenges, coalesce(sum(u.verified), 0) AS verified, coalesce(sum(u.failed), 0) AS failed
      FROM api_keys k LEFT JOIN usage_counters u ON u.key_id = k.id WHERE k.id = ${id} GROUP BY k.id`;
    return row ? toUsage(row) : null;
  }

  async registerAgent(agent: AgentRecord, quota?: AgentQuota): Promise<RegisterAgentResult> {
    const { keyId, agentId, identityCommitment, signingKey, createdAt } = agent;
    const signingKeyId = agent.signingKeyId ?? null;
    const [principalKey, mandate, mandateJws, mandateIat] = [
      agent.principalKey ?? null,
      agent.mandate ?? null,
      agent.mandateJws ?? null,
      agent.mandateIat ?? null,
    ];
    return this.sql.begin(async (tx): Promise<RegisterAgentResult> => {
      // The key's row, locked: registrations of one key are serialised, so the
      // row count and the cap stay exact across nodes.
      const [key] = await tx`SELECT agents FROM api_keys WHERE id = ${keyId} FOR UPDATE`;
      const [current] = await tx`SELECT revoked_at FROM agents WHERE key_id = ${keyId} AND agent_id = ${agentId}`;
      if (current && current.revoked_at === null) return "exists";
      if (quota && quota.limit > 0) {
        const [row] = await tx`
          INSERT INTO agent_rate_windows (key_id, window_start, count) VALUES (${keyId}, ${quota.windowStart}, 1)
          ON CONFLICT (key_id, window_start) DO UPDATE SET count = agent_rate_windows.count + 1
          RETURNING count`;
        // Returning (not throwing) commits the count, as for challenges.
        const current = Number(row.count);
        const weight = quota.previousWeight ?? 0;
        let previous = 0;
        if (weight > 0) {
          const [before] = await tx`SELECT count FROM agent_rate_windows WHERE key_id = ${keyId} AND window_start = ${quota.windowStart - MINUTE_MS}`;
          previous = Number(before?.count ?? 0);
        }
        if (current + carriedCount(previous, weight) > quota.limit) return { outcome: "rate_limited", previous, current };
      }
      if (!current) {
        if (quota && quota.maxAgents > 0 && Number(key?.agents ?? 0) >= quota.maxAgents) return "too_many_agents";
        await tx`UPDATE api_keys SET agents = agents + 1 WHERE id = ${keyId}`;
      }
      // An active agent stays as it is; a revoked one is registered afresh.
      await tx`
        INSERT INTO agents (key_id, agent_id, identity_commitment, signing_key, signing_key_id, created_at, revoked_at, principal_key, mandate, mandate_jws, mandate_iat)
        VALUES (${keyId}, ${agentId}, ${identityCommitment}, ${signingKey}, ${signingKeyId}, ${createdAt}, NULL, ${principalKey}, ${mandate}, ${mandateJws}, ${mandateIat})
        ON CONFLICT (key_id, agent_id) DO UPDATE SET
          identity_commitment = excluded.identity_commitment, signing_key = excluded.signing_key, signing_key_id = excluded.signing_key_id,
          created_at = excluded.created_at, revoked_at = NULL, principal_key = excluded.principal_key,
          mandate = excluded.mandate, mandate_jws = excluded.mandate_jws, mandate_iat = excluded.mandate_iat
        WHERE agents.revoked_at IS NOT NULL`;
      return "created";
    });
  }

  async getAgent(keyId: string, agentId: string): Promise<AgentRecord | null> {
    if (hasNul(keyId, agentId)) return null;
    const [row] = await this.sql`SELECT * FROM agents WHERE key_id = ${keyId} AND agent_id = ${agentId}`;
    return row ? toAgent(row) : null;
  }

  async agentsBySigningKeyId(keyId: string, signingKeyId: string, limit: number): Promise<AgentRecord[]> {
    if (hasNul(keyId, signingKeyId)) return [];
    const rows = await this.sql`
      SELECT * FROM agents WHERE key_id = ${keyId} AND signing_key_id = ${signingKeyId} ORDER BY created_at, agent_id LIMIT ${limit}`;
    return rows.map(toAgent);
  }

  async agentsMissingSigningKeyId(limit: number): Promise<AgentRecord[]> {
    const rows = await this.sql`SELECT * FROM agents WHERE signing_key IS NOT NULL AND signing_key_id IS NULL LIMIT ${limit}`;
    return rows.map(toAgent);
  }

  async setSigningKeyId(keyId: string, agentId: string, signingKey: string, signingKeyId: string): Promise<boolean> {
    const rows = await this.sql`
      UPDATE agents SET signing_key_id = ${signingKeyId} WHERE key_id = ${keyId} AND agent_id = ${agentId} AND signing_key = ${signingKey} RETURNING agent_id`;
    return rows.length > 0;
  }

  async revokeAgent(keyId: string, agentId: string, at: number): Promise<AgentRecord | null> {
    if (hasNul(keyId, agentId)) return null;
    const [row] = await this.sql`
      UPDATE agents SET revoked_at = ${at}
      WHERE key_id = ${keyId} AND agent_id = ${agentId} AND revoked_at IS NULL RETURNING *`;
    return row ? toAgent(row) : null;
  }

  async setMandate(keyId: string, agentId: string, mandate: StoredMandate | null): Promise<SetMandateResult> {
    if (hasNul(keyId, agentId)) return { outcome: "not_found", agent: null };
    const { mandate: text = null, mandateJws = null, mandateIat = null } = mandate ?? {};
    // One conditional statement, so a concurrent replacement cannot slip an
    // older signed mandate (lower iat) in after a newer one.
    const [row] = await this.sql`
      UPDATE agents SET mandate = ${text}, mandate_jws = ${mandateJws}, mandate_iat = ${mandateIat}
      WHERE key_id = ${keyId} AND agent_id = ${agentId} AND revoked_at IS NULL
        AND (principal_key IS NULL OR ${mandateJws}::text IS NOT NULL)
        AND (${mandateIat}::bigint IS NULL OR mandate_iat IS NULL OR mandate_iat < ${mandateIat}::bigint OR mandate_jws = ${mandateJws}::text)
      RETURNING *`;
    if (row) return { outcome: "set", agent: toAgent(row) };
    return setMandateRefusal(await this.getAgent(keyId, agentId), mandate);
  }

  async readSpend(keyId: string, agentId: string, keys: readonly SpendKey[]): Promise<Spend[]> {
    const spend: Spend[] = [];
    for (const key of keys) {
      // A scope with NUL names no row (a mandate stored before issue 18 refused it): nothing spent, as on SQLite.
      if (hasNul(keyId, agentId, key.action, key.currency)) {
        spend.push(NO_SPEND);
        continue;
      }
      const [row] = await this.sql`
        SELECT total, count FROM mandate_spend
        WHERE key_id = ${keyId} AND agent_id = ${agentId} AND action = ${key.action} AND currency = ${key.currency}
          AND period = ${key.period} AND period_start = ${key.periodStart}`;
      spend.push(row ? toSpend(row) : NO_SPEND);
    }
    return spend;
  }

  // Group commit, as in sqlite.ts, for the same reason and more: a commit on
  // PostgreSQL is a network round trip plus a WAL flush, and every creation
  // of a key used to update the key's rate-window row in place and hold that
  // row lock through its commit, so all of one key's requests on every node
  // queued behind each other. Now the creations that reach this process while
  // its previous flush is in flight (or, when idle, within one event-loop
  // turn) are written together: per (key, window, limit) ONE statement counts
  // all n in the window (count + n), inserts the ones within the limit and
  // adds their number to one usage shard. A statement is one transaction, so
  // nothing is acknowledged before it commits.
  //
  // Exactness: the window row is locked by the statement's upsert, which
  // returns the new total C; the group's items are, in arrival order, the
  // requests C − n + 1 … C of the window, and item i is stored iff C − n + i
  // ≤ limit — exactly what n single upserts in that order would decide (a
  // refused request still occupies its place, as before). When a statement
  // fails (one item's insert is refused: duplicate id, a NUL), nothing of it
  // is stored, and its items are retried one by one, so only the bad item's
  // caller sees the error and the window holds no count for it.
  private queued: QueuedCreation[] = [];
  private flushing: Promise<void> | null = null;

  async createChallenge(challenge: ChallengeRecord, window: RateWindow): Promise<CreateChallengeResult> {
    return new Promise((resolve, reject) => {
      this.queued.push({ challenge, window, resolve, reject });
      this.flushing ??= new Promise<void>((done) => setImmediate(done)).then(this.flushCreations);
    });
  }

  private readonly flushCreations = async (): Promise<void> => {
    try {
      await this.flushQueued();
    } finally {
      // A caller resumed by this flush may have queued more after the loop's
      // last look and before this line; those must not wait for a next caller.
      this.flushing = this.queued.length > 0 ? Promise.resolve().then(this.flushCreations) : null;
    }
  };

  private async flushQueued(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = this.queued;
      this.queued = [];
      const groups = new Map<string, QueuedCreation[]>();
      for (const item of batch) {
        const group = `${item.challenge.keyId}\u0000${item.window.windowStart}\u0000${item.window.limit}`;
        const list = groups.get(group);
        if (list) list.push(item);
        else groups.set(group, [item]);
      }
      // Groups touch different rows (another key or window), so they run side by side.
      await Promise.all([...groups.values()].map((items) => this.writeGroup(items)));
    }
  }

  private async writeGroup(items: QueuedCreation[]): Promise<void> {
    for (let start = 0; start < items.length; start += MAX_GROUP) {
      const chunk = items.slice(start, start + MAX_GROUP);
      try {
        const results = await this.insertGroup(chunk);
        chunk.forEach((item, i) => item.resolve(results[i]!));
      } catch (error) {
        // One item, or a database that cannot be reached: retrying each item
        // alone would only queue n connection timeouts behind one another.
        if (chunk.length === 1 || error instanceof StoreUnavailableError || isConnectionFailure(error)) {
          for (const item of chunk) item.reject(error);
          continue;
        }
        // Nothing of the statement is stored: settle each item on its own.
        for (const item of chunk) {
          try {
            item.resolve((await this.insertGroup([item]))[0]!);
          } catch (itemError) {
            item.reject(itemError);
          }
        }
      }
    }
  }

  /** One statement for items of one key, window and limit, in arrival order. */
  private async insertGroup(items: QueuedCreation[]): Promise<CreateChallengeResult[]> {
    const { keyId } = items[0]!.challenge;
    const { windowStart, limit } = items[0]!.window;
    const n = items.length;
    const rows = JSON.stringify(
      items.map(({ challenge: c }, i) => ({
        ord: i + 1,
        id: c.id,
        agent_id: c.agentId,
        action: c.action,
        context: c.context,
        nonce: c.nonce,
        created_at: c.createdAt,
        expires_at: c.expiresAt,
        request_id: c.requestId ?? null,
        circuit_id: c.circuitId ?? null,
        group_id: c.groupId ?? null,
        group_root: c.groupRoot ?? null,
        group_depth: c.groupDepth ?? null,
      })),
    );
    const shard = usageShard();
    if (limit === 0) {
      // Unlimited: the rate window is not touched (as in sqlite.ts), every item is stored.
      await this.sql`
        WITH items AS (
          SELECT * FROM jsonb_to_recordset(${rows}::text::jsonb) AS t(ord int, id text, agent_id text, action text, context text, nonce text,
            created_at bigint, expires_at bigint, request_id text, circuit_id text, group_id text, group_root text, group_depth bigint)),
        stored AS (
          INSERT INTO challenges (id, key_id, agent_id, action, context, nonce, created_at, expires_at, status, request_id, circuit_id, group_id, group_root, group_depth)
          SELECT id, ${keyId}, agent_id, action, context, nonce, created_at, expires_at, 'pending', request_id, circuit_id, group_id, group_root, group_depth FROM items ORDER BY ord
          RETURNING 1)
        INSERT INTO usage_counters (key_id, shard, challenges) SELECT ${keyId}, ${shard}, count(*) FROM stored
        ON CONFLICT (key_id, shard) DO UPDATE SET challenges = usage_counters.challenges + excluded.challenges`;
      return items.map(() => ({ created: true, used: 0 }));
    }
    // The previous minute, weighted as the sliding minute still covers it (src/sliding-window.ts); 0 without a weight.
    const weight = items[0]!.window.previousWeight ?? 0;
    let previous = 0;
    if (weight > 0) {
      const [before] = await this.sql`SELECT count FROM rate_windows WHERE key_id = ${keyId} AND window_start = ${windowStart - MINUTE_MS}`;
      previous = Number(before?.count ?? 0);
    }
    // Read before the statement: the previous minute is closed (a straggler of it counts in the next one's estimate, not in this).
    const carried = carriedCount(previous, weight);
    const [row] = await this.sql`
      WITH win AS (
        INSERT INTO rate_windows (key_id, window_start, count) VALUES (${keyId}, ${windowStart}, ${n})
        ON CONFLICT (key_id, window_start) DO UPDATE SET count = rate_windows.count + excluded.count
        RETURNING count),
      items AS (
        SELECT * FROM jsonb_to_recordset(${rows}::text::jsonb) AS t(ord int, id text, agent_id text, action text, context text, nonce text,
          created_at bigint, expires_at bigint, request_id text, circuit_id text, group_id text, group_root text, group_depth bigint)),
      stored AS (
        INSERT INTO challenges (id, key_id, agent_id, action, context, nonce, created_at, expires_at, status, request_id, circuit_id, group_id, group_root, group_depth)
        SELECT id, ${keyId}, agent_id, action, context, nonce, created_at, expires_at, 'pending', request_id, circuit_id, group_id, group_root, group_depth
        FROM items, win WHERE win.count - ${n} + items.ord + ${carried} <= ${limit} ORDER BY ord
        RETURNING 1),
      counted AS (
        INSERT INTO usage_counters (key_id, shard, challenges) SELECT ${keyId}, ${shard}, count(*) FROM stored HAVING count(*) > 0
        ON CONFLICT (key_id, shard) DO UPDATE SET challenges = usage_counters.challenges + excluded.challenges)
      SELECT count FROM win`;
    const first = Number(row.count) - n + 1;
    return items.map((_, i): CreateChallengeResult => {
      const used = first + i + carried;
      return used <= limit ? { created: true, used } : { created: false, used, previous, current: first + i };
    });
  }

  async getChallenge(id: string): Promise<ChallengeRecord | null> {
    if (hasNul(id)) return null;
    const [row] = await this.sql`SELECT * FROM challenges WHERE id = ${id}`;
    return row ? toChallenge(row) : null;
  }

  async getChallengeWithAgent(id: string): Promise<{ challenge: ChallengeRecord; agent: AgentRecord | null } | null> {
    if (hasNul(id)) return null;
    // The agent's row as one jsonb column, so its names cannot collide with the
    // challenge's; to_jsonb keeps text as text, and rows.ts maps the integers
    // with Number() either way.
    const [row] = await this.sql`
      SELECT c.*, to_jsonb(a) AS agent_row FROM challenges c
      LEFT JOIN agents a ON a.key_id = c.key_id AND a.agent_id = c.agent_id
      WHERE c.id = ${id}`;
    if (!row) return null;
    const agent = typeof row.agent_row === "string" ? JSON.parse(row.agent_row) : row.agent_row;
    return { challenge: toChallenge(row), agent: agent ? toAgent(agent) : null };
  }

  async decideChallenge(id: string, proposed: Decision, scope?: MandateScope): Promise<DecideResult> {
    if (hasNul(id)) return { decided: false, record: null };
    // A verified group decision always takes the transaction: its root is judged there.
    if (!(scope?.group && proposed.status === "verified")) {
      const fast = await this.decideWithoutMandate(id, proposed, scope);
      if (fast) return fast;
    }
    return this.decideInTransaction(id, proposed, scope);
  }

  /**
   * The common case in one statement (one round trip instead of five: BEGIN,
   * mandate read, update, usage, COMMIT): the conditional update and the usage
   * count, for a decision that no mandate can change — a failed one, or a
   * verified one whose agent has no mandate, which the update's own WHERE
   * checks (planMandate plans nothing without a mandate). A statement is a
   * transaction, so the count commits with the decision or not at all. When
   * the row is not updated — decided or expired meanwhile, or the agent has a
   * mandate — nothing was written and the transaction below decides, with
   * the mandate and the lost race handled there, exactly as before.
   */
  private async decideWithoutMandate(id: string, decision: Decision, scope?: MandateScope): Promise<DecideResult | null> {
    const { status, decidedAt, confidence, reason } = decision;
    const requestId = decision.requestId ?? null;
    const evidence = evidenceText(decision.evidence);
    // No mandate is applied on this path, so the decision stands as proposed and so does its receipt.
    const receipt = decision.receipt ?? null;
    const mandated = scope !== undefined && status === "verified";
    const [keyId, agentId] = mandated ? [scope.keyId, scope.agentId] : ["", ""];
    const shard = usageShard();
    // The decision's webhook event and its deliveries, in the same statement
    // (so the same transaction): written only when the key has an endpoint
    // subscribed to the type.
    const type = eventTypeOf(status);
    const eventId = newEventId();
    const pattern = subscribedPattern(type);
    // One statement for both outcomes: the mandate condition holds only for a
    // mandated verified decision, and the usage count goes to its column.
    const [verified, failed] = status === "verified" ? [1, 0] : [0, 1];
    const rows = await this.sql`
          WITH decided AS (
            UPDATE challenges SET status = ${status}, decided_at = ${decidedAt}, confidence = ${confidence}, reason = ${reason},
              decided_request_id = ${requestId}, evidence = ${evidence}, receipt = ${receipt}
            WHERE id = ${id} AND status = 'pending' AND expires_at >= ${decidedAt}
              AND (NOT ${mandated}::boolean OR NOT EXISTS (
                SELECT 1 FROM agents WHERE key_id = ${keyId} AND agent_id = ${agentId} AND mandate IS NOT NULL))
            RETURNING *),
          counted AS (
            INSERT INTO usage_counters (key_id, shard, verified, failed) SELECT key_id, ${shard}, ${verified}, ${failed} FROM decided
            ON CONFLICT (key_id, shard) DO UPDATE SET verified = usage_counters.verified + EXCLUDED.verified, failed = usage_counters.failed + EXCLUDED.failed),
          event AS (
            INSERT INTO webhook_events (id, key_id, type, session_id, created_at)
            SELECT ${eventId}, key_id, ${type}, id, ${decidedAt} FROM decided
            WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.key_id = decided.key_id AND e.deleted_at IS NULL AND e.events LIKE ${pattern})
            RETURNING id, key_id),
          fanned AS (
            INSERT INTO webhook_deliveries (event_id, endpoint_id, key_id, state, attempts, next_at, created_at)
            SELECT event.id, e.id, e.key_id, 'pending', 0, ${decidedAt}, ${decidedAt} FROM event
            JOIN webhook_endpoints e ON e.key_id = event.key_id AND e.deleted_at IS NULL AND e.events LIKE ${pattern})
          SELECT *, (SELECT count(*) FROM event)::int AS webhook_events FROM decided`;
    const [row] = rows;
    if (!row) return null;
    if (Number(row.webhook_events) > 0) outboxWritten();
    // What the transaction reports when planMandate plans nothing: no mandate decision.
    return { decided: true, record: toChallenge(row), ...(scope ? { mandate: null } : {}) };
  }

  private async decideInTransaction(id: string, proposed: Decision, scope?: MandateScope): Promise<DecideResult> {
    const requestId = proposed.requestId ?? null;
    let evented = false;
    const result = await this.sql.begin(async (tx): Promise<DecideResult> => {
      let decision = proposed;
      let mandate: MandateDecision | null = null;
      let checked: MandateResult | null = null;
      const group = scope?.group;
      if (scope && group && proposed.status === "verified") {
        // FOR SHARE waits for a removal in progress (it holds the row FOR
        // UPDATE) and then reads its committed removed_version: a removal
        // acknowledged anywhere refuses the removed member here.
        const [row] = await tx`SELECT mandate, removed_version FROM groups WHERE group_id = ${group.groupId} FOR SHARE`;
        const [ok] = row
          ? await tx`SELECT 1 AS ok FROM group_roots WHERE group_id = ${group.groupId} AND root = ${group.root} AND root <> '0'
              AND version >= ${row.removed_version} LIMIT 1`
          : [];
        if (!ok) decision = refuseRoot(proposed);
        else {
          const plan = planMandate({ mandate: row.mandate, mandateJws: null }, scope, proposed.decidedAt);
          if (plan) {
            const spend = new Map<string, Spend>();
            for (const key of plan.keys) {
              const [found] = await tx`
                INSERT INTO group_spend (key_id, group_id, pseudonym, action, currency, period, period_start, total, count)
                VALUES (${scope.keyId}, ${group.groupId}, ${group.pseudonym}, ${key.action}, ${key.currency}, ${key.period}, ${key.periodStart}, '0', 0)
                ON CONFLICT (key_id, group_id, pseudonym, action, currency, period, period_start) DO UPDATE SET count = group_spend.count
                RETURNING total, count`;
              spend.set(spendKeyId(key), toSpend(found));
            }
            checked = plan.evaluate(spend);
            ({ decision, mandate } = applyMandate(proposed, plan, checked));
          }
        }
      } else if (scope && proposed.status === "verified") {
        const [agent] = await tx`SELECT mandate, mandate_jws FROM agents WHERE key_id = ${scope.keyId} AND agent_id = ${scope.agentId}`;
        const plan = planMandate(agent ? { mandate: agent.mandate, mandateJws: agent.mandate_jws } : null, scope, proposed.decidedAt);
        if (plan) {
          // Lock the period totals this decision reads, in plan order (the
          // same for every transaction, so no deadlock). The no-op upsert
          // creates a missing row and locks it in one statement; a
          // concurrent decision for this agent waits here until this one
          // commits, then reads the total this one wrote.
          const spend = new Map<string, Spend>();
          for (const key of plan.keys) {
            const [row] = await tx`
              INSERT INTO mandate_spend (key_id, agent_id, action, currency, period, period_start, total, count)
              VALUES (${scope.keyId}, ${scope.agentId}, ${key.action}, ${key.currency}, ${key.period}, ${key.periodStart}, '0', 0)
              ON CONFLICT (key_id, agent_id, action, currency, period, period_start) DO UPDATE SET count = mandate_spend.count
              RETURNING total, count`;
            spend.set(spendKeyId(key), toSpend(row));
          }
          checked = plan.evaluate(spend);
          ({ decision, mandate } = applyMandate(proposed, plan, checked));
        }
      }
      const { status, decidedAt, confidence, reason } = decision;
      const evidence = evidenceText(decision.evidence);
      const receipt = decision.receipt ?? null;
      // The single conditional update that makes use one-time: a concurrent
      // updater blocks on the row lock, then finds status no longer pending.
      const [row] = await tx`
        UPDATE challenges SET status = ${status}, decided_at = ${decidedAt}, confidence = ${confidence}, reason = ${reason},
          decided_request_id = ${requestId}, evidence = ${evidence}, receipt = ${receipt}
        WHERE id = ${id} AND status = 'pending' AND expires_at >= ${decidedAt}
        RETURNING *`;
      if (!row) {
        // READ COMMITTED: this statement sees the winner's committed record.
        const [current] = await tx`SELECT * FROM challenges WHERE id = ${id}`;
        return { decided: false, record: current ? toChallenge(current) : null };
      }
      const record = toChallenge(row);
      if (checked?.ok) {
        for (const { key, spend } of checked.updates) {
          if (group) {
            await tx`
              UPDATE group_spend SET total = ${spend.total}, count = ${spend.count}
              WHERE key_id = ${scope!.keyId} AND group_id = ${group.groupId} AND pseudonym = ${group.pseudonym} AND action = ${key.action}
                AND currency = ${key.currency} AND period = ${key.period} AND period_start = ${key.periodStart}`;
            continue;
          }
          await tx`
            UPDATE mandate_spend SET total = ${spend.total}, count = ${spend.count}
            WHERE key_id = ${scope!.keyId} AND agent_id = ${scope!.agentId} AND action = ${key.action} AND currency = ${key.currency}
              AND period = ${key.period} AND period_start = ${key.periodStart}`;
        }
      }
      // Two fixed statements rather than an interpolated column name; a
      // random shard row of the key, so concurrent decisions of one key
      // rarely wait for each other's commit (migration 4).
      const shard = usageShard();
      if (status === "verified")
        await tx`INSERT INTO usage_counters (key_id, shard, verified) VALUES (${record.keyId}, ${shard}, 1)
          ON CONFLICT (key_id, shard) DO UPDATE SET verified = usage_counters.verified + 1`;
      else
        await tx`INSERT INTO usage_counters (key_id, shard, failed) VALUES (${record.keyId}, ${shard}, 1)
          ON CONFLICT (key_id, shard) DO UPDATE SET failed = usage_counters.failed + 1`;
      evented = await this.writeOutbox(tx, record);
      return { decided: true, record, ...(scope ? { mandate } : {}) };
    });
    if (evented) outboxWritten();
    return result;
  }

  /** The decided record's webhook event and its deliveries, inside the deciding transaction, when the key has an endpoint subscribed to it. */
  private async writeOutbox(tx: SQL, record: ChallengeRecord): Promise<boolean> {
    const type = eventTypeOf(record.status as "verified" | "failed");
    const pattern = subscribedPattern(type);
    const eventId = newEventId();
    const at = record.decidedAt!;
    const events = await tx`
      INSERT INTO webhook_events (id, key_id, type, session_id, created_at)
      SELECT ${eventId}, ${record.keyId}, ${type}, ${record.id}, ${at}
      WHERE EXISTS (SELECT 1 FROM webhook_endpoints WHERE key_id = ${record.keyId} AND deleted_at IS NULL AND events LIKE ${pattern})
      RETURNING id`;
    if (events.length === 0) return false;
    await tx`
      INSERT INTO webhook_deliveries (event_id, endpoint_id, key_id, state, attempts, next_at, created_at)
      SELECT ${eventId}, id, key_id, 'pending', 0, ${at}, ${at} FROM webhook_endpoints
      WHERE key_id = ${record.keyId} AND deleted_at IS NULL AND events LIKE ${pattern}`;
    return true;
  }

  async claimChallenge(id: string, claim: Claim): Promise<ClaimResult> {
    if (hasNul(id)) return { claimed: false, record: null };
    // Concurrent claimants of one row queue on its lock and re-check the
    // WHERE against the committed row: exactly one matches (as for decide).
    const [row] = await this.sql`
      UPDATE challenges SET claim_token = ${claim.token}, claim_until = ${claim.until}
      WHERE id = ${id} AND status = 'pending' AND expires_at >= ${claim.now} AND (claim_until IS NULL OR claim_until < ${claim.now})
      RETURNING id`;
    if (row) return { claimed: true };
    return { claimed: false, record: await this.getChallenge(id) };
  }

  async releaseClaim(id: string, token: string): Promise<void> {
    if (hasNul(id)) return;
    await this.sql`UPDATE challenges SET claim_until = NULL WHERE id = ${id} AND claim_token = ${token} AND status = 'pending'`;
  }

  async purgeChallenges(expiredBefore: number): Promise<number> {
    const removed = await this.sql`DELETE FROM challenges WHERE expires_at < ${expiredBefore}`;
    // Windows that old can no longer be counted into; sqlite.ts drops them too.
    await this.sql`DELETE FROM rate_windows WHERE window_start < ${expiredBefore}`;
    await this.sql`DELETE FROM agent_rate_windows WHERE window_start < ${expiredBefore}`;
    return removed.count;
  }

  async purgeAudit(before: number): Promise<number> {
    return this.sql.begin(async (tx) => {
      // Transaction-local: the gate closes with COMMIT, whatever happens.
      await tx`SELECT set_config('zkagent.audit_purge_before', ${String(before)}, true)`;
      return (await tx`DELETE FROM audit_log WHERE at < ${before}`).count;
    });
  }

  async countPending(now: number, keyId?: string): Promise<number> {
    const [row] =
      keyId === undefined
        ? await this.sql`SELECT count(*) AS n FROM challenges WHERE status = 'pending' AND expires_at >= ${now}`
        : await this.sql`SELECT count(*) AS n FROM challenges WHERE key_id = ${keyId} AND status = 'pending' AND expires_at >= ${now}`;
    return Number(row.n);
  }

  async listAudit(query: AuditQuery): Promise<AuditEntry[]> {
    const afterSeq = query.afterSeq ?? 0;
    const rows =
      query.keyId === undefined
        ? await this.sql`SELECT * FROM audit_log WHERE seq > ${afterSeq} ORDER BY seq LIMIT ${query.limit}`
        : await this.sql`SELECT * FROM audit_log WHERE seq > ${afterSeq} AND key_id = ${query.keyId} ORDER BY seq LIMIT ${query.limit}`;
    return rows.map(toAudit);
  }

  async storeReceipt(id: string, receipt: string): Promise<string | null> {
    // Conditional: the first receipt stored stays, so every reader (the
    // decider, a replay, the status endpoint on any node) returns the same one.
    const [stored] = await this.sql`
      UPDATE challenges SET receipt = ${receipt} WHERE id = ${id} AND receipt IS NULL AND status <> 'pending' RETURNING receipt`;
    if (stored) return stored.receipt;
    const [row] = await this.sql`SELECT receipt FROM challenges WHERE id = ${id}`;
    return row?.receipt ?? null;
  }

  async ensureSigningKey(candidate: SigningKeyRecord): Promise<SigningKeyRecord> {
    const { kid, publicJwk, privateKey, createdAt } = candidate;
    // The partial unique index admits one active key: of several nodes
    // starting at once, one insert wins and the others do nothing.
    await this.sql`
      INSERT INTO signing_keys (kid, public_jwk, private_key, state, created_at, retired_at)
      VALUES (${kid}, ${publicJwk}, ${privateKey}, 'active', ${createdAt}, NULL) ON CONFLICT DO NOTHING`;
    const active = await this.activeSigningKey();
    // Only a concurrent rotation between the two statements could leave none.
    return active ?? this.ensureSigningKey(candidate);
  }

  async activeSigningKey(): Promise<SigningKeyRecord | null> {
    const [row] = await this.sql`SELECT * FROM signing_keys WHERE state = 'active'`;
    return row ? toSigningKey(row) : null;
  }

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    const rows = await this.sql`SELECT * FROM signing_keys ORDER BY created_at, kid`;
    return rows.map(toSigningKey);
  }

  async rotateSigningKey(next: SigningKeyRecord): Promise<string | null> {
    return this.sql.begin(async (tx) => {
      // Two rotations at once queue here instead of one failing on the
      // unique index after the other demoted the key it saw.
      await tx`SELECT pg_advisory_xact_lock(${SIGNING_KEY_LOCK_ID.toString()}::bigint)`;
      const [previous] = await tx`UPDATE signing_keys SET state = 'published' WHERE state = 'active' RETURNING kid`;
      await tx`
        INSERT INTO signing_keys (kid, public_jwk, private_key, state, created_at, retired_at)
        VALUES (${next.kid}, ${next.publicJwk}, ${next.privateKey}, 'active', ${next.createdAt}, NULL)`;
      return previous?.kid ?? null;
    });
  }

  async addCircuit(c: CircuitWithArtifacts): Promise<{ added: boolean; state: CircuitState }> {
    return this.sql.begin(async (tx) => {
      // Serialised with activations: "no circuit is active" must still hold when the row goes in.
      await tx`SELECT pg_advisory_xact_lock(${CIRCUIT_LOCK_ID.toString()}::bigint)`;
      const [active] = await tx`SELECT 1 FROM circuits WHERE state = 'active'`;
      const state: CircuitState = active ? "accepted" : "active";
      const added = await tx`
        INSERT INTO circuits (id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, transcript_sha256, ceremony, transcript_refused,
                              zkey, wasm, created_at, activated_at, retired_at)
        VALUES (${c.id}, ${state}, ${c.vk}, ${c.vkHash}, ${c.zkeySha256}, ${c.wasmSha256}, ${c.transcript}, ${c.transcriptSha256},
                ${c.ceremony ? JSON.stringify(c.ceremony) : null}, ${c.refused}, ${Buffer.from(c.zkey)}, ${Buffer.from(c.wasm)},
                ${c.createdAt}, ${state === "active" ? c.createdAt : null}, NULL)
        ON CONFLICT (id) DO NOTHING RETURNING id`;
      const [row] = await tx`SELECT state FROM circuits WHERE id = ${c.id}`;
      return { added: added.length === 1, state: row.state as CircuitState };
    });
  }

  async rebuildCircuitListing(id: string, outcome: CircuitListing | { refused: string }): Promise<boolean> {
    if (hasNul(id)) return false;
    const changed =
      "refused" in outcome
        ? await this.sql`
            UPDATE circuits SET transcript_refused = ${outcome.refused}
            WHERE id = ${id} AND transcript_sha256 IS NULL AND transcript_refused IS NULL RETURNING id`
        : await this.sql`
            UPDATE circuits SET transcript_original = CASE WHEN transcript <> ${outcome.transcript} THEN transcript END,
                   transcript = ${outcome.transcript}, transcript_sha256 = ${outcome.transcriptSha256}, ceremony = ${JSON.stringify(outcome.ceremony)}
            WHERE id = ${id} AND transcript_sha256 IS NULL AND transcript_refused IS NULL RETURNING id`;
    return changed.length === 1;
  }

  async listCircuits(): Promise<CircuitRecord[]> {
    const rows = await this.sql`
      SELECT id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, transcript_sha256, ceremony, transcript_refused, created_at, activated_at, retired_at FROM circuits ORDER BY created_at, id`;
    return rows.map(toCircuit);
  }

  async getCircuit(id: string): Promise<CircuitRecord | null> {
    if (hasNul(id)) return null;
    const [row] = await this.sql`
      SELECT id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, transcript_sha256, ceremony, transcript_refused, created_at, activated_at, retired_at FROM circuits WHERE id = ${id}`;
    return row ? toCircuit(row) : null;
  }

  async circuitArtifact(id: string, artifact: "zkey" | "wasm"): Promise<Uint8Array | null> {
    if (hasNul(id)) return null;
    const [row] =
      artifact === "zkey"
        ? await this.sql`SELECT zkey AS bytes FROM circuits WHERE id = ${id}`
        : await this.sql`SELECT wasm AS bytes FROM circuits WHERE id = ${id}`;
    return row ? new Uint8Array(row.bytes) : null;
  }

  // Activate and retire of a circuit are serialised (the same advisory lock)
  // and conditional (the row is locked and its state re-read, each UPDATE
  // names the state it changes from): a retire racing an activate can never
  // leave the retired circuit active.
  async activateCircuit(id: string, at: number): Promise<ActivateCircuitResult> {
    if (hasNul(id)) return "unknown";
    return this.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${CIRCUIT_LOCK_ID.toString()}::bigint)`;
      const [row] = await tx`SELECT state FROM circuits WHERE id = ${id} FOR UPDATE`;
      if (!row) return "unknown";
      if (row.state === "active") return "already_active";
      if (row.state === "retired") return "retired";
      await tx`UPDATE circuits SET state = 'accepted' WHERE state = 'active'`;
      const [activated] = await tx`UPDATE circuits SET state = 'active', activated_at = ${at} WHERE id = ${id} AND state = 'accepted' RETURNING id`;
      if (!activated) throw new Error(`circuit ${id} changed state under its row lock`);
      return "activated";
    });
  }

  async retireCircuit(id: string, at: number): Promise<RetireCircuitResult> {
    if (hasNul(id)) return "unknown";
    return this.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${CIRCUIT_LOCK_ID.toString()}::bigint)`;
      const [retired] = await tx`UPDATE circuits SET state = 'retired', retired_at = ${at} WHERE id = ${id} AND state = 'accepted' RETURNING id`;
      if (retired) return "retired";
      const [row] = await tx`SELECT state FROM circuits WHERE id = ${id}`;
      if (!row) return "unknown";
      return row.state === "active" ? "active" : "already_retired";
    });
  }

  async retireSigningKey(kid: string, at: number): Promise<"retired" | "already_retired" | "active" | "unknown"> {
    const [retired] = await this.sql`
      UPDATE signing_keys SET state = 'retired', retired_at = ${at} WHERE kid = ${kid} AND state = 'published' RETURNING kid`;
    if (retired) return "retired";
    const [row] = await this.sql`SELECT state FROM signing_keys WHERE kid = ${kid}`;
    if (!row) return "unknown";
    return row.state === "active" ? "active" : "already_retired";
  }

  async reserveIdempotency(keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number): Promise<IdempotencyState> {
    // One statement decides who holds the key: insert, or take over a stale
    // unfinished reservation with the same fingerprint.
    const [won] = await this.sql`
      INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, status, body, created_at)
      VALUES (${keyId}, ${idemKey}, ${fingerprint}, NULL, NULL, ${now})
      ON CONFLICT (key_id, idem_key) DO UPDATE SET created_at = EXCLUDED.created_at
      WHERE idempotency_keys.status IS NULL AND idempotency_keys.fingerprint = EXCLUDED.fingerprint
        AND idempotency_keys.created_at < ${staleBefore}
      RETURNING 1 AS ok`;
    if (won) return { state: "new" };
    const [row] = await this.sql`SELECT * FROM idempotency_keys WHERE key_id = ${keyId} AND idem_key = ${idemKey}`;
    return row ? heldIdempotency(row, fingerprint) : this.reserveIdempotency(keyId, idemKey, fingerprint, now, staleBefore);
  }

  async completeIdempotency(keyId: string, idemKey: string, status: number, body: string): Promise<void> {
    await this.sql`UPDATE idempotency_keys SET status = ${status}, body = ${body} WHERE key_id = ${keyId} AND idem_key = ${idemKey}`;
  }

  async releaseIdempotency(keyId: string, idemKey: string): Promise<void> {
    await this.sql`DELETE FROM idempotency_keys WHERE key_id = ${keyId} AND idem_key = ${idemKey} AND status IS NULL`;
  }

  async purgeIdempotency(before: number): Promise<number> {
    return (await this.sql`DELETE FROM idempotency_keys WHERE created_at < ${before}`).count;
  }

  async createWebhookEndpoint(endpoint: WebhookEndpointRecord): Promise<void> {
    const { id, keyId, url, events, secret, previousSecret, previousUntil, createdAt } = endpoint;
    await this.sql`
      INSERT INTO webhook_endpoints (id, key_id, url, events, secret, previous_secret, previous_until, created_at, deleted_at)
      VALUES (${id}, ${keyId}, ${url}, ${events}, ${secret}, ${previousSecret}, ${previousUntil}, ${createdAt}, NULL)`;
  }

  async listWebhookEndpoints(keyId: string | null): Promise<WebhookEndpointRecord[]> {
    if (keyId !== null && hasNul(keyId)) return [];
    const rows =
      keyId === null
        ? await this.sql`SELECT * FROM webhook_endpoints WHERE deleted_at IS NULL ORDER BY created_at, id`
        : await this.sql`SELECT * FROM webhook_endpoints WHERE deleted_at IS NULL AND key_id = ${keyId} ORDER BY created_at, id`;
    return rows.map(toWebhookEndpoint);
  }

  async getWebhookEndpoint(keyId: string, id: string): Promise<WebhookEndpointRecord | null> {
    if (hasNul(keyId, id)) return null;
    const [row] = await this.sql`SELECT * FROM webhook_endpoints WHERE id = ${id} AND key_id = ${keyId} AND deleted_at IS NULL`;
    return row ? toWebhookEndpoint(row) : null;
  }

  async deleteWebhookEndpoint(keyId: string, id: string, at: number): Promise<boolean> {
    if (hasNul(keyId, id)) return false;
    return this.sql.begin(async (tx) => {
      const deleted = await tx`UPDATE webhook_endpoints SET deleted_at = ${at} WHERE id = ${id} AND key_id = ${keyId} AND deleted_at IS NULL RETURNING id`;
      if (deleted.length === 0) return false;
      await tx`
        UPDATE webhook_deliveries SET state = 'failed', last_error = 'endpoint deleted', finished_at = ${at}, lease_token = NULL, lease_until = NULL
        WHERE endpoint_id = ${id} AND state = 'pending'`;
      return true;
    });
  }

  async rotateWebhookSecret(keyId: string, id: string, secret: string, previousUntil: number): Promise<WebhookEndpointRecord | null> {
    if (hasNul(keyId, id)) return null;
    const [row] = await this.sql`
      UPDATE webhook_endpoints SET previous_secret = secret, previous_until = ${previousUntil}, secret = ${secret}
      WHERE id = ${id} AND key_id = ${keyId} AND deleted_at IS NULL RETURNING *`;
    return row ? toWebhookEndpoint(row) : null;
  }

  async claimWebhookDeliveries(claim: WebhookClaim): Promise<ClaimedWebhookDelivery[]> {
    const { token, now, until, limit, perEndpoint } = claim;
    // Endpoint ids are whep_<hex>: a comma never occurs in one.
    const skip = claim.skipEndpoints.join(",");
    // A conditional UPDATE: nodes claiming at once may pick the same rows, but
    // the second waits for the first's row lock and re-checks the lease
    // condition against the committed row, so each row goes to one claimant.
    await this.sql`
      WITH due AS (
        SELECT event_id, endpoint_id, next_at, row_number() OVER (PARTITION BY endpoint_id ORDER BY next_at, event_id) AS place
        FROM webhook_deliveries
        WHERE state = 'pending' AND next_at <= ${now} AND (lease_until IS NULL OR lease_until < ${now})
          AND NOT (endpoint_id = ANY (string_to_array(${skip}::text, ','))))
      UPDATE webhook_deliveries SET lease_token = ${token}, lease_until = ${until}
      WHERE (event_id, endpoint_id) IN (SELECT event_id, endpoint_id FROM due WHERE place <= ${perEndpoint} ORDER BY next_at LIMIT ${limit})
        AND state = 'pending' AND (lease_until IS NULL OR lease_until < ${now})`;
    const rows = await this.sql`
      SELECT d.*, ev.type, ev.session_id, ev.payload, e.url AS ep_url, e.events AS ep_events, e.secret AS ep_secret,
             e.previous_secret AS ep_previous_secret, e.previous_until AS ep_previous_until, e.created_at AS ep_created_at, e.deleted_at AS ep_deleted_at
      FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.lease_token = ${token} AND d.state = 'pending'`;
    return rows.map(toClaimedWebhookDelivery);
  }

  async finishWebhookDelivery(eventId: string, endpointId: string, token: string, outcome: WebhookAttemptOutcome): Promise<boolean> {
    const { state, attempts, nextAt, status, error, at } = outcome;
    const finishedAt = state === "pending" ? null : at;
    const payload = outcome.payload ?? null;
    // One statement: the attempt, and the body when the event has none yet.
    const rows = await this.sql`
      WITH finished AS (
        UPDATE webhook_deliveries SET state = ${state}, attempts = ${attempts}, next_at = ${nextAt}, last_status = ${status}, last_error = ${error},
          finished_at = ${finishedAt}, lease_token = NULL, lease_until = NULL
        WHERE event_id = ${eventId} AND endpoint_id = ${endpointId} AND lease_token = ${token} AND state = 'pending' RETURNING event_id),
      fixed AS (
        UPDATE webhook_events SET payload = ${payload}
        WHERE id IN (SELECT event_id FROM finished) AND payload IS NULL AND ${payload}::text IS NOT NULL)
      SELECT event_id FROM finished`;
    return rows.length === 1;
  }

  async listWebhookDeliveries(query: WebhookDeliveryQuery): Promise<WebhookDeliveryRecord[]> {
    const { keyId = null, state = null, eventId = null, limit } = query;
    if (hasNul(keyId ?? "", state ?? "", eventId ?? "")) return [];
    const rows = await this.sql`
      SELECT d.*, ev.type, ev.session_id FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
      WHERE (${keyId}::text IS NULL OR d.key_id = ${keyId}) AND (${state}::text IS NULL OR d.state = ${state}) AND (${eventId}::text IS NULL OR d.event_id = ${eventId})
      ORDER BY d.created_at DESC, d.event_id LIMIT ${limit}`;
    return rows.map(toWebhookDelivery);
  }

  async redeliverWebhook(eventId: string, keyId: string | null, now: number): Promise<number> {
    if (hasNul(eventId, keyId ?? "")) return 0;
    const rows = await this.sql`
      UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_at = ${now}, created_at = ${now}, finished_at = NULL, lease_token = NULL, lease_until = NULL
      WHERE event_id = ${eventId} AND (${keyId}::text IS NULL OR key_id = ${keyId})
        AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE deleted_at IS NULL)
        AND NOT (state = 'pending' AND lease_until IS NOT NULL AND lease_until >= ${now})
      RETURNING event_id`;
    if (rows.length > 0) outboxWritten();
    return rows.length;
  }

  async purgeWebhooks(before: number): Promise<number> {
    return this.sql.begin(async (tx) => {
      const removed = (await tx`DELETE FROM webhook_deliveries WHERE state <> 'pending' AND finished_at < ${before}`).count;
      await tx`DELETE FROM webhook_events e WHERE created_at < ${before} AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`;
      return removed;
    });
  }

  async oldestPendingWebhook(): Promise<number | null> {
    const [row] = await this.sql`SELECT min(created_at) AS at FROM webhook_deliveries WHERE state = 'pending'`;
    return row.at === null ? null : Number(row.at);
  }

  async createGroup(group: GroupRecord, maxPerKey = 0): Promise<"created" | "exists" | "too_many"> {
    if (hasNul(group.groupId)) return "exists";
    const challengers = group.challengers === null ? null : JSON.stringify(group.challengers);
    return this.sql.begin(async (tx): Promise<"created" | "exists" | "too_many"> => {
      // The key's row, locked: creations of one key are serialised, so the count and the bound stay exact across nodes.
      await tx`SELECT 1 FROM api_keys WHERE id = ${group.keyId} FOR UPDATE`;
      const [exists] = await tx`SELECT 1 FROM groups WHERE group_id = ${group.groupId}`;
      if (exists) return "exists";
      if (maxPerKey > 0) {
        const [row] = await tx`SELECT count(*)::int AS n FROM groups WHERE key_id = ${group.keyId}`;
        if (Number(row.n) >= maxPerKey) return "too_many";
      }
      const rows = await tx`
        INSERT INTO groups (group_id, key_id, created_at, version, size, active_members, depth, root, removed_version, mandate, challengers)
        VALUES (${group.groupId}, ${group.keyId}, ${group.createdAt}, 0, 0, 0, 0, '0', 0, ${group.mandate}, ${challengers})
        ON CONFLICT (group_id) DO NOTHING RETURNING 1`;
      return rows.length === 1 ? "created" : "exists";
    });
  }

  async getGroup(groupId: string): Promise<GroupRecord | null> {
    if (hasNul(groupId)) return null;
    const [row] = await this.sql`SELECT * FROM groups WHERE group_id = ${groupId}`;
    return row ? toGroup(row) : null;
  }

  async changeGroup(groupId: string, keyId: string, change: GroupChange, trees: TreeCache): Promise<ChangeGroupResult> {
    if (hasNul(groupId)) return { outcome: "not_found" };
    return changeGroupOptimistically(trees, groupId, keyId, change, {
      read: (id) => this.getGroup(id),
      leavesSince: async (id, version) =>
        (await this.sql`SELECT leaf_index, commitment FROM group_members WHERE group_id = ${id} AND version > ${version} ORDER BY leaf_index`).map(toLeaf),
      // REPEATABLE READ: the group row, the leaves and the nodes as of one commit.
      snapshot: (id) =>
        this.sql.begin(async (tx) => {
          await tx`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`;
          const [row] = await tx`SELECT version, root FROM groups WHERE group_id = ${id}`;
          if (!row) return null;
          const leaves = (await tx`SELECT commitment FROM group_members WHERE group_id = ${id} ORDER BY leaf_index`).map(
            (r: { commitment: string }) => r.commitment,
          );
          const nodes = await tx`SELECT level, idx, value FROM group_nodes WHERE group_id = ${id} ORDER BY level, idx`;
          return { version: Number(row.version), root: row.root as string, leaves, levels: levelsOf(nodes) };
        }),
      removedBefore: async (id, commitments) => {
        const [row] = await this.sql`
          SELECT commitment FROM group_removed WHERE group_id = ${id} AND commitment = ANY(${`{${commitments.join(",")}}`}::text[]) LIMIT 1`;
        return row ? commitments.indexOf(row.commitment) : -1;
      },
      commit: ({ group, leaves, nodes, at, requestId }) =>
        this.sql.begin(async (tx): Promise<GroupRecord | null> => {
          // The row lock orders every change of this group, on every node; the version says whether the plan still fits.
          const [row] = await tx`SELECT version FROM groups WHERE group_id = ${groupId} FOR UPDATE`;
          if (!row || Number(row.version) !== group.version - 1) return null;
          const { version, size, activeMembers, depth, root, removedVersion } = group;
          // The group row first: the audit trigger on the leaves reads its changed_at and request id.
          const [updated] = await tx`
            UPDATE groups SET version = ${version}, size = ${size}, active_members = ${activeMembers}, depth = ${depth}, root = ${root},
              removed_version = ${removedVersion}, changed_at = ${at}, changed_request_id = ${requestId}
            WHERE group_id = ${groupId} RETURNING *`;
          // One statement for the batch (up to 10,000 leaves), as arrays.
          await tx`
            INSERT INTO group_members (group_id, leaf_index, commitment, version)
            SELECT ${groupId}, i, c, ${version} FROM unnest(${`{${leaves.map((l) => l.index).join(",")}}`}::bigint[],
                                                            ${`{${leaves.map((l) => l.value).join(",")}}`}::text[]) AS t(i, c)
            ON CONFLICT (group_id, leaf_index) DO UPDATE SET commitment = excluded.commitment, version = excluded.version`;
          if (nodes.length > 0)
            await tx`
              INSERT INTO group_nodes (group_id, level, idx, value)
              SELECT ${groupId}, l, i, v FROM unnest(${`{${nodes.map((n) => n.level).join(",")}}`}::bigint[], ${`{${nodes.map((n) => n.index).join(",")}}`}::bigint[],
                                                      ${`{${nodes.map((n) => n.value).join(",")}}`}::text[]) AS t(l, i, v)
              ON CONFLICT (group_id, level, idx) DO UPDATE SET value = excluded.value`;
          await tx`INSERT INTO group_roots (group_id, version, root) VALUES (${groupId}, ${version}, ${root})`;
          return toGroup(updated);
        }),
    });
  }

  async groupMembers(groupId: string, offset: number, limit: number): Promise<string[]> {
    if (hasNul(groupId)) return [];
    const rows = await this.sql`
      SELECT commitment FROM group_members WHERE group_id = ${groupId} AND leaf_index >= ${offset} ORDER BY leaf_index LIMIT ${limit}`;
    return rows.map((r: { commitment: string }) => r.commitment);
  }

  async groupChanges(groupId: string, since: number, from: number, limit: number): Promise<Leaf[]> {
    if (hasNul(groupId)) return [];
    // Keyset (issue 37): a page starts at a leaf index, a primary-key range; since version 0 every leaf is a change.
    const rows = await this.sql`
      SELECT leaf_index, commitment FROM group_members WHERE group_id = ${groupId} AND version > ${since} AND leaf_index >= ${from}
      ORDER BY leaf_index LIMIT ${limit}`;
    return rows.map(toLeaf);
  }

  async setGroupChallengers(groupId: string, keyId: string, challengers: string[] | null) {
    if (hasNul(groupId)) return { outcome: "not_found" as const };
    const stored = challengers === null ? null : JSON.stringify(challengers);
    const [row] = await this.sql`UPDATE groups SET challengers = ${stored} WHERE group_id = ${groupId} AND key_id = ${keyId} RETURNING *`;
    if (row) return { outcome: "set" as const, group: toGroup(row) };
    const [other] = await this.sql`SELECT 1 FROM groups WHERE group_id = ${groupId}`;
    return { outcome: other ? ("forbidden" as const) : ("not_found" as const) };
  }

  async setGroupMandate(groupId: string, keyId: string, mandate: string | null) {
    if (hasNul(groupId)) return { outcome: "not_found" as const };
    const [row] = await this.sql`UPDATE groups SET mandate = ${mandate} WHERE group_id = ${groupId} AND key_id = ${keyId} RETURNING *`;
    if (row) return { outcome: "set" as const, group: toGroup(row) };
    const [other] = await this.sql`SELECT 1 FROM groups WHERE group_id = ${groupId}`;
    return { outcome: other ? ("forbidden" as const) : ("not_found" as const) };
  }

  async acceptableRoot(groupId: string, root: string): Promise<boolean> {
    if (hasNul(groupId, root)) return false;
    const rows = await this.sql`
      SELECT 1 FROM group_roots r JOIN groups g ON g.group_id = r.group_id
      WHERE r.group_id = ${groupId} AND r.root = ${root} AND r.version >= g.removed_version AND r.root <> '0' LIMIT 1`;
    return rows.length > 0;
  }

  async ping(): Promise<void> {
    await this.sql`SELECT 1`;
  }

  async close(): Promise<void> {
    // Creations already accepted are written, not dropped.
    while (this.flushing) await this.flushing;
    // Let queries already sent finish, but never hang a shutdown on them.
    await this.sql.close({ timeout: 5 });
  }
}

// Every query method maps "the database cannot be reached" to
// StoreUnavailableError (503 at the HTTP layer), in one place rather than in
// each method. Other errors pass through unchanged.
for (const name of Object.getOwnPropertyNames(PostgresStore.prototype)) {
  const method = (PostgresStore.prototype as unknown as Record<string, unknown>)[name];
  if (name === "constructor" || name === "close" || typeof method !== "function") continue;
  Object.defineProperty(PostgresStore.prototype, name, {
    value: async function (this: PostgresStore, ...args: unknown[]) {
      try {
        return await (method as (...a: unknown[]) => Promise<unknown>).apply(this, args);
      } catch (error) {
        if (isConnectionFailure(error)) throw new StoreUnavailableError(`PostgreSQL unreachable: ${(error as Error).message}`, { cause: error });
        throw error;
      }
    },
    writable: true,
    configurable: true,
  });
}
