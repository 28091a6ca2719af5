// openStore's choice of store from the configured URL, and the rule that the
// PostgreSQL tests never silently disappear in CI.
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isPostgresUrl, openStore } from "../../src/store";
import { POSTGRES_URL_VARIABLE, postgresTestUrl } from "../support/postgres";

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

describe("postgresTestUrl", () => {
  const saved = { url: process.env[POSTGRES_URL_VARIABLE], ci: process.env.CI };
  afterEach(() => {
    for (const [name, value] of [[POSTGRES_URL_VARIABLE, saved.url], ["CI", saved.ci]] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  test("returns the configured URL", () => {
    process.env[POSTGRES_URL_VARIABLE] = "postgres://u:p@127.0.0.1:54329/zkagent_test";
    process.env.CI = "true";
    expect(postgresTestUrl()).toBe("postgres://u:p@127.0.0.1:54329/zkagent_test");
  });

  test("throws in CI when the URL is missing", () => {
    delete process.env[POSTGRES_URL_VARIABLE];
    process.env.CI = "true";
    expect(() => postgresTestUrl()).toThrow(POSTGRES_URL_VARIABLE);
  });

  test("is undefined outside CI when the URL is missing", () => {
    process.env[POSTGRES_URL_VARIABLE] = "";
    delete process.env.CI;
    expect(postgresTestUrl()).toBeUndefined();
  });
});
