// Challenges on SQLite: creation by group commit under the key's rate window,
// reads, the verification claim, receipts, expiry.
import type { AgentRecord } from "../agents/records";
import { carriedCount, MINUTE_MS } from "../../sliding-window";
import { locked, type SqliteDb } from "../connection/sqlite";
import { toAgent } from "../agents/rows";
import { budgetText, toChallenge } from "./rows";
import type { ChallengeRecord, ChallengesStore, Claim, ClaimResult, CreateChallengeResult, RateWindow } from "./records";

type Queued = { challenge: ChallengeRecord; window: RateWindow; resolve: (r: CreateChallengeResult) => void; reject: (e: unknown) => void };

/** The aggregate, and the flush close() runs so that creations already accepted are committed, not dropped. */
export function sqliteChallenges({ db, immediate, tryBeginImmediate, lockWaitMs }: SqliteDb): ChallengesStore & { flushOnClose(): void } {
  const q = {
    countWindow: db.query(
      `INSERT INTO rate_windows (key_id, window_start, count) VALUES (?, ?, 1)
       ON CONFLICT (key_id, window_start) DO UPDATE SET count = count + 1 RETURNING count`,
    ),
    insertChallenge: db.query(
      `INSERT INTO challenges (id, key_id, agent_id, action, context, nonce, created_at, expires_at, status, request_id, circuit_id, group_id, group_root, group_depth, budget)
       VALUES ($id, $keyId, $agentId, $action, $context, $nonce, $createdAt, $expiresAt, 'pending', $requestId, $circuitId, $groupId, $groupRoot, $groupDepth, $budget)`,
    ),
    countChallenge: db.query("UPDATE api_keys SET challenges = challenges + 1 WHERE id = ?"),
    countWindowBy: db.query(
      `INSERT INTO rate_windows (key_id, window_start, count) VALUES (?, ?, ?)
       ON CONFLICT (key_id, window_start) DO UPDATE SET count = count + excluded.count RETURNING count`,
    ),
    countChallenges: db.query("UPDATE api_keys SET challenges = challenges + ? WHERE id = ?"),
    rateWindow: db.query("SELECT count FROM rate_windows WHERE key_id = ? AND window_start = ?"),
    getChallenge: db.query("SELECT * FROM challenges WHERE id = ?"),
    getAgent: db.query("SELECT * FROM agents WHERE key_id = ? AND agent_id = ?"),
    claim: db.query(
      `UPDATE challenges SET claim_token = $token, claim_until = $until
       WHERE id = $id AND status = 'pending' AND expires_at >= $now AND (claim_until IS NULL OR claim_until < $now) RETURNING id`,
    ),
    releaseClaim: db.query("UPDATE challenges SET claim_until = NULL WHERE id = ? AND claim_token = ? AND status = 'pending'"),
    purge: db.query("DELETE FROM challenges WHERE expires_at < ?"),
    purgeWindows: db.query("DELETE FROM rate_windows WHERE window_start < ?"),
    purgeAgentWindows: db.query("DELETE FROM agent_rate_windows WHERE window_start < ?"),
    storeReceipt: db.query("UPDATE challenges SET receipt = ? WHERE id = ? AND receipt IS NULL AND status <> 'pending' RETURNING receipt"),
    getReceipt: db.query("SELECT receipt FROM challenges WHERE id = ?"),
    pendingAll: db.query("SELECT count(*) AS n FROM challenges WHERE status = 'pending' AND expires_at >= ?"),
    pendingForKey: db.query("SELECT count(*) AS n FROM challenges WHERE key_id = ? AND status = 'pending' AND expires_at >= ?"),
  };

  /** The challenge's row, as both the single and the group-commit creation write it. */
  const insertChallenge = (challenge: ChallengeRecord): void => {
    const { id, keyId, agentId, action, context, nonce, createdAt, expiresAt } = challenge;
    q.insertChallenge.run({
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
      budget: budgetText(challenge.budget),
    });
  };

  /** The previous minute's count, weighted as the sliding minute covers it (src/sliding-window.ts; 0 without a weight). */
  const carried = (keyId: string, window: RateWindow): { previous: number; carried: number } => {
    const weight = window.previousWeight ?? 0;
    if (weight <= 0) return { previous: 0, carried: 0 };
    const previous = (q.rateWindow.get(keyId, window.windowStart - MINUTE_MS) as { count: number } | null)?.count ?? 0;
    return { previous, carried: carriedCount(previous, weight) };
  };

  const createChallengeTx = (challenge: ChallengeRecord, window: RateWindow): CreateChallengeResult => {
    let used = 0;
    if (window.limit > 0) {
      const current = (q.countWindow.get(challenge.keyId, window.windowStart) as { count: number }).count;
      const before = carried(challenge.keyId, window);
      used = current + before.carried;
      if (used > window.limit) return { created: false, used, previous: before.previous, current };
    }
    insertChallenge(challenge);
    q.countChallenge.run(challenge.keyId);
    return { created: true, used };
  };

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
  let pending: Queued[] = [];
  let flushScheduled = false;
  let flushWaitingSince: number | undefined;
  const savepoint = db.transaction(createChallengeTx);

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
  const writeTogether = (batch: readonly { challenge: ChallengeRecord; window: RateWindow }[]): CreateChallengeResult[] | null => {
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
        const total = (q.countWindowBy.get(challenge.keyId, window.windowStart, members.length) as { count: number }).count;
        // One turn of the event loop: the first item's weight stands for the batch's (they differ by a millisecond or so).
        const before = carried(challenge.keyId, window);
        members.forEach((i, k) => {
          const current = total - members.length + 1 + k;
          const used = current + before.carried;
          results[i] = used <= window.limit ? { created: true, used } : { created: false, used, previous: before.previous, current };
        });
      }
      const createdPerKey = new Map<string, number>();
      batch.forEach(({ challenge }, i) => {
        if (!results[i]!.created) return;
        insertChallenge(challenge);
        createdPerKey.set(challenge.keyId, (createdPerKey.get(challenge.keyId) ?? 0) + 1);
      });
      for (const [keyId, n] of createdPerKey) q.countChallenges.run(n, keyId);
      return results;
    } catch {
      db.exec("ROLLBACK");
      return null;
    }
  };

  const flushChallenges = (closing = false): void => {
    flushScheduled = false;
    if (pending.length === 0) return;
    // Another process (a sibling worker, the CLI) may hold the write lock.
    // SQLite's busy handler would sleep this whole process in 1–100 ms steps;
    // instead try the lock without waiting and, when it is taken, keep
    // serving and queueing, and try again on the next turn — the batch only
    // grows meanwhile. After lockWaitMs of that, give up: StoreUnavailableError.
    flushWaitingSince ??= Date.now();
    const batch = pending;
    try {
      if (!tryBeginImmediate()) {
        const waited = Date.now() - flushWaitingSince;
        if (!closing && waited < lockWaitMs) {
          flushScheduled = true;
          setTimeout(flushChallenges, 0);
          return;
        }
        throw locked("create challenge", waited);
      }
    } catch (error) {
      flushWaitingSince = undefined;
      pending = [];
      for (const item of batch) item.reject(error);
      return;
    }
    flushWaitingSince = undefined;
    pending = [];
    let outcomes: ({ ok: true; value: CreateChallengeResult } | { ok: false; error: unknown })[] = [];
    try {
      const together = writeTogether(batch);
      if (together) outcomes = together.map((value) => ({ ok: true, value }));
      else {
        // Rare (an item's insert failed, and writeTogether rolled back): take
        // the lock again without waiting. If another process got it in
        // between, the batch answers 503 rather than park the event loop in
        // SQLite's busy handler. (A savepoint around writeTogether would keep
        // the lock, but its SAVEPOINT/RELEASE on every batch cost 15–25 % of
        // challenge creation under wrk.)
        if (!tryBeginImmediate()) throw locked("create challenge", 0);
        for (const item of batch) {
          try {
            outcomes.push({ ok: true, value: savepoint(item.challenge, item.window) });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      }
      db.exec("COMMIT");
    } catch (error) {
      // COMMIT failed (disk full, I/O error): nothing in the batch is stored,
      // so every caller gets the error.
      if (db.inTransaction) db.exec("ROLLBACK");
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  };

  return {
    flushOnClose: () => flushChallenges(true),

    async createChallenge(challenge: ChallengeRecord, window: RateWindow): Promise<CreateChallengeResult> {
      return new Promise((resolve, reject) => {
        pending.push({ challenge, window, resolve, reject });
        if (!flushScheduled) {
          flushScheduled = true;
          setImmediate(flushChallenges);
        }
      });
    },

    async getChallenge(id: string): Promise<ChallengeRecord | null> {
      const row = q.getChallenge.get(id);
      return row ? toChallenge(row) : null;
    },

    async getChallengeWithAgent(id: string): Promise<{ challenge: ChallengeRecord; agent: AgentRecord | null } | null> {
      const row = q.getChallenge.get(id);
      if (!row) return null;
      const challenge = toChallenge(row);
      const agent = q.getAgent.get(challenge.keyId, challenge.agentId);
      return { challenge, agent: agent ? toAgent(agent) : null };
    },

    async claimChallenge(id: string, claim: Claim): Promise<ClaimResult> {
      return immediate("claim challenge", (): ClaimResult => {
        if (q.claim.get({ id, ...claim })) return { claimed: true };
        const current = q.getChallenge.get(id);
        return { claimed: false, record: current ? toChallenge(current) : null };
      });
    },

    async releaseClaim(id: string, token: string): Promise<void> {
      await immediate("release claim", () => q.releaseClaim.run(id, token));
    },

    async purgeChallenges(expiredBefore: number): Promise<number> {
      return immediate("purge challenges", () => {
        const removed = q.purge.run(expiredBefore).changes;
        // Windows that old can no longer be counted into (the agents' registration windows too).
        q.purgeWindows.run(expiredBefore);
        q.purgeAgentWindows.run(expiredBefore);
        return removed;
      });
    },

    async countPending(now: number, keyId?: string): Promise<number> {
      const row = (keyId === undefined ? q.pendingAll.get(now) : q.pendingForKey.get(keyId, now)) as { n: number };
      return row.n;
    },

    async storeReceipt(id: string, receipt: string): Promise<string | null> {
      // Conditional: the first receipt stored stays (see postgres.ts).
      // On the proof path: waits for another process's lock on timers, like decideChallenge.
      const row = (await immediate("store receipt", () => q.storeReceipt.get(receipt, id) ?? q.getReceipt.get(id))) as {
        receipt: string | null;
      } | null;
      return row?.receipt ?? null;
    },
  };
}
