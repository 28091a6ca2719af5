// SQLite migrations 16 onward, in order: the second half of the one history
// that migrations/sqlite.ts lists, split only to keep each file readable.
// Append new migrations here; never edit a shipped one.

export const sqliteMigrationsFrom16: string[] = [
  // 16: budget spends at the service (issue 40). A key's registered origins
  // (a JSON array: the payees a budget challenge of that key may bind); a
  // budget challenge's public values, fixed at creation from one clock
  // reading (JSON: group, payee, amount, currency, periods, ctx); and each
  // budgeted group's notes checkpoints, whose (group, sequence) key is how
  // concurrent checkpointers agree on one sequence.
  `ALTER TABLE api_keys ADD COLUMN origins TEXT;
   ALTER TABLE challenges ADD COLUMN budget TEXT;
   CREATE TABLE budget_checkpoints (
     group_id  TEXT NOT NULL,
     sequence  INTEGER NOT NULL,
     size      INTEGER NOT NULL,
     root      TEXT NOT NULL,
     at        INTEGER NOT NULL,
     PRIMARY KEY (group_id, sequence)
   );`,
];
