// Configuration, read from the environment once at start, validated, frozen.
import { availableParallelism } from "node:os";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

export interface Config {
  port: number;
  hostname: string;
  /** A SQLite file path (default ./data/zkagent.db) or a postgres:// URL. */
  databaseUrl: string;
  sqliteSynchronous: "NORMAL" | "FULL";
  logLevel: LogLevel;
  workers: number;
  /** Rate limit given to keys created without one, per minute. */
  defaultRateLimit: number;
  /** Unexpired pending challenges one key may hold; 0 = no cap. */
  maxPendingPerKey: number;
}

export class ConfigError extends Error {}

export const DEFAULT_MAX_PENDING_PER_KEY = 10_000;

function integer(env: Record<string, string | undefined>, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

function oneOf<T extends string>(env: Record<string, string | undefined>, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
  return raw as T;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<Config> {
  return Object.freeze({
    port: integer(env, "PORT", 3000, 0, 65535),
    hostname: env.HOST || "0.0.0.0",
    databaseUrl: env.DATABASE_URL || "./data/zkagent.db",
    sqliteSynchronous: oneOf(env, "SQLITE_SYNCHRONOUS", ["NORMAL", "FULL"] as const, "NORMAL"),
    logLevel: oneOf(env, "LOG_LEVEL", ["debug", "info", "warn", "error", "silent"] as const, "info"),
    workers: integer(env, "WORKERS", availableParallelism(), 1, 256),
    defaultRateLimit: integer(env, "DEFAULT_RATE_LIMIT", 1000, 0, 1_000_000_000),
    maxPendingPerKey: integer(env, "MAX_PENDING_PER_KEY", DEFAULT_MAX_PENDING_PER_KEY, 0, 1_000_000_000),
  });
}
