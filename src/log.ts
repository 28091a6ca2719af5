// Structured JSON logs, one object per line on stderr. Every line written while
// a request is being handled carries its `request_id` (taken from the request
// context below, so services need not pass it). Callers pass fields, never
// secrets; as a second line of defence, fields whose names denote a secret
// (API keys, agent secrets, proofs, signatures) are replaced by "[redacted]".
import { AsyncLocalStorage } from "node:async_hooks";
import type { LogLevel } from "./config";

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export interface RequestContext {
  requestId: string;
}

/**
 * The request being handled. src/http/observe.ts enters it when a request arrives; it
 * follows the request through every await, so a log line written deep in a
 * service still names its request.
 */
export const requestContext = new AsyncLocalStorage<RequestContext>();

// Matched against field names, case-insensitively, at any depth.
const SECRET_FIELD = /^(x-?)?api[-_]?key$|^key$|secret|password|authorization|^proof$|signature|^token$/i;
const MAX_DEPTH = 6;

function redact(value: unknown, depth = 0): unknown {
  if (typeof value !== "object" || value === null || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) out[name] = SECRET_FIELD.test(name) ? "[redacted]" : redact(field, depth + 1);
  return out;
}

/**
 * Characters that steer a terminal or reorder what it shows rather than print:
 * C0 and C1 controls and DEL (ESC starts escape sequences, CR returns to the
 * line start, U+009B is a one-byte CSI), the Unicode line and paragraph
 * separators, and the bidirectional overrides and isolates ("Trojan Source").
 * Log fields and CLI output carry callers' text (agent ids, key names, a
 * receipt's kid, paths): neither writes these raw (issue 18).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this expression's job.
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const escapeControl = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/**
 * `text` with every control character (CONTROL_CHARACTERS) written as \uXXXX,
 * newlines included. Inside a JSON string literal that is the same JSON; in a
 * line of text it shows the character instead of obeying it. The one escaper
 * of the log and the CLI (src/cli/args.ts).
 */
export const escapeControls = (text: string): string => text.replace(CONTROL_CHARACTERS, escapeControl);

export function createLogger(level: LogLevel, write: (line: string) => void = (line) => process.stderr.write(line)): Logger {
  const emit =
    (at: Exclude<LogLevel, "silent">) =>
    (msg: string, fields: Record<string, unknown> = {}) => {
      if (rank[at] < rank[level]) return;
      const request_id = requestContext.getStore()?.requestId;
      const line = { time: new Date().toISOString(), level: at, msg, ...(request_id ? { request_id } : {}), ...(redact(fields) as Record<string, unknown>) };
      write(`${escapeControls(JSON.stringify(line))}\n`);
    };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}

export const silentLogger: Logger = createLogger("silent");
