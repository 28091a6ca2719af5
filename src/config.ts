// Configuration, read from the environment once at start, validated, frozen.
// SETTINGS is the one description of it: loadConfig reads by it, and
// `serve --help` and the README's configuration table are generated from it
// (configHelp, configTable; test/config.test.ts fails when the README's table
// differs, and `bun scripts/readme-config.ts` rewrites it).
import { availableParallelism } from "node:os";
import { FileOffsetClock } from "./clock";
import { TREE_BYTES_PER_LEAF, treeCacheMbFor } from "./groups/tree-budget";

interface Common {
  /** The environment variable. */
  env: string;
  /** What it sets, for the README and `serve --help`. */
  description: string;
}
interface IntegerSetting extends Common {
  kind: "integer";
  min: number;
  max: number;
  /** A number, or computed at start (then `defaultText` says what it is). */
  default: number | (() => number);
  defaultText?: string;
}
interface EnumSetting extends Common {
  kind: "enum";
  values: readonly string[];
  default: string;
}
interface TextSetting extends Common {
  kind: "text";
  default: string;
}
/** An http(s) URL, or empty (unset). Kept as given, without a trailing slash. */
interface UrlSetting extends Common {
  kind: "url";
  default: "";
  defaultText: string;
}
/** A secret: empty (unset) or at least `minLength` characters. Never echoed, in errors or help. */
interface SecretSetting extends Common {
  kind: "secret";
  minLength: number;
  default: "";
  defaultText: string;
}
type Setting = IntegerSetting | EnumSetting | TextSetting | UrlSetting | SecretSetting;

export const DEFAULT_MAX_PENDING_PER_KEY = 10_000;

export const SETTINGS = {
  port: { env: "PORT", kind: "integer", min: 0, max: 65535, default: 3000, description: "HTTP port (0: any free port)" },
  hostname: { env: "HOST", kind: "text", default: "0.0.0.0", description: "bind address" },
  databaseUrl: {
    env: "DATABASE_URL",
    kind: "text",
    default: "./data/zkagent.db",
    description: "SQLite file, or `postgres://user:pass@host:5432/db`",
  },
  sqliteSynchronous: {
    env: "SQLITE_SYNCHRONOUS",
    kind: "enum",
    values: ["NORMAL", "FULL"],
    default: "NORMAL",
    description: "`NORMAL`: commits survive a process crash; `FULL`: also power loss",
  },
  verifierThread: {
    env: "VERIFIER_THREAD",
    kind: "enum",
    values: ["auto", "on", "off"],
    default: "auto",
    description:
      "verify proofs on a thread of their own in each worker process, so the event loop keeps serving meanwhile (`auto`: on with PostgreSQL, off with SQLite; see docs/performance.md)",
  },
  logLevel: { env: "LOG_LEVEL", kind: "enum", values: ["debug", "info", "warn", "error", "silent"], default: "info", description: "log level" },
  workers: {
    env: "WORKERS",
    kind: "integer",
    min: 1,
    max: 256,
    default: () => availableParallelism(),
    defaultText: "number of cores",
    description: "worker processes for `serve` (`--workers` overrides; 1 = one process)",
  },
  defaultRateLimit: {
    env: "DEFAULT_RATE_LIMIT",
    kind: "integer",
    min: 0,
    max: 1_000_000_000,
    default: 1000,
    description: "challenges per minute for new keys (0 = unlimited)",
  },
  maxPendingPerKey: {
    env: "MAX_PENDING_PER_KEY",
    kind: "integer",
    min: 0,
    max: 1_000_000_000,
    default: DEFAULT_MAX_PENDING_PER_KEY,
    description: "unexpired pending challenges one key may hold (0 = no cap)",
  },
  publicUrl: {
    env: "PUBLIC_URL",
    kind: "url",
    default: "",
    defaultText: "the listen address",
    description: "the service's public URL: the `iss` of its signed receipts and the OpenAPI `servers`; unset, a warning at start (docs/receipts.md)",
  },
  receiptKeySecret: {
    env: "RECEIPT_KEY_SECRET",
    kind: "secret",
    minLength: 32,
    default: "",
    defaultText: "none: keys stored plain",
    description: "seals the receipt signing keys in the database (AES-256-GCM, key by HKDF-SHA256); the same on every node",
  },
  defaultAgentRateLimit: {
    env: "DEFAULT_AGENT_RATE_LIMIT",
    kind: "integer",
    min: 0,
    max: 1_000_000_000,
    default: 1000,
    description: "agent registrations per minute for keys without their own (`keys set-limit --agent-rate-limit`; 0 = unlimited)",
  },
  maxAgentsPerKey: {
    env: "MAX_AGENTS_PER_KEY",
    kind: "integer",
    min: 0,
    max: 1_000_000_000,
    default: 100_000,
    description: "agents (active or revoked) one key may hold (0 = no cap)",
  },
  groupMaxPerKey: {
    env: "GROUP_MAX_PER_KEY",
    kind: "integer",
    min: 0,
    max: 1_000_000_000,
    default: 1_000,
    description: "groups one key may own (0 = no cap)",
  },
  groupMaxMembers: {
    env: "GROUP_MAX_MEMBERS",
    kind: "integer",
    min: 1,
    max: 4_294_967_296,
    default: 1_048_576,
    description: "leaves (members, removed ones included) one group may hold",
  },
  groupAdditionsInFlight: {
    env: "GROUP_ADDITIONS_IN_FLIGHT",
    kind: "integer",
    min: 1,
    max: 1_000,
    default: 2,
    description: "member additions one key may have running or queued per process; past it: 429 with Retry-After",
  },
  groupAdditionsInFlightTotal: {
    env: "GROUP_ADDITIONS_IN_FLIGHT_TOTAL",
    kind: "integer",
    min: 1,
    max: 10_000,
    default: 8,
    description: "member additions all keys together may have running or queued per process (each holds its body, up to 1 MiB); past it: 429 with Retry-After",
  },
  groupTreeCacheMb: {
    env: "GROUP_TREE_CACHE_MB",
    kind: "integer",
    min: 1,
    max: 1_000_000,
    default: 128,
    defaultText: "128, or what GROUP_MAX_MEMBERS needs if more",
    description:
      "MiB of group trees a process keeps (least recently used dropped first, reloaded from the store); must hold one group of GROUP_MAX_MEMBERS (96 B a leaf), else the service refuses to start",
  },
  groupRootDurationS: {
    env: "GROUP_ROOT_DURATION_S",
    kind: "integer",
    min: 0,
    max: 31_536_000,
    default: 3_600,
    description:
      "seconds a group root stays acceptable for proofs after it was replaced (the current root always is; never one from before a removal; Semaphore's contracts keep one hour too)",
  },
  groupTreeThread: {
    env: "GROUP_TREE_THREAD",
    kind: "enum",
    values: ["on", "off"],
    default: "on",
    description: "hash group trees on a worker thread (`off`: on the event loop, as before issue 32)",
  },
  membersReadsPerMinute: {
    env: "GROUP_MEMBERS_READS_PER_MINUTE",
    kind: "integer",
    min: 0,
    max: 1_000_000_000,
    default: 600,
    description:
      "reads of the keyless members route per client (IPv4 address, IPv6 /64) per sliding minute, per process; every request counts, 304s too (0 = no limit)",
  },
  budgetCheckpointS: {
    env: "BUDGET_CHECKPOINT_S",
    kind: "integer",
    min: 1,
    max: 3_600,
    default: 10,
    description: "seconds between a node's notes checkpoints of the budgeted groups whose notes grew (docs/protocol.md, Roots)",
  },
  budgetCheckpointWindow: {
    env: "BUDGET_CHECKPOINT_WINDOW",
    kind: "integer",
    min: 1,
    max: 10_000,
    default: 36,
    description: "how many of a budgeted group's newest notes checkpoints a spend may name (keep window × BUDGET_CHECKPOINT_S above 300 s plus proving)",
  },
  auditRetentionDays: {
    env: "AUDIT_RETENTION_DAYS",
    kind: "integer",
    min: 0,
    max: 100_000,
    default: 365,
    description: "days the audit trail keeps an entry; older ones are purged (0 = keep forever)",
  },
  metricsToken: {
    env: "METRICS_TOKEN",
    kind: "secret",
    minLength: 16,
    default: "",
    defaultText: "none: public",
    description: "when set, `GET /metrics` requires `Authorization: Bearer <token>`",
  },
  webhooksAllowPrivate: {
    env: "WEBHOOKS_ALLOW_PRIVATE",
    kind: "enum",
    values: ["false", "true"],
    default: "false",
    description: "`true`: webhook URLs may use http and loopback, link-local or private addresses (local development and tests only; docs/webhooks.md)",
  },
  webhooksTimeoutMs: {
    env: "WEBHOOKS_TIMEOUT_MS",
    kind: "integer",
    min: 100,
    max: 60_000,
    default: 10_000,
    description: "milliseconds one webhook delivery attempt may take, connection to answer; then it counts as failed and is retried",
  },
  testClockFile: {
    env: "TEST_CLOCK_FILE",
    kind: "text",
    default: "",
    description:
      "tests and demos only: a file holding an offset in ms that shifts the service's clock (rewritten to move time, e.g. a day ahead), and the clock `zkagent fetch` checks a budget challenge's periods against; refused with NODE_ENV=production or a HOST that is not loopback",
  },
  webhooksPollMs: {
    env: "WEBHOOKS_POLL_MS",
    kind: "integer",
    min: 50,
    max: 60_000,
    default: 1000,
    description: "how often each node reads the webhook outbox for deliveries it was not woken for (other nodes' decisions, retries coming due)",
  },
} as const satisfies Record<string, Setting>;

type Settings = typeof SETTINGS;
type ValueOf<S> = S extends { kind: "integer" } ? number : S extends { kind: "enum"; values: readonly (infer V)[] } ? V : string;
export type Config = { [K in keyof Settings]: ValueOf<Settings[K]> };
export type LogLevel = Config["logLevel"];

export class ConfigError extends Error {}

function read(setting: Setting, raw: string | undefined): number | string {
  if (raw === undefined || raw === "") return typeof setting.default === "function" ? setting.default() : setting.default;
  switch (setting.kind) {
    case "integer": {
      const value = Number(raw);
      if (!Number.isInteger(value) || value < setting.min || value > setting.max) {
        throw new ConfigError(`${setting.env} must be an integer from ${setting.min} to ${setting.max}, got "${raw}"`);
      }
      return value;
    }
    case "enum":
      if (!setting.values.includes(raw)) throw new ConfigError(`${setting.env} must be one of ${setting.values.join(", ")}, got "${raw}"`);
      return raw;
    case "text":
      return raw;
    case "url": {
      let url: URL | undefined;
      try {
        url = new URL(raw);
      } catch {}
      if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) throw new ConfigError(`${setting.env} must be an http(s) URL, got "${raw}"`);
      // Compared as text by whoever checks it: one spelling, no trailing slash.
      return raw.replace(/\/+$/, "");
    }
    case "secret":
      // The value is never part of the message.
      if (raw.length < setting.minLength) throw new ConfigError(`${setting.env} must be at least ${setting.minLength} characters`);
      return raw;
  }
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<Config> {
  const config: Record<string, number | string> = {};
  for (const [key, setting] of Object.entries(SETTINGS) as [string, Setting][]) config[key] = read(setting, env[setting.env]);
  // The tree cache must hold the largest group allowed, or such a group is dropped and reloaded from the store at every change (issue 37).
  const needed = treeCacheMbFor(config.groupMaxMembers as number);
  if (!env[SETTINGS.groupTreeCacheMb.env]) config.groupTreeCacheMb = Math.max(config.groupTreeCacheMb as number, needed);
  else if ((config.groupTreeCacheMb as number) < needed)
    throw new ConfigError(
      `GROUP_TREE_CACHE_MB ${config.groupTreeCacheMb} cannot hold one group of GROUP_MAX_MEMBERS ${config.groupMaxMembers} (${needed} MiB at ${TREE_BYTES_PER_LEAF} B a leaf): raise it to ${needed} or lower GROUP_MAX_MEMBERS`,
    );
  if (config.testClockFile) {
    // A moved clock decides expiry, periods and budgets: never on a service others reach.
    if (env.NODE_ENV === "production") throw new ConfigError("TEST_CLOCK_FILE is for tests and demos: it is refused with NODE_ENV=production");
    if (!LOOPBACK_HOST.test(config.hostname as string))
      throw new ConfigError(
        `TEST_CLOCK_FILE is for tests and demos: it is refused unless HOST is a loopback address (127.0.0.1, ::1, localhost), got "${config.hostname}"`,
      );
    try {
      new FileOffsetClock(config.testClockFile as string);
    } catch (error) {
      throw new ConfigError(`TEST_CLOCK_FILE ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return Object.freeze(config as Config);
}

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i;

/** True when the default is described in words rather than shown as a value. */
const describedDefault = (setting: Setting): boolean =>
  (setting.kind === "integer" && (typeof setting.default === "function" || setting.defaultText !== undefined)) ||
  setting.kind === "url" ||
  setting.kind === "secret";

const defaultText = (setting: Setting): string =>
  describedDefault(setting) ? ("defaultText" in setting && setting.defaultText ? setting.defaultText : "computed") : String(setting.default);

/** What a setting accepts, in words. */
const accepts = (setting: Setting): string =>
  setting.kind === "integer"
    ? `${setting.min}–${setting.max}`
    : setting.kind === "enum"
      ? setting.values.join(" | ")
      : setting.kind === "url"
        ? "http(s) URL"
        : setting.kind === "secret"
          ? `text, ≥ ${setting.minLength} characters`
          : "text";

/** The "Environment:" lines of `serve --help`. */
export function configHelp(indent = "    "): string {
  const width = Math.max(...Object.values(SETTINGS).map((s) => s.env.length)) + 2;
  return (Object.values(SETTINGS) as Setting[])
    .map((s) => `${indent}${s.env.padEnd(width)}${s.description.replace(/`/g, "")}; ${accepts(s)}, default ${defaultText(s)}`)
    .join("\n");
}

/** The README's configuration table (Markdown). */
export function configTable(): string {
  const rows = (Object.values(SETTINGS) as Setting[]).map((s) => {
    const shown = describedDefault(s) ? defaultText(s) : `\`${defaultText(s)}\``;
    return `| \`${s.env}\` | ${shown} | ${accepts(s).replace(/\|/g, "\\|")} | ${s.description} |`;
  });
  return ["| variable | default | accepted | meaning |", "|---|---|---|---|", ...rows].join("\n");
}
