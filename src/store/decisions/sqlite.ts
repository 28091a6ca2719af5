// The decision of a challenge on SQLite: the one write transaction that spans
// aggregates. It decides the challenge with one conditional update, judges a
// group proof's root against the group's history, checks and spends the
// agent's (or the group member's) mandate, counts the key's usage and writes
// the outbox's webhook event — all commit together or none does.
import { applyMandate, type MandateDecision, type MandateScope, planMandate } from "../../mandates/enforce";
import { type MandateResult, NO_SPEND, type SpendKey, spendKeyId } from "../../mandates/evaluate";
import { eventTypeOf, newEventId, subscribedPattern } from "../../webhooks/events";
import { outboxWritten } from "../../webhooks/wake";
import type { ChallengeRecord } from "../challenges/records";
import type { SqliteDb } from "../connection/sqlite";
import { refuseRoot } from "../groups/change";
import { toAgent, toSpend } from "../agents/rows";
import { evidenceText, toChallenge } from "../challenges/rows";
import { acceptSpend, type DecideResult, type Decision, type DecisionsStore, dayCurrent, refuseSpend, type SpendScope } from "./records";

/** `rootDurationMs`: how long a replaced group root stays acceptable (src/groups/roots.ts). */
export function sqliteDecisions({ db, immediate }: SqliteDb, rootDurationMs: number): DecisionsStore {
  const q = {
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
    getGroup: db.query("SELECT * FROM groups WHERE group_id = ?"),
    acceptableRoot: db.query(
      // src/groups/roots.ts: since the last removal, and current or replaced (its successor made) after the cutoff.
      `SELECT 1 AS ok FROM group_roots r JOIN groups g ON g.group_id = r.group_id
       WHERE r.group_id = ? AND r.root = ? AND r.version >= g.removed_version AND r.root <> '0'
         AND (r.version = g.version OR EXISTS (SELECT 1 FROM group_roots n WHERE n.group_id = r.group_id AND n.version = r.version + 1 AND n.made_at > ?))
       LIMIT 1`,
    ),
    getAgent: db.query("SELECT * FROM agents WHERE key_id = ? AND agent_id = ?"),
    getChallenge: db.query("SELECT * FROM challenges WHERE id = ?"),
    decide: db.query(
      `UPDATE challenges SET status = $status, decided_at = $decidedAt, confidence = $confidence, reason = $reason,
         decided_request_id = $requestId, evidence = $evidence, receipt = $receipt
       WHERE id = $id AND status = 'pending' AND expires_at >= $decidedAt RETURNING *`,
    ),
    recentCheckpoint: db.query(
      "SELECT 1 AS ok FROM (SELECT root FROM budget_checkpoints WHERE group_id = ? ORDER BY sequence DESC LIMIT ?) WHERE root = ? LIMIT 1",
    ),
    nullifier: db.query("INSERT INTO budget_nullifiers (group_id, nullifier, commitment, at) VALUES (?, ?, ?, ?) ON CONFLICT (group_id, nullifier) DO NOTHING"),
    head: db.query<{ size: number }, [string]>(
      "INSERT INTO budget_heads (group_id, size) VALUES (?, 2) ON CONFLICT (group_id) DO UPDATE SET size = size + 1 RETURNING size",
    ),
    note: db.query("INSERT INTO budget_notes (group_id, idx, commitment) VALUES (?, ?, ?)"),
    countVerified: db.query("UPDATE api_keys SET verified = verified + 1 WHERE id = ?"),
    countFailed: db.query("UPDATE api_keys SET failed = failed + 1 WHERE id = ?"),
    subscribedEndpoints: db.query("SELECT id FROM webhook_endpoints WHERE key_id = ? AND deleted_at IS NULL AND events LIKE ?"),
    outboxEvent: db.query("INSERT INTO webhook_events (id, key_id, type, session_id, created_at) VALUES ($eventId, $keyId, $type, $sessionId, $at)"),
    outboxDelivery: db.query(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, key_id, state, attempts, next_at, created_at)
       VALUES ($eventId, $endpointId, $keyId, 'pending', 0, $at, $at)`,
    ),
  };

  const decideTx = (id: string, proposed: Decision, scope?: MandateScope): DecideResult => {
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
      if (q.acceptableRoot.get(group.groupId, group.root, proposed.decidedAt - rootDurationMs) === null) {
        decision = refuseRoot(proposed);
      } else {
        const row = q.getGroup.get(group.groupId) as { mandate: string | null } | null;
        const plan = planMandate(row ? { mandate: row.mandate, mandateJws: null } : null, scope, proposed.decidedAt);
        if (plan) {
          const spend = (key: SpendKey) => {
            const found = q.getGroupSpend.get({ keyId: scope.keyId, groupId: group.groupId, pseudonym: group.pseudonym, ...key });
            return found ? toSpend(found) : NO_SPEND;
          };
          checked = plan.evaluate(new Map(plan.keys.map((key) => [spendKeyId(key), spend(key)])));
          ({ decision, mandate } = applyMandate(proposed, plan, checked));
        }
      }
    } else if (scope && proposed.status === "verified") {
      const agent = q.getAgent.get(scope.keyId, scope.agentId);
      const plan = planMandate(agent ? toAgent(agent) : null, scope, proposed.decidedAt);
      if (plan) {
        const spend = (key: SpendKey) => {
          const row = q.getSpend.get({ keyId: scope.keyId, agentId: scope.agentId, ...key });
          return row ? toSpend(row) : NO_SPEND;
        };
        checked = plan.evaluate(new Map(plan.keys.map((key) => [spendKeyId(key), spend(key)])));
        ({ decision, mandate } = applyMandate(proposed, plan, checked));
      }
    }
    const { status, decidedAt, confidence, reason } = decision;
    const evidence = evidenceText(decision.evidence);
    const receipt = decision.receipt ?? null;
    const row = q.decide.get({ id, status, decidedAt, confidence, reason, requestId: decision.requestId ?? null, evidence, receipt });
    if (!row) {
      const current = q.getChallenge.get(id);
      return { decided: false, record: current ? toChallenge(current) : null };
    }
    const record = toChallenge(row);
    if (checked?.ok) {
      for (const { key, spend } of checked.updates) {
        if (group) q.putGroupSpend.run({ keyId: scope!.keyId, groupId: group.groupId, pseudonym: group.pseudonym, ...key, ...spend });
        else q.putSpend.run({ keyId: scope!.keyId, agentId: scope!.agentId, ...key, ...spend });
      }
    }
    (decision.status === "verified" ? q.countVerified : q.countFailed).run(record.keyId);
    return { decided: true, record, ...(scope ? { mandate } : {}) };
  };

  /**
   * A budget spend's deciding transaction (docs/protocol.md): inside BEGIN
   * IMMEDIATE, which excludes every other writer on the file, so the checks
   * read what the writes then change; the nullifier's unique key is the
   * rule that admits one spend of a note, whatever else runs.
   */
  const spendTx = (id: string, proposed: Decision, spend: SpendScope): DecideResult => {
    const found = q.getChallenge.get(id);
    if (!found) return { decided: false, record: null };
    const current = toChallenge(found);
    // Judged before anything is consumed: a challenge decided or expired meanwhile spends nothing.
    if (current.status !== "pending" || current.expiresAt < proposed.decidedAt) return { decided: false, record: current };
    const at = proposed.decidedAt;
    let decision: Decision;
    if (q.acceptableRoot.get(spend.groupId, spend.enrolmentRoot, at - rootDurationMs) === null) decision = refuseSpend(proposed, "not_member", 0);
    else if (q.recentCheckpoint.get(spend.groupId, spend.window, spend.notesRoot) === null) decision = refuseSpend(proposed, "stale_notes_root", 1);
    else if (!dayCurrent(spend.day, at)) decision = refuseSpend(proposed, "period_ended", 2);
    else if (q.nullifier.run(spend.groupId, spend.nullifier, spend.commitment, at).changes === 0) decision = refuseSpend(proposed, "already_spent", 3);
    else {
      q.note.run(spend.groupId, q.head.get(spend.groupId)!.size - 1, spend.commitment);
      decision = acceptSpend(proposed);
    }
    const { status, decidedAt, confidence, reason } = decision;
    const row = q.decide.get({
      id,
      status,
      decidedAt,
      confidence,
      reason,
      requestId: decision.requestId ?? null,
      evidence: evidenceText(decision.evidence),
      receipt: null,
    });
    const record = toChallenge(row);
    (status === "verified" ? q.countVerified : q.countFailed).run(record.keyId);
    return { decided: true, record };
  };

  /** The decided record's event and its deliveries, when the key has an endpoint subscribed to it. Inside the open transaction. */
  const writeOutbox = (record: ChallengeRecord): boolean => {
    const type = eventTypeOf(record.status as "verified" | "failed");
    // A read, then single-row inserts: a key without endpoints costs the
    // decision one indexed read, and no INSERT … SELECT (which takes a
    // statement journal inside a transaction) runs at all (bench/outbox.ts).
    const endpoints = q.subscribedEndpoints.all(record.keyId, subscribedPattern(type)) as { id: string }[];
    if (endpoints.length === 0) return false;
    const params = { eventId: newEventId(), keyId: record.keyId, at: record.decidedAt! };
    q.outboxEvent.run({ ...params, type, sessionId: record.id });
    for (const { id } of endpoints) q.outboxDelivery.run({ ...params, endpointId: id });
    return true;
  };

  return {
    async decideChallenge(id: string, decision: Decision, mandate?: MandateScope): Promise<DecideResult> {
      let evented = false;
      const result = await immediate("decide challenge", () => {
        const outcome = decideTx(id, decision, mandate);
        // The decision's webhook event, in the decision's own transaction: both commit or neither.
        if (outcome.decided) evented = writeOutbox(outcome.record);
        return outcome;
      });
      if (evented) outboxWritten();
      return result;
    },

    async decideSpend(id: string, decision: Decision, spend: SpendScope): Promise<DecideResult> {
      let evented = false;
      const result = await immediate("decide spend", () => {
        const outcome = spendTx(id, decision, spend);
        if (outcome.decided) evented = writeOutbox(outcome.record);
        return outcome;
      });
      if (evented) outboxWritten();
      return result;
    },
  };
}
