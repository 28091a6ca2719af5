// The agent's default table cache directory and the CLI's table options.
import { describe, expect, test } from "bun:test";
import { homedir } from "node:os";
import { join } from "node:path";
import { availableParallelism } from "node:os";
import { defaultTableCacheDir, proverThreads, tableOptions } from "../../src/agent/prover-tables";
import { groupChoice, tableChoice, UsageError } from "../../src/cli/args";

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

describe("threads", () => {
  test("--threads N: a whole number from 1 to 64, else a usage error naming the option", () => {
    expect(tableChoice({ threads: "3" })).toEqual({ precompute: true, tableCache: undefined, threads: 3 });
    expect(tableChoice({ threads: "64", "no-table-cache": true })).toEqual({ precompute: false, tableCache: false, threads: 64 });
    for (const bad of ["0", "65", "-1", "1.5", "2x", "", " 2", "99"]) {
      expect(() => tableChoice({ threads: bad })).toThrow("--threads must be a whole number from 1 to 64");
    }
  });

  test("proverThreads: the number asked for, else one for the agent circuit and the cores up to four for Semaphore", () => {
    expect(proverThreads(3, 1)).toBe(3);
    expect(proverThreads(1, "cores")).toBe(1);
    expect(proverThreads(undefined, 1)).toBe(1);
    expect(proverThreads(undefined, "cores")).toBe(Math.min(availableParallelism(), 4));
  });
});

describe("groupChoice (--min-anonymity on prove --group-challenge, fetch and mcp)", () => {
  test("a whole number of members from 1, as the SDK's minAnonymity; absent: the SDK's default", () => {
    expect(groupChoice({})).toEqual({});
    expect(groupChoice({ "min-anonymity": "2" })).toEqual({ minAnonymity: 2 });
    for (const bad of ["0", "-1", "1.5", "two", "", " 3", "03"]) {
      expect(() => groupChoice({ "min-anonymity": bad })).toThrow("--min-anonymity must be a whole number of members, at least 1");
    }
  });
});
