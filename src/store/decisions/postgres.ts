// The decision of a challenge on PostgreSQL: the one transaction that spans
// aggregates. It decides the challenge with one conditional update, judges a
// group proof's root against the group's history (the group row held FOR
// SHARE), checks and spends the agent's (or the group member's) mandate with
// its period rows locked, counts the key's usage and writes the outbox's
// webhook event — all commit together or none does.
import type { SQL } from "bun";
import { applyMandate, type MandateDecision, type MandateScope, planMandate } from "../../mandates/enforce";
import { type MandateResult, type Spend, spendKeyId } from "../../mandates/evaluate";
import { eventTypeOf, newEventId, subscribedPattern } from "../../webhooks/events";
import { outboxWritten } from "../../webhooks/wake";
import type { ChallengeRecord } from "../challenges/records";
import { hasNul, mapUnreachable, usageShard } from "../connection/postgres";
import { refuseRoot } from "../groups/change";
import { toSpend } from "../agents/rows";
import { evidenceText, toChallenge } from "../challenges/rows";
import { acceptSpend, type DecideResult, type Decision, type DecisionsStore, dayCurrent, refuseSpend, type SpendScope } from "./records";
/** `rootDurationMs`: how long a replaced group root stays acceptable (src/groups/roots.ts). */
export function postgresDecisions(sql: SQL, rootDurationMs: number): DecisionsStore {
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
  const decideWithoutMandate = async (id: string, decision: Decision, scope?: MandateScope): Promise<DecideResult | null> => {
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
    const rows = await sql`
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
  };

  const decideInTransaction = async (id: string, proposed: Decision, scope?: MandateScope): Promise<DecideResult> => {
    const requestId = proposed.requestId ?? null;
    let evented = false;
    const result = await sql.begin(async (tx): Promise<DecideResult> => {
      let decision = proposed;
      let mandate: MandateDecision | null = null;
      let checked: MandateResult | null = null;
      const group = scope?.group;
      if (scope && group && proposed.status === "verified") {
        // FOR SHARE waits for a removal in progress (it holds the row FOR
        // UPDATE) and then reads its committed removed_version: a removal
        // acknowledged anywhere refuses the removed member here.
        const [row] = await tx`SELECT mandate, removed_version, version FROM groups WHERE group_id = ${group.groupId} FOR SHARE`;
        const [ok] = row
          ? await tx`SELECT 1 AS ok FROM group_roots r WHERE r.group_id = ${group.groupId} AND r.root = ${group.root} AND r.root <> '0'
              AND r.version >= ${row.removed_version}
              AND (r.version = ${row.version} OR EXISTS (SELECT 1 FROM group_roots n WHERE n.group_id = r.group_id AND n.version = r.version + 1
                                                          AND n.made_at > ${proposed.decidedAt - rootDurationMs}))
              LIMIT 1`
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
      evented = await writeOutbox(tx, record);
      return { decided: true, record, ...(scope ? { mandate } : {}) };
    });
    if (evented) outboxWritten();
    return result;
  };

  /** The decided record's webhook event and its deliveries, inside the deciding transaction, when the key has an endpoint subscribed to it. */
  const writeOutbox = async (tx: SQL, record: ChallengeRecord): Promise<boolean> => {
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
  };

  /**
   * A budget spend's deciding transaction (docs/protocol.md). The challenge
   * row is locked first (a second submission of it waits, then finds it
   * decided); the group row FOR SHARE (a removal in progress holds it FOR
   * UPDATE: the spend waits for it, then reads its removed_version); the
   * nullifier's unique key admits one spend of a note: a second inserter
   * waits for the first to commit, then conflicts. The head row hands out
   * the note's index under its row lock, so indices are dense in commit order.
   */
  const decideSpendInTransaction = async (id: string, proposed: Decision, spend: SpendScope): Promise<DecideResult> => {
    let evented = false;
    const result = await sql.begin(async (tx): Promise<DecideResult> => {
      const [found] = await tx`SELECT * FROM challenges WHERE id = ${id} FOR UPDATE`;
      if (!found) return { decided: false, record: null };
      const current = toChallenge(found);
      if (current.status !== "pending" || current.expiresAt < proposed.decidedAt) return { decided: false, record: current };
      const at = proposed.decidedAt;
      const [group] = await tx`SELECT removed_version, version FROM groups WHERE group_id = ${spend.groupId} FOR SHARE`;
      const [member] = group
        ? await tx`SELECT 1 AS ok FROM group_roots r WHERE r.group_id = ${spend.groupId} AND r.root = ${spend.enrolmentRoot} AND r.root <> '0'
            AND r.version >= ${group.removed_version}
            AND (r.version = ${group.version} OR EXISTS (SELECT 1 FROM group_roots n WHERE n.group_id = r.group_id AND n.version = r.version + 1
                                                        AND n.made_at > ${at - rootDurationMs}))
            LIMIT 1`
        : [];
      let decision: Decision;
      if (!member) decision = refuseSpend(proposed, "not_member", 0);
      else {
        const [recent] = await tx`
          SELECT 1 AS ok FROM (SELECT root FROM budget_checkpoints WHERE group_id = ${spend.groupId} ORDER BY sequence DESC LIMIT ${spend.window}) c
          WHERE root = ${spend.notesRoot} LIMIT 1`;
        if (!recent) decision = refuseSpend(proposed, "stale_notes_root", 1);
        else if (!dayCurrent(spend.day, at)) decision = refuseSpend(proposed, "period_ended", 2);
        else {
          const [fresh] = await tx`
            INSERT INTO budget_nullifiers (group_id, nullifier, commitment, at) VALUES (${spend.groupId}, ${spend.nullifier}, ${spend.commitment}, ${at})
            ON CONFLICT (group_id, nullifier) DO NOTHING RETURNING 1 AS ok`;
          if (!fresh) decision = refuseSpend(proposed, "already_spent", 3);
          else {
            const [{ size }] = await tx`
              INSERT INTO budget_heads (group_id, size) VALUES (${spend.groupId}, 2)
              ON CONFLICT (group_id) DO UPDATE SET size = budget_heads.size + 1 RETURNING size`;
            await tx`INSERT INTO budget_notes (group_id, idx, commitment) VALUES (${spend.groupId}, ${Number(size) - 1}, ${spend.commitment})`;
            decision = acceptSpend(proposed);
          }
        }
      }
      const { status, decidedAt, confidence, reason } = decision;
      const [row] = await tx`
        UPDATE challenges SET status = ${status}, decided_at = ${decidedAt}, confidence = ${confidence}, reason = ${reason},
          decided_request_id = ${decision.requestId ?? null}, evidence = ${evidenceText(decision.evidence)}, receipt = ${null}
        WHERE id = ${id} RETURNING *`;
      const record = toChallenge(row);
      const shard = usageShard();
      if (status === "verified")
        await tx`INSERT INTO usage_counters (key_id, shard, verified) VALUES (${record.keyId}, ${shard}, 1)
          ON CONFLICT (key_id, shard) DO UPDATE SET verified = usage_counters.verified + 1`;
      else
        await tx`INSERT INTO usage_counters (key_id, shard, failed) VALUES (${record.keyId}, ${shard}, 1)
          ON CONFLICT (key_id, shard) DO UPDATE SET failed = usage_counters.failed + 1`;
      evented = await writeOutbox(tx, record);
      return { decided: true, record };
    });
    if (evented) outboxWritten();
    return result;
  };

  const store: DecisionsStore = {
    async decideSpend(id: string, decision: Decision, spend: SpendScope): Promise<DecideResult> {
      if (hasNul(id)) return { decided: false, record: null };
      return decideSpendInTransaction(id, decision, spend);
    },

    async decideChallenge(id: string, proposed: Decision, scope?: MandateScope): Promise<DecideResult> {
      if (hasNul(id)) return { decided: false, record: null };
      // A verified group decision always takes the transaction: its root is judged there.
      if (!(scope?.group && proposed.status === "verified")) {
        const fast = await decideWithoutMandate(id, proposed, scope);
        if (fast) return fast;
      }
      return decideInTransaction(id, proposed, scope);
    },
  };
  return mapUnreachable(store);
}
