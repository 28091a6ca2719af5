// Budget spends on SQLite: the nullifier's insert and the note's append in
// one BEGIN IMMEDIATE transaction, so the writer lock orders every spend of
// every process on the file.
import type { SqliteDb } from "../connection/sqlite";
import type { BudgetNote, BudgetsStore, EnrolmentRecord, SpendRecord } from "./records";

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
  };
}
