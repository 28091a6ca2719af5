// The stores an HTTP test runs against: SQLite and PostgreSQL (the run's
// server, ./postgres.ts; a private database per test file, emptied before each
// harness), so "same answer on both stores" is one test body.
import { afterAll } from "bun:test";
import { openPostgres } from "../../src/store/postgres";
import { openSqlite } from "../../src/store/sqlite";
import type { Store } from "../../src/store/interface";
import { createTestDatabase, postgresTestUrl, truncateAll, type TestDatabase } from "./postgres";

export interface StoreUnderTest {
  name: "sqlite" | "postgres";
  /** `groupRootDurationMs`: the store option of that name (default one hour). */
  open(options?: { groupRootDurationMs?: number }): Promise<Store>;
}

export function storesUnderTest(): StoreUnderTest[] {
  const stores: StoreUnderTest[] = [{ name: "sqlite", open: async (options = {}) => openSqlite(":memory:", options) }];
  {
    let db: Promise<TestDatabase> | undefined;
    const opened: Store[] = [];
    afterAll(async () => {
      for (const store of opened.splice(0)) await store.close().catch(() => {});
      if (db) await (await db).drop();
    });
    stores.push({
      name: "postgres",
      async open(options = {}) {
        const { url } = await (db ??= postgresTestUrl().then(createTestDatabase));
        // The previous test's store is done with: close its pool before emptying the tables.
        for (const store of opened.splice(0)) await store.close().catch(() => {});
        const store = await openPostgres(url, { poolSize: 4, ...options });
        opened.push(store);
        await truncateAll(url);
        return store;
      },
    });
  }
  return stores;
}
