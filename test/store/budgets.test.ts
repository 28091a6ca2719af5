// Budget spends in the store (src/store/budgets/): a nullifier is recorded
// once per group, ever; of concurrent spends of one note, on two SQLite
// handles (workers on one file) or two PostgreSQL pools (two nodes on one
// database), exactly one is recorded; the notes are dense, in commit order.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BudgetsStore } from "../../src/store/budgets/records";
import { openPostgres } from "../../src/store/postgres";
import { openSqlite } from "../../src/store/sqlite";
import { createTestDatabase, postgresTestUrl, type TestDatabase } from "../support/postgres";

const nullifiers = Array.from({ length: 30 }, (_, i) => `${1000 + i}`);

/** Every nullifier recorded exactly once, by whichever side; the notes 1…n (leaf 0 is the tree's fixed first leaf), one per nullifier. */
async function expectExactlyOnce(store: BudgetsStore, group: string, won: string[][]): Promise<void> {
  const all = won.flat().sort();
  expect(all).toEqual([...nullifiers].sort());
  const notes = await store.budgetNotes(group, 0, 1000);
  expect(notes.map((n) => n.index)).toEqual(nullifiers.map((_, i) => i + 1));
  expect(new Set(notes.map((n) => n.commitment.split("-by-")[0])).size).toBe(nullifiers.length);
}

async function behaves(store: BudgetsStore, group: string): Promise<void> {
  // Leaf 0 of the notes tree is its fixed first leaf: the first note is leaf 1.
  expect(await store.recordBudgetSpend(group, "7", "cm7", 1)).toEqual({ recorded: true, index: 1 });
  // A replayed spend, whatever its new note, is refused and appends nothing.
  expect(await store.recordBudgetSpend(group, "7", "cm7-again", 2)).toEqual({ recorded: false, reason: "already_spent" });
  expect(await store.recordBudgetSpend(group, "8", "cm8", 3)).toEqual({ recorded: true, index: 2 });
  // Nullifiers are per group: another group's set and notes are its own.
  expect(await store.recordBudgetSpend(`${group}-other`, "7", "cm7-other", 4)).toEqual({ recorded: true, index: 1 });
  expect(await store.budgetNotes(group, 0, 10)).toEqual([
    { index: 1, commitment: "cm7" },
    { index: 2, commitment: "cm8" },
  ]);
  expect(await store.budgetNotes(group, 2, 10)).toEqual([{ index: 2, commitment: "cm8" }]);
}

describe("sqlite", () => {
  let dir: string;
  beforeAll(() => (dir = mkdtempSync(join(tmpdir(), "zkagent-budgets-"))));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("once per nullifier, notes in order, per group", async () => {
    const store = openSqlite(join(dir, "one.db"));
    await behaves(store, "grp_a");
    await store.close();
  });

  test("two handles on one file racing on the same 30 nullifiers: each recorded exactly once", async () => {
    const path = join(dir, "race.db");
    const setup = openSqlite(path); // migrates the file before the workers open it
    const workers = [0, 1].map(() => new Worker(new URL("./budgets-race-worker.ts", import.meta.url)));
    const results = await Promise.all(
      workers.map(
        (worker, index) =>
          new Promise<{ won: string[] }>((resolve, reject) => {
            worker.onmessage = (event) => resolve(event.data);
            worker.onerror = (event) => reject(event.error ?? new Error(String(event.message)));
            worker.postMessage({ path, group: "grp_race", nullifiers, worker: index });
          }),
      ),
    );
    for (const worker of workers) worker.terminate();
    await expectExactlyOnce(
      setup,
      "grp_race",
      results.map((r) => r.won),
    );
    await setup.close();
  });
});

describe("postgres", async () => {
  const serverUrl = await postgresTestUrl();
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(serverUrl);
  });
  afterAll(async () => {
    await db.drop();
  });

  test("once per nullifier, notes in order, per group", async () => {
    const store = await openPostgres(db.url);
    await behaves(store, `grp_${crypto.randomUUID()}`);
    await store.close();
  });

  test("two nodes racing on the same 30 nullifiers: each recorded exactly once", async () => {
    const [a, b] = [await openPostgres(db.url), await openPostgres(db.url)];
    const group = `grp_${crypto.randomUUID()}`;
    const race = (store: BudgetsStore, node: number) =>
      Promise.all(nullifiers.map((nf) => store.recordBudgetSpend(group, nf, `cm-${nf}-by-${node}`, 1).then((r) => (r.recorded ? nf : null)))).then((won) =>
        won.filter((nf): nf is string => nf !== null),
      );
    const won = await Promise.all([race(a, 0), race(b, 1)]);
    await expectExactlyOnce(a, group, won);
    await a.close();
    await b.close();
  });
});
