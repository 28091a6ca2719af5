// Budget spends on PostgreSQL: one transaction inserts the nullifier under
// its unique key (a second inserter of the same nullifier waits for the
// first to commit, then conflicts) and takes the group's next note index
// from its head row (a row lock: dense indices in commit order).
import type { SQL } from "bun";
import { mapUnreachable } from "../connection/postgres";
import type { BudgetNote, BudgetsStore, SpendRecord } from "./records";

export function postgresBudgets(sql: SQL): BudgetsStore {
  return mapUnreachable<BudgetsStore>({
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
  });
}
