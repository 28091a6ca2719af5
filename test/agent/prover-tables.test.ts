// The agent's default table cache directory and the CLI's table options.
import { describe, expect, test } from "bun:test";
import { homedir } from "node:os";
import { join } from "node:path";
import { defaultTableCacheDir, tableOptions } from "../../src/agent/prover-tables";
import { tableChoice, UsageError } from "../../src/cli/args";

describe("defaultTableCacheDir", () => {
  test("$XDG_CACHE_HOME when absolute, else ~/.cache", () => {
    expect(defaultTableCacheDir({ XDG_CACHE_HOME: "/var/cache/me" })).toBe("/var/cache/me/zkagent/prover-tables");
    for (const XDG_CACHE_HOME of [undefined, "", "relative/dir"]) {
      expect(defaultTableCacheDir({ XDG_CACHE_HOME })).toBe(join(homedir(), ".cache", "zkagent", "prover-tables"));
    }
  });
});

describe("tableOptions", () => {
  test("tables with the default cache unless a directory is named or the cache or the tables are turned off", () => {
    expect(tableOptions(undefined, undefined)).toEqual({ precompute: true, tableCache: defaultTableCacheDir() });
    expect(tableOptions(true, "/tmp/t")).toEqual({ precompute: true, tableCache: "/tmp/t" });
    expect(tableOptions(true, false)).toEqual({ precompute: true });
    expect(tableOptions(false, "/tmp/t")).toEqual({ precompute: false });
  });
});

describe("tableChoice (the CLI options)", () => {
  test("--no-table-cache: no tables; --table-cache DIR: that directory; neither: the default", () => {
    expect(tableChoice({})).toEqual({ precompute: true, tableCache: undefined });
    expect(tableChoice({ "table-cache": "/tmp/t" })).toEqual({ precompute: true, tableCache: "/tmp/t" });
    expect(tableChoice({ "no-table-cache": true })).toEqual({ precompute: false, tableCache: false });
    expect(() => tableChoice({ "no-table-cache": true, "table-cache": "/tmp/t" })).toThrow(UsageError);
    expect(() => tableChoice({ "table-cache": "" })).toThrow(UsageError);
  });
});
