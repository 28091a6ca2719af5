// loadConfig: defaults, bounds, and a ConfigError naming the variable for a
// bad value; the README's table and `serve --help` come from the same SETTINGS.
import { describe, expect, test } from "bun:test";
import { availableParallelism } from "node:os";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clockFor, FileOffsetClock, setTestClock, systemClock } from "../src/clock";
import { ConfigError, configHelp, configTable, loadConfig, SETTINGS } from "../src/config";
import { withGeneratedTable } from "../scripts/readme-config";

describe("loadConfig", () => {
  test("an empty environment gives the documented defaults", () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      hostname: "0.0.0.0",
      databaseUrl: "./data/zkagent.db",
      sqliteSynchronous: "NORMAL",
      verifierThread: "auto",
      logLevel: "info",
      workers: availableParallelism(),
      defaultRateLimit: 1000,
      maxPendingPerKey: 10_000,
      publicUrl: "",
      receiptKeySecret: "",
      defaultAgentRateLimit: 1000,
      maxAgentsPerKey: 100_000,
      groupMaxPerKey: 1_000,
      groupMaxMembers: 1_048_576,
      groupAdditionsInFlight: 2,
      groupAdditionsInFlightTotal: 8,
      groupTreeCacheMb: 128,
      groupTreeThread: "on",
      groupRootDurationS: 3600,
      membersReadsPerMinute: 600,
      budgetCheckpointS: 10,
      budgetCheckpointWindow: 36,
      auditRetentionDays: 365,
      metricsToken: "",
      webhooksAllowPrivate: "false",
      webhooksTimeoutMs: 10_000,
      webhooksPollMs: 1000,
      testClockFile: "",
    });
  });

  test("an empty string counts as unset", () => {
    expect(loadConfig({ PORT: "", LOG_LEVEL: "", HOST: "" })).toMatchObject({ port: 3000, logLevel: "info", hostname: "0.0.0.0" });
  });

  test("values are read, and the result is frozen", () => {
    const config = loadConfig({
      PORT: "8080",
      HOST: "127.0.0.1",
      DATABASE_URL: "postgres://u:p@db/z",
      SQLITE_SYNCHRONOUS: "FULL",
      LOG_LEVEL: "silent",
      VERIFIER_THREAD: "on",
      WORKERS: "3",
      DEFAULT_RATE_LIMIT: "0",
      MAX_PENDING_PER_KEY: "7",
      PUBLIC_URL: "https://zkagent.example/",
      RECEIPT_KEY_SECRET: "k".repeat(32),
      DEFAULT_AGENT_RATE_LIMIT: "5",
      MAX_AGENTS_PER_KEY: "9",
      GROUP_MAX_PER_KEY: "4",
      GROUP_MAX_MEMBERS: "64",
      GROUP_ADDITIONS_IN_FLIGHT: "3",
      GROUP_ADDITIONS_IN_FLIGHT_TOTAL: "12",
      GROUP_TREE_CACHE_MB: "16",
      GROUP_TREE_THREAD: "off",
      GROUP_ROOT_DURATION_S: "60",
      GROUP_MEMBERS_READS_PER_MINUTE: "0",
      BUDGET_CHECKPOINT_S: "5",
      BUDGET_CHECKPOINT_WINDOW: "72",
      AUDIT_RETENTION_DAYS: "0",
      METRICS_TOKEN: "t0ken-0123456789abcdef",
      WEBHOOKS_ALLOW_PRIVATE: "true",
      WEBHOOKS_TIMEOUT_MS: "2500",
      WEBHOOKS_POLL_MS: "200",
    });
    expect(config).toEqual({
      port: 8080,
      hostname: "127.0.0.1",
      databaseUrl: "postgres://u:p@db/z",
      sqliteSynchronous: "FULL",
      verifierThread: "on",
      logLevel: "silent",
      workers: 3,
      defaultRateLimit: 0,
      maxPendingPerKey: 7,
      publicUrl: "https://zkagent.example",
      receiptKeySecret: "k".repeat(32),
      defaultAgentRateLimit: 5,
      maxAgentsPerKey: 9,
      groupMaxPerKey: 4,
      groupMaxMembers: 64,
      groupAdditionsInFlight: 3,
      groupAdditionsInFlightTotal: 12,
      groupTreeCacheMb: 16,
      groupTreeThread: "off",
      groupRootDurationS: 60,
      membersReadsPerMinute: 0,
      budgetCheckpointS: 5,
      budgetCheckpointWindow: 72,
      auditRetentionDays: 0,
      metricsToken: "t0ken-0123456789abcdef",
      webhooksAllowPrivate: "true",
      webhooksTimeoutMs: 2500,
      webhooksPollMs: 200,
      testClockFile: "",
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  test.each([
    ["PORT", "0", 0],
    ["PORT", "65535", 65535],
    ["WORKERS", "1", 1],
    ["WORKERS", "256", 256],
    ["MAX_PENDING_PER_KEY", "1000000000", 1_000_000_000],
  ])("%s=%s is the inclusive bound", (name, raw, value) => {
    const key = Object.entries(SETTINGS).find(([, s]) => s.env === name)![0] as keyof ReturnType<typeof loadConfig>;
    expect(loadConfig({ [name]: raw })[key]).toBe(value);
  });

  test.each([
    ["PORT", "65536"],
    ["PORT", "-1"],
    ["PORT", "3000.5"],
    ["PORT", "http"],
    ["WORKERS", "0"],
    ["WORKERS", "257"],
    ["DEFAULT_RATE_LIMIT", "-5"],
    ["MAX_PENDING_PER_KEY", "1000000001"],
    ["SQLITE_SYNCHRONOUS", "normal"],
    ["SQLITE_SYNCHRONOUS", "OFF"],
    ["LOG_LEVEL", "verbose"],
  ])("%s=%s is a ConfigError naming the variable and the value", (name, raw) => {
    let error: unknown;
    try {
      loadConfig({ [name]: raw });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toStartWith(`${name} must be `);
    expect((error as Error).message).toContain(`got "${raw}"`);
  });
});

describe("receipt settings", () => {
  test.each([["ftp://zkagent.example"], ["zkagent.example"], ["http//x"]])("PUBLIC_URL=%s is refused, naming it", (raw) => {
    expect(() => loadConfig({ PUBLIC_URL: raw })).toThrow(new ConfigError(`PUBLIC_URL must be an http(s) URL, got "${raw}"`));
  });

  test("a RECEIPT_KEY_SECRET under 32 characters is refused without echoing it", () => {
    const secret = "s3cr3t-but-too-short-31-chars!!";
    expect(secret).toHaveLength(31);
    let error: unknown;
    try {
      loadConfig({ RECEIPT_KEY_SECRET: secret });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe("RECEIPT_KEY_SECRET must be at least 32 characters");
  });

  test("help and table describe the two without showing a value", () => {
    expect(configTable()).toContain("| `PUBLIC_URL` | the listen address | http(s) URL |");
    expect(configTable()).toContain("| `RECEIPT_KEY_SECRET` | none: keys stored plain | text, ≥ 32 characters |");
  });
});

describe("TEST_CLOCK_FILE (tests and demos only)", () => {
  const file = join(mkdtempSync(join(tmpdir(), "zkagent-clock-")), "clock");
  writeFileSync(file, "0\n");
  test("accepted on a loopback address; the service's clock then reads the file's offset at every reading", () => {
    const config = loadConfig({ TEST_CLOCK_FILE: file, HOST: "127.0.0.1" });
    const clock = clockFor(config);
    expect(clock).toBeInstanceOf(FileOffsetClock);
    const day = 86_400_000;
    setTestClock(file, Date.now() + day);
    expect(Math.abs(clock.now() - (Date.now() + day))).toBeLessThan(1_000);
    setTestClock(file, Date.UTC(2026, 10, 29, 12));
    expect(Math.abs(clock.now() - Date.UTC(2026, 10, 29, 12))).toBeLessThan(1_000);
    expect(clockFor(loadConfig({ HOST: "127.0.0.1" }))).toBe(systemClock);
  });
  test.each([
    [{ HOST: "0.0.0.0" }, /unless HOST is a loopback address/],
    [{ HOST: "127.0.0.1", NODE_ENV: "production" }, /refused with NODE_ENV=production/],
  ])("refused where others could reach the service: %p", (env, message) => {
    expect(() => loadConfig({ TEST_CLOCK_FILE: file, ...env })).toThrow(message);
    expect(() => loadConfig({ TEST_CLOCK_FILE: file, ...env })).toThrow(ConfigError);
  });
  test("a missing or unreadable file is refused at start, naming the setting", () => {
    expect(() => loadConfig({ TEST_CLOCK_FILE: `${file}-missing`, HOST: "127.0.0.1" })).toThrow(/^TEST_CLOCK_FILE /);
    const bad = `${file}-bad`;
    writeFileSync(bad, "tomorrow");
    expect(() => loadConfig({ TEST_CLOCK_FILE: bad, HOST: "127.0.0.1" })).toThrow(/must hold an integer offset in ms/);
  });
});

describe("generated from SETTINGS", () => {
  test("the README's configuration table is the generated one (bun scripts/readme-config.ts)", async () => {
    const readme = await Bun.file(join(import.meta.dir, "../README.md")).text();
    expect(withGeneratedTable(readme)).toBe(readme);
    expect(readme).toContain(configTable());
  });

  test("serve --help and the table name every variable with its default", () => {
    for (const setting of Object.values(SETTINGS)) {
      expect(configHelp()).toContain(setting.env);
      expect(configTable()).toContain(`\`${setting.env}\``);
    }
    expect(configHelp()).toMatch(/PORT +HTTP port.*default 3000/);
    expect(configTable()).toContain("| `MAX_PENDING_PER_KEY` | `10000` | 0–1000000000 |");
  });
});
