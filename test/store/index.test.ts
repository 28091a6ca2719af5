// openStore's choice of store from the configured URL.
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isPostgresUrl, openStore } from "../../src/store";

describe("openStore", () => {
  test("a path opens SQLite, creating the file and its directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "zkagent-open-"));
    try {
      const path = join(dir, "nested", "zkagent.db");
      const store = await openStore(path, { sqliteSynchronous: "FULL" });
      expect(store.kind).toBe("sqlite");
      await store.ping();
      await store.close();
      expect(existsSync(path)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test(":memory: opens an in-memory SQLite store", async () => {
    const store = await openStore(":memory:");
    expect(store.kind).toBe("sqlite");
    await store.close();
  });

  test("only postgres:// and postgresql:// URLs select PostgreSQL", () => {
    expect(isPostgresUrl("postgres://u:p@db:5432/zkagent")).toBe(true);
    expect(isPostgresUrl("postgresql://u:p@db/zkagent")).toBe(true);
    expect(isPostgresUrl("POSTGRES://u@db/zkagent")).toBe(true);
    expect(isPostgresUrl("./data/postgres.db")).toBe(false);
    expect(isPostgresUrl("postgres.db")).toBe(false);
    expect(isPostgresUrl(":memory:")).toBe(false);
    expect(isPostgresUrl("mysql://u@db/zkagent")).toBe(false);
  });
});
