// Activate and retire of one circuit racing on PostgreSQL (issue 23): two
// pools (two nodes) on one database, `circuits activate X` on one and
// `circuits retire X` on the other at once, 50 times. Whichever wins, a
// circuit that was retired is never left active, and each answer agrees with
// the state that stays. (SQLite serialises its writers; PostgreSQL needs the
// lock and the conditional updates.)
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Store } from "../../src/store/interface";
import { openPostgres } from "../../src/store/postgres";
import { createTestDatabase, postgresTestUrl, type TestDatabase } from "../support/postgres";
import { makeCircuit } from "./contract-circuits";

let db: TestDatabase;
let one: Store;
let two: Store;

beforeAll(async () => {
  db = await createTestDatabase(await postgresTestUrl());
  one = await openPostgres(db.url);
  two = await openPostgres(db.url);
}, 60_000);
afterAll(async () => {
  await one?.close();
  await two?.close();
  await db?.drop();
});

test("50 concurrent activate/retire races never leave a retired circuit active", async () => {
  // The first circuit added becomes active; each raced one is added after it, accepted.
  await one.addCircuit(makeCircuit());
  const outcomes = { activated: 0, retired: 0 };
  for (let i = 0; i < 50; i++) {
    const circuit = makeCircuit();
    expect((await one.addCircuit(circuit)).state).toBe("accepted");
    const [activate, retire] = await Promise.all([one.activateCircuit(circuit.id, Date.now()), two.retireCircuit(circuit.id, Date.now())]);
    const state = (await one.getCircuit(circuit.id))!.state;
    if (retire === "retired") {
      expect(state).toBe("retired");
      expect(activate).toBe("retired");
      outcomes.retired++;
    } else {
      expect(activate).toBe("activated");
      expect(retire).toBe("active");
      expect(state).toBe("active");
      outcomes.activated++;
    }
    expect((await one.listCircuits()).filter((c) => c.state === "active")).toHaveLength(1);
  }
  expect(outcomes.activated + outcomes.retired).toBe(50);
}, 60_000);
