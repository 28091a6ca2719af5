// Budget spends on SQLite: the nullifier's insert and the note's append in
// one BEGIN IMMEDIATE transaction, so the writer lock orders every spend of
// every process on the file.
import type { SqliteDb } from "../connection/sqlite";
import type { BudgetNote, BudgetsStore, Checkpoint, EnrolmentRecord, GrownGroup, SpendRecord } from "./records";

export function sqliteBudgets({ db, immediate }: SqliteDb): BudgetsStore {
  const q = {
    nullifier: db.query("INSERT INTO budget_nullifiers (group_id, nullifier, commitment, at) VALUES (?, ?, ?, ?) ON CONFLICT (group_id, nullifier) DO NOTHING"),
    head: db.query<{ size: number }, [string]>(
      "INSERT INTO budget_heads (group_id, size) VALUES (?, 2) ON CONFLICT (group_id) DO UPDATE SET size = size + 1 RETURNING size",
    ),
    note: db.query("INSERT INTO budget_notes (group_id, idx, commitment) VALUES (?, ?, ?)"),
    claim: db.query("INSERT INTO budget_enrolments (mandate, group_id, identity_commitment, leaf, enrolled_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"),
    mandateTaken: db.query("SELECT 1 AS ok FROM budget_enrolments WHERE mandate = ?"),
    release: db.query("DELETE FROM budget_enrolments WHERE mandate = ?"),
    notes: db.query<{ idx: number; commitment: string }, [string, number, number]>(
      "SELECT idx, commitment FROM budget_notes WHERE group_id = ? AND idx >= ? ORDER BY idx LIMIT ?",
    ),
    size: db.query<{ size: number }, [string]>("SELECT size FROM budget_heads WHERE group_id = ?"),
    checkpoint: db.query("INSERT INTO budget_checkpoints (group_id, sequence, size, root, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"),
    checkpoints: db.query<{ sequence: number; size: number; root: string; at: number }, [string, number]>(
      "SELECT sequence, size, root, at FROM (SELECT * FROM budget_checkpoints WHERE group_id = ? ORDER BY sequence DESC LIMIT ?) ORDER BY sequence",
    ),
    purgeCheckpoints: db.query(
      `DELETE FROM budget_checkpoints WHERE at < ? AND sequence <= (SELECT MAX(sequence) FROM budget_checkpoints n WHERE n.group_id = budget_checkpoints.group_id) - ?`,
    ),
    grown: db.query<{ group_id: string; size: number; sequence: number | null; checkpoint_size: number | null }, []>(
      `SELECT g.group_id, COALESCE(h.size, 1) AS size, c.sequence, c.size AS checkpoint_size
       FROM groups g LEFT JOIN budget_heads h ON h.group_id = g.group_id
       LEFT JOIN budget_checkpoints c ON c.group_id = g.group_id AND c.sequence = (SELECT MAX(sequence) FROM budget_checkpoints WHERE group_id = g.group_id)
       WHERE g.budget = 1 AND (c.sequence IS NULL OR COALESCE(h.size, 1) > c.size)`,
    ),
  };
  return {
    async claimEnrolment(e: EnrolmentRecord): Promise<"claimed" | "mandate" | "identity"> {
      return immediate("claim budget enrolment", () => {
        if (q.claim.run(e.mandate, e.groupId, e.identityCommitment, e.leaf, e.enrolledAt).changes === 1) return "claimed";
        return q.mandateTaken.get(e.mandate) ? "mandate" : "identity";
      });
    },

    async releaseEnrolment(mandate: string): Promise<void> {
      q.release.run(mandate);
    },

    async recordBudgetSpend(groupId: string, nullifier: string, commitment: string, at: number): Promise<SpendRecord> {
      return immediate("record budget spend", () => {
        if (q.nullifier.run(groupId, nullifier, commitment, at).changes === 0) return { recorded: false, reason: "already_spent" } as const;
        const index = q.head.get(groupId)!.size - 1;
        q.note.run(groupId, index, commitment);
        return { recorded: true, index } as const;
      });
    },

    async budgetNotes(groupId: string, from: number, limit: number): Promise<BudgetNote[]> {
      return q.notes.all(groupId, from, limit).map((row) => ({ index: row.idx, commitment: row.commitment }));
    },

    async notesSize(groupId: string): Promise<number> {
      return q.size.get(groupId)?.size ?? 1;
    },

    async recordCheckpoint(groupId: string, c: Checkpoint): Promise<boolean> {
      return immediate("record checkpoint", () => q.checkpoint.run(groupId, c.sequence, c.size, c.root, c.at).changes === 1);
    },

    async checkpoints(groupId: string, limit: number): Promise<Checkpoint[]> {
      return q.checkpoints.all(groupId, limit).map((row) => ({ sequence: row.sequence, size: row.size, root: row.root, at: row.at }));
    },

    async purgeCheckpoints(before: number, keep: number): Promise<number> {
      return immediate("purge checkpoints", () => q.purgeCheckpoints.run(before, Math.max(1, keep)).changes);
    },

    async grownGroups(): Promise<GrownGroup[]> {
      return q.grown.all().map((row) => ({
        groupId: row.group_id,
        size: row.size,
        sequence: row.sequence ?? -1,
        checkpointSize: row.checkpoint_size ?? 0,
      }));
    },
  };
}
