// The store contract on PostgreSQL, plus what only a networked store has:
// several pools ("nodes") on one database and concurrent migrations.
//
// The server: ZKAGENT_TEST_POSTGRES_URL, else the test run's own cluster.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { openStore } from "../../src/store";
import { migratePostgres, postgresMigrations } from "../../src/store/migrations/postgres";
import { isConnectionFailure, openPostgres, type PostgresStore } from "../../src/store/postgres";
import { StoreUnavailableError } from "../../src/store/interface";
import { createOwnCluster } from "../support/pg-cluster";
import { createTestDatabase, postgresTestUrl, truncateAll, type TestDatabase } from "../support/postgres";
import { makeChallenge, makeKey, storeContract, T0 } from "./contract";

const serverUrl = await postgresTestUrl();

describe("postgres", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(serverUrl);
  });
  afterAll(async () => {
    await db.drop();
  });

  storeContract("postgres", async () => {
    // Opening migrates the (first time) empty database; then every test
    // starts from empty tables.
    const store = await openPostgres(db.url);
    await truncateAll(db.url);
    return store;
  });

  describe("postgres specifics", () => {
    test("openStore picks PostgreSQL for postgres:// and postgresql:// URLs", async () => {
      for (const url of [db.url, db.url.replace(/^postgres:/, "postgresql:")]) {
        const store = await openStore(url);
        expect(store.kind).toBe("postgres");
        await store.ping();
        await store.close();
      }
    });

    test("opening an unreachable server rejects instead of hanging", async () => {
      // Port 1 on loopback: nothing listens, the connection is refused.
      await expect(openPostgres("postgres://nobody:nothing@127.0.0.1:1/none")).rejects.toThrow();
    });

    test("two nodes (two pools) race 50 decisions of one challenge: exactly one wins", async () => {
      await truncateAll(db.url);
      const nodes = [await openPostgres(db.url, { poolSize: 10 }), await openPostgres(db.url, { poolSize: 10 })];
      try {
        const key = makeKey();
        await nodes[0]!.createKey(key);
        const challenge = makeChallenge(key.id);
        await nodes[1]!.createChallenge(challenge, { windowStart: T0, limit: 0 });
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            nodes[i % 2]!.decideChallenge(challenge.id, {
              status: i % 3 ? "failed" : "verified",
              decidedAt: T0 + i,
              confidence: null,
              reason: `node ${i % 2}`,
            }),
          ),
        );
        const winners = results.filter((r) => r.decided);
        expect(winners).toHaveLength(1);
        for (const r of results) expect(r.record).toEqual(winners[0]!.record);
        const usage = await nodes[0]!.usage(key.id);
        expect(usage!.verified + usage!.failed).toBe(1);
      } finally {
        for (const node of nodes) await node.close();
      }
    });

    test("two nodes share one rate window: 30 concurrent creations, limit 7 → exactly 7", async () => {
      await truncateAll(db.url);
      const nodes = [await openPostgres(db.url), await openPostgres(db.url)];
      try {
        const key = makeKey();
        await nodes[0]!.createKey(key);
        const window = { windowStart: T0, limit: 7 };
        const results = await Promise.all(Array.from({ length: 30 }, (_, i) => nodes[i % 2]!.createChallenge(makeChallenge(key.id), window)));
        expect(results.filter((r) => r.created)).toHaveLength(7);
        expect(new Set(results.map((r) => r.used)).size).toBe(30);
        expect((await nodes[1]!.usage(key.id))?.challenges).toBe(7);
      } finally {
        for (const node of nodes) await node.close();
      }
    });

    test("two nodes create and decide for one key at once: window, usage and decisions exact", async () => {
      await truncateAll(db.url);
      const nodes = [await openPostgres(db.url), await openPostgres(db.url)];
      try {
        const key = makeKey({ rateLimit: 25 });
        await nodes[0]!.createKey(key);
        const window = { windowStart: T0, limit: 25 };
        const created = await Promise.all(
          Array.from({ length: 40 }, (_, i) => {
            const challenge = makeChallenge(key.id);
            return nodes[i % 2]!.createChallenge(challenge, window).then((r) => ({ ...r, challenge }));
          }),
        );
        const stored = created.filter((r) => r.created);
        expect(stored).toHaveLength(25);
        expect(created.map((r) => r.used).sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
        // Each stored challenge decided on both nodes at once, while more creations are refused.
        const decisions = await Promise.all([
          ...stored.flatMap(({ challenge }, i) =>
            [0, 1].map((n) =>
              nodes[n]!.decideChallenge(challenge.id, { status: (i + n) % 3 ? "failed" : "verified", decidedAt: T0 + 1, confidence: null, reason: null }),
            ),
          ),
          ...Array.from({ length: 6 }, (_, i) => nodes[i % 2]!.createChallenge(makeChallenge(key.id), window)),
        ]);
        const winners = decisions.filter((d): d is { decided: true; record: any } => "decided" in d && d.decided);
        expect(winners).toHaveLength(25);
        const usage = (await nodes[1]!.usage(key.id))!;
        expect(usage.challenges).toBe(25);
        expect(usage.verified).toBe(winners.filter((w) => w.record.status === "verified").length);
        expect(usage.failed).toBe(winners.filter((w) => w.record.status === "failed").length);
      } finally {
        for (const node of nodes) await node.close();
      }
    });

    test("times beyond 32 bits and large counters come back as exact JS numbers", async () => {
      await truncateAll(db.url);
      const store = await openPostgres(db.url);
      try {
        const key = makeKey({ createdAt: Number.MAX_SAFE_INTEGER, rateLimit: 2 ** 40 });
        await store.createKey(key);
        const got = await store.getKey(key.id);
        expect(got).toEqual(key);
        expect(typeof got!.createdAt).toBe("number");
        const pending = await store.countPending(0);
        expect(typeof pending).toBe("number");
      } finally {
        await store.close();
      }
    });
  });

  describe("postgres migrations", () => {
    let fresh: TestDatabase;
    beforeAll(async () => {
      fresh = await createTestDatabase(serverUrl);
    });
    afterAll(async () => {
      await fresh.drop();
    });

    test("3 nodes opening an empty database at once all succeed and migrate once", async () => {
      const stores: PostgresStore[] = await Promise.all([openPostgres(fresh.url), openPostgres(fresh.url), openPostgres(fresh.url)]);
      try {
        for (const store of stores) await store.ping();
        const sql = new SQL(fresh.url, { max: 1, database: fresh.name });
        try {
          const rows = await sql`SELECT version FROM schema_migrations ORDER BY version`;
          expect(rows.map((r: { version: number }) => Number(r.version))).toEqual(postgresMigrations.map((_, i) => i + 1));
          // And the schema is usable from every node.
          const key = makeKey();
          await stores[0]!.createKey(key);
          expect(await stores[2]!.getKey(key.id)).toEqual(key);
        } finally {
          await sql.close();
        }
      } finally {
        for (const store of stores) await store.close();
      }
    });

    test("a later migration is applied exactly once, even by 3 concurrent migrators", async () => {
      const sql = new SQL(fresh.url, { max: 3, database: fresh.name });
      try {
        // Up to date already: nothing to apply.
        expect(await migratePostgres(sql)).toBe(0);
        const next = [...postgresMigrations, "CREATE TABLE migration_probe (id INT PRIMARY KEY)"];
        const applied = await Promise.all([migratePostgres(sql, next), migratePostgres(sql, next), migratePostgres(sql, next)]);
        expect(applied.sort()).toEqual([0, 0, 1]);
        const [{ n }] = await sql`SELECT count(*)::int AS n FROM schema_migrations WHERE version = ${next.length}`;
        expect(n).toBe(1);
      } finally {
        await sql.close();
      }
    });
  });
});

// Issue 11: the database going away is a typed, retryable failure, and the
// store resumes by itself. A cluster of this test's own is stopped and
// restarted; the shared one never is.
describe("postgres unavailable (own throwaway cluster)", async () => {
  const cluster = await createOwnCluster();
  afterAll(() => cluster.destroy());

  test("stopped: every method throws StoreUnavailableError; restarted: the same store answers again", async () => {
    const store = await openPostgres(cluster.url, { poolSize: 2 });
    const key = makeKey();
    await store.createKey(key);
    await cluster.stop();
    const calls: (() => Promise<unknown>)[] = [
      () => store.getKey(key.id),
      () => store.getChallenge("ch_x"),
      () => store.createChallenge(makeChallenge(key.id), { windowStart: T0, limit: 0 }),
      () => store.decideChallenge("ch_x", { status: "failed", decidedAt: T0, confidence: null, reason: "proof_rejected" }),
      () => store.reserveIdempotency(key.id, "i", "fp", T0, T0 - 1),
      () => store.ping(),
    ];
    for (const call of calls) await expect(call()).rejects.toBeInstanceOf(StoreUnavailableError);
    await cluster.start();
    expect(await store.getKey(key.id)).toEqual(key);
    await store.ping();
    await store.close();
  });

  test("a query error that is not a connection failure is not mapped", async () => {
    const store = await openPostgres(cluster.url, { poolSize: 1 });
    const key = makeKey();
    await store.createKey(key);
    const error = await store.createKey(key).catch((e) => e);
    expect(error).not.toBeInstanceOf(StoreUnavailableError);
    expect(isConnectionFailure(error)).toBe(false);
    await store.close();
  });
});
