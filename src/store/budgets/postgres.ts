// Budget spends on PostgreSQL: one transaction inserts the nullifier under
// its unique key (a second inserter of the same nullifier waits for the
// first to commit, then conflicts) and takes the group's next note index
// from its head row (a row lock: dense indices in commit order).
import type { SQL } from "bun";
import { mapUnreachable } from "../connection/postgres";
import type { BudgetNote, BudgetsStore, Checkpoint, EnrolmentRecord, GrownGroup, SpendRecord } from "./records";

export function postgresBudgets(sql: SQL): BudgetsStore {
  return mapUnreachable<BudgetsStore>({
    async claimEnrolment(e: EnrolmentRecord): Promise<"claimed" | "mandate" | "identity"> {
      // Either unique key conflicting inserts nothing; a concurrent claim of either waits for the first to commit, then conflicts.
      const [fresh] = await sql`
        INSERT INTO budget_enrolments (mandate, group_id, identity_commitment, leaf, enrolled_at)
        VALUES (${e.mandate}, ${e.groupId}, ${e.identityCommitment}, ${e.leaf}, ${e.enrolledAt})
        ON CONFLICT DO NOTHING RETURNING 1 AS ok`;
      if (fresh) return "claimed";
      const [taken] = await sql`SELECT 1 AS ok FROM budget_enrolments WHERE mandate = ${e.mandate}`;
      return taken ? "mandate" : "identity";
    },

    async releaseEnrolment(mandate: string): Promise<void> {
      await sql`DELETE FROM budget_enrolments WHERE mandate = ${mandate}`;
    },

    async recordBudgetSpend(groupId: string, nullifier: string, commitment: string, at: number): Promise<SpendRecord> {
      return sql.begin(async (tx) => {
        const [fresh] = await tx`
          INSERT INTO budget_nullifiers (group_id, nullifier, commitment, at) VALUES (${groupId}, ${nullifier}, ${commitment}, ${at})
          ON CONFLICT (group_id, nullifier) DO NOTHING RETURNING 1 AS ok`;
        if (!fresh) return { recorded: false, reason: "already_spent" } as const;
        const [{ size }] = await tx`
          INSERT INTO budget_heads (group_id, size) VALUES (${groupId}, 2)
          ON CONFLICT (group_id) DO UPDATE SET size = budget_heads.size + 1 RETURNING size`;
        const index = Number(size) - 1;
        await tx`INSERT INTO budget_notes (group_id, idx, commitment) VALUES (${groupId}, ${index}, ${commitment})`;
        return { recorded: true, index } as const;
      });
    },

    async budgetNotes(groupId: string, from: number, limit: number): Promise<BudgetNote[]> {
      const rows = await sql`SELECT idx, commitment FROM budget_notes WHERE group_id = ${groupId} AND idx >= ${from} ORDER BY idx LIMIT ${limit}`;
      return rows.map((row: { idx: number | string; commitment: string }) => ({ index: Number(row.idx), commitment: row.commitment }));
    },

    async notesSize(groupId: string): Promise<number> {
      const [row] = await sql`SELECT size FROM budget_heads WHERE group_id = ${groupId}`;
      return row ? Number(row.size) : 1;
    },

    async recordCheckpoint(groupId: string, c: Checkpoint): Promise<boolean> {
      const rows = await sql`
        INSERT INTO budget_checkpoints (group_id, sequence, size, root, at) VALUES (${groupId}, ${c.sequence}, ${c.size}, ${c.root}, ${c.at})
        ON CONFLICT DO NOTHING RETURNING 1 AS ok`;
      return rows.length === 1;
    },

    async checkpoints(groupId: string, limit: number): Promise<Checkpoint[]> {
      const rows = await sql`
        SELECT sequence, size, root, at FROM (SELECT * FROM budget_checkpoints WHERE group_id = ${groupId} ORDER BY sequence DESC LIMIT ${limit}) c
        ORDER BY sequence`;
      return rows.map((row: any) => ({ sequence: Number(row.sequence), size: Number(row.size), root: row.root, at: Number(row.at) }));
    },

    async purgeCheckpoints(before: number, keep: number): Promise<number> {
      const rows = await sql`
        DELETE FROM budget_checkpoints c WHERE c.at < ${before}
          AND c.sequence <= (SELECT MAX(sequence) FROM budget_checkpoints n WHERE n.group_id = c.group_id) - ${Math.max(1, keep)}
        RETURNING 1 AS ok`;
      return rows.length;
    },

    async grownGroups(): Promise<GrownGroup[]> {
      const rows = await sql`
        SELECT g.group_id, COALESCE(h.size, 1) AS size, c.sequence, c.size AS checkpoint_size
        FROM groups g LEFT JOIN budget_heads h ON h.group_id = g.group_id
        LEFT JOIN LATERAL (SELECT sequence, size FROM budget_checkpoints WHERE group_id = g.group_id ORDER BY sequence DESC LIMIT 1) c ON true
        WHERE g.budget AND (c.sequence IS NULL OR COALESCE(h.size, 1) > c.size)`;
      return rows.map((row: any) => ({
        groupId: row.group_id,
        size: Number(row.size),
        sequence: row.sequence === null ? -1 : Number(row.sequence),
        checkpointSize: row.checkpoint_size === null ? 0 : Number(row.checkpoint_size),
      }));
    },
  });
}
