// Challenges on PostgreSQL: creation by group commit under the key's rate
// window, reads, the verification claim, receipts, expiry.
import type { SQL } from "bun";
import type { AgentRecord } from "../agents/records";
import { carriedCount, MINUTE_MS } from "../../sliding-window";
import { hasNul, isConnectionFailure, mapUnreachable, usageShard } from "../connection/postgres";
import { toAgent } from "../agents/rows";
import { budgetText, toChallenge } from "./rows";
import { StoreUnavailableError } from "../unavailable";
import type { ChallengeRecord, ChallengesStore, Claim, ClaimResult, CreateChallengeResult, RateWindow } from "./records";

interface QueuedCreation {
  challenge: ChallengeRecord;
  window: RateWindow;
  resolve: (result: CreateChallengeResult) => void;
  reject: (error: unknown) => void;
}

/** Items per creation statement; a larger queue is written in several. */
const MAX_GROUP = 500;

/** The aggregate, and what close() awaits so that creations already accepted are written, not dropped. */
export function postgresChallenges(sql: SQL): ChallengesStore & { drain(): Promise<void> } {
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
  let queued: QueuedCreation[] = [];

  let flushing: Promise<void> | null = null;

  const flushCreations = async (): Promise<void> => {
    try {
      await flushQueued();
    } finally {
      // A caller resumed by this flush may have queued more after the loop's
      // last look and before this line; those must not wait for a next caller.
      flushing = queued.length > 0 ? Promise.resolve().then(flushCreations) : null;
    }
  };

  const flushQueued = async (): Promise<void> => {
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      const groups = new Map<string, QueuedCreation[]>();
      for (const item of batch) {
        const group = `${item.challenge.keyId}\u0000${item.window.windowStart}\u0000${item.window.limit}`;
        const list = groups.get(group);
        if (list) list.push(item);
        else groups.set(group, [item]);
      }
      // Groups touch different rows (another key or window), so they run side by side.
      await Promise.all([...groups.values()].map((items) => writeGroup(items)));
    }
  };

  const writeGroup = async (items: QueuedCreation[]): Promise<void> => {
    for (let start = 0; start < items.length; start += MAX_GROUP) {
      const chunk = items.slice(start, start + MAX_GROUP);
      try {
        const results = await insertGroup(chunk);
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
            item.resolve((await insertGroup([item]))[0]!);
          } catch (itemError) {
            item.reject(itemError);
          }
        }
      }
    }
  };

  /** One statement for items of one key, window and limit, in arrival order. */
  const insertGroup = async (items: QueuedCreation[]): Promise<CreateChallengeResult[]> => {
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
        budget: budgetText(c.budget),
      })),
    );
    const shard = usageShard();
    if (limit === 0) {
      // Unlimited: the rate window is not touched (as in sqlite.ts), every item is stored.
      await sql`
        WITH items AS (
          SELECT * FROM jsonb_to_recordset(${rows}::text::jsonb) AS t(ord int, id text, agent_id text, action text, context text, nonce text,
            created_at bigint, expires_at bigint, request_id text, circuit_id text, group_id text, group_root text, group_depth bigint, budget text)),
        stored AS (
          INSERT INTO challenges (id, key_id, agent_id, action, context, nonce, created_at, expires_at, status, request_id, circuit_id, group_id, group_root, group_depth, budget)
          SELECT id, ${keyId}, agent_id, action, context, nonce, created_at, expires_at, 'pending', request_id, circuit_id, group_id, group_root, group_depth, budget FROM items ORDER BY ord
          RETURNING 1)
        INSERT INTO usage_counters (key_id, shard, challenges) SELECT ${keyId}, ${shard}, count(*) FROM stored
        ON CONFLICT (key_id, shard) DO UPDATE SET challenges = usage_counters.challenges + excluded.challenges`;
      return items.map(() => ({ created: true, used: 0 }));
    }
    // The previous minute, weighted as the sliding minute still covers it (src/sliding-window.ts); 0 without a weight.
    // Read before the statement: that minute is closed (a straggler of it is counted in the next one's estimate, not here).
    const weight = items[0]!.window.previousWeight ?? 0;
    let previous = 0;
    if (weight > 0) {
      const [before] = await sql`SELECT count FROM rate_windows WHERE key_id = ${keyId} AND window_start = ${windowStart - MINUTE_MS}`;
      previous = Number(before?.count ?? 0);
    }
    const carried = carriedCount(previous, weight);
    const [row] = await sql`
      WITH win AS (
        INSERT INTO rate_windows (key_id, window_start, count) VALUES (${keyId}, ${windowStart}, ${n})
        ON CONFLICT (key_id, window_start) DO UPDATE SET count = rate_windows.count + excluded.count
        RETURNING count),
      items AS (
        SELECT * FROM jsonb_to_recordset(${rows}::text::jsonb) AS t(ord int, id text, agent_id text, action text, context text, nonce text,
          created_at bigint, expires_at bigint, request_id text, circuit_id text, group_id text, group_root text, group_depth bigint, budget text)),
      stored AS (
        INSERT INTO challenges (id, key_id, agent_id, action, context, nonce, created_at, expires_at, status, request_id, circuit_id, group_id, group_root, group_depth, budget)
        SELECT id, ${keyId}, agent_id, action, context, nonce, created_at, expires_at, 'pending', request_id, circuit_id, group_id, group_root, group_depth, budget
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
  };

  const store: ChallengesStore = {
    async createChallenge(challenge: ChallengeRecord, window: RateWindow): Promise<CreateChallengeResult> {
      return new Promise((resolve, reject) => {
        queued.push({ challenge, window, resolve, reject });
        flushing ??= new Promise<void>((done) => setImmediate(done)).then(flushCreations);
      });
    },

    async getChallenge(id: string): Promise<ChallengeRecord | null> {
      if (hasNul(id)) return null;
      const [row] = await sql`SELECT * FROM challenges WHERE id = ${id}`;
      return row ? toChallenge(row) : null;
    },

    async getChallengeWithAgent(id: string): Promise<{ challenge: ChallengeRecord; agent: AgentRecord | null } | null> {
      if (hasNul(id)) return null;
      // The agent's row as one jsonb column, so its names cannot collide with the
      // challenge's; to_jsonb keeps text as text, and the rows.ts files map the integers
      // with Number() either way.
      const [row] = await sql`
      SELECT c.*, to_jsonb(a) AS agent_row FROM challenges c
      LEFT JOIN agents a ON a.key_id = c.key_id AND a.agent_id = c.agent_id
      WHERE c.id = ${id}`;
      if (!row) return null;
      const agent = typeof row.agent_row === "string" ? JSON.parse(row.agent_row) : row.agent_row;
      return { challenge: toChallenge(row), agent: agent ? toAgent(agent) : null };
    },

    async claimChallenge(id: string, claim: Claim): Promise<ClaimResult> {
      if (hasNul(id)) return { claimed: false, record: null };
      // Concurrent claimants of one row queue on its lock and re-check the
      // WHERE against the committed row: exactly one matches (as for decide).
      const [row] = await sql`
      UPDATE challenges SET claim_token = ${claim.token}, claim_until = ${claim.until}
      WHERE id = ${id} AND status = 'pending' AND expires_at >= ${claim.now} AND (claim_until IS NULL OR claim_until < ${claim.now})
      RETURNING id`;
      if (row) return { claimed: true };
      return { claimed: false, record: await store.getChallenge(id) };
    },

    async releaseClaim(id: string, token: string): Promise<void> {
      if (hasNul(id)) return;
      await sql`UPDATE challenges SET claim_until = NULL WHERE id = ${id} AND claim_token = ${token} AND status = 'pending'`;
    },

    async purgeChallenges(expiredBefore: number): Promise<number> {
      const removed = await sql`DELETE FROM challenges WHERE expires_at < ${expiredBefore}`;
      // Windows that old can no longer be counted into; sqlite.ts drops them too.
      await sql`DELETE FROM rate_windows WHERE window_start < ${expiredBefore}`;
      await sql`DELETE FROM agent_rate_windows WHERE window_start < ${expiredBefore}`;
      return removed.count;
    },

    async countPending(now: number, keyId?: string): Promise<number> {
      const [row] =
        keyId === undefined
          ? await sql`SELECT count(*) AS n FROM challenges WHERE status = 'pending' AND expires_at >= ${now}`
          : await sql`SELECT count(*) AS n FROM challenges WHERE key_id = ${keyId} AND status = 'pending' AND expires_at >= ${now}`;
      return Number(row.n);
    },

    async storeReceipt(id: string, receipt: string): Promise<string | null> {
      // Conditional: the first receipt stored stays, so every reader (the
      // decider, a replay, the status endpoint on any node) returns the same one.
      const [stored] = await sql`
      UPDATE challenges SET receipt = ${receipt} WHERE id = ${id} AND receipt IS NULL AND status <> 'pending' RETURNING receipt`;
      if (stored) return stored.receipt;
      const [row] = await sql`SELECT receipt FROM challenges WHERE id = ${id}`;
      return row?.receipt ?? null;
    },
  };
  return {
    ...mapUnreachable(store),
    async drain() {
      while (flushing) await flushing;
    },
  };
}
