// Shared argument handling for the commands: node:util's parseArgs, with
// usage errors that print the command's help and exit 2.
import { readFileSync } from "node:fs";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { escapeControls } from "../log";
import { MAX_PROVER_THREADS } from "../prover/limits";

export class UsageError extends Error {}

export function parse<T extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options: { ...options, help: { type: "boolean", short: "h" } }, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** `text` with every control character written as \uXXXX, newlines included: for one untrusted value inside a line. */
export const shown = escapeControls;

/** Lines the CLI composed: their own newlines stay, every other control character is escaped. */
const lines = (text: string): string => text.split("\n").map(shown).join("\n");

/**
 * With --json a command prints one JSON object on stdout and nothing else
 * there. JSON.stringify escapes C0 controls only; the rest are escaped here as
 * \uXXXX, which leaves the JSON text meaning the same.
 */
export const printJson = (value: unknown): Promise<void> => write(process.stdout, `${shown(JSON.stringify(value))}\n`);
export const say = (line: string): Promise<void> => write(process.stdout, `${lines(line)}\n`);
/** A message on standard error, escaped like say(). */
export const warn = (line: string): Promise<void> => write(process.stderr, `${lines(line)}\n`);

// A pipe holds 64 KiB: the rest of a larger write is still queued in the
// process when the command returns, and process.exit drops it. (An empty
// write's callback is no proof: under Bun it can run before the queued bytes
// are out.) So every write is remembered until its own callback, which runs
// once the stream has taken its bytes or failed (EPIPE: the reader left).
const pending = new Set<Promise<void>>();
function write(stream: NodeJS.WriteStream, text: string | Uint8Array): Promise<void> {
  const done = new Promise<void>((resolve) => stream.write(text, () => resolve()));
  pending.add(done);
  done.then(() => pending.delete(done));
  return done;
}

/** Standard input as text, read to its end asynchronously (under Bun and under Node: the agent's commands run on both). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** Writes raw bytes to standard output, remembered like printJson's. */
export const writeStdout = (bytes: string | Uint8Array): Promise<void> => write(process.stdout, bytes);

/** Resolves once every write made through this module has been taken by its stream: what the CLI awaits before it exits. */
export const outputWritten = async (): Promise<void> => {
  while (pending.size > 0) await Promise.all(pending);
};

/**
 * An SDK error as the CLI shows it: the SDK names its option
 * (`allowInsecureLoopback`), a command line user needs the flag that sets it.
 */
export const inCliTerms = (message: string): string => message.replaceAll("allowInsecureLoopback", "--allow-insecure-loopback");

export function requireString(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

export function parseContext(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError("--context must be a JSON object");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UsageError("--context must be a JSON object");
  return value as Record<string, unknown>;
}

export function nonNegativeInteger(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) throw new UsageError(`--${name} must be a non-negative integer`);
  return value;
}

/**
 * A secret from `--NAME VALUE` or `--NAME-file PATH` (`-` = standard input),
 * exactly one of them. The file form keeps the secret out of shell history
 * and process listings; one trailing newline (as `echo` or an editor leaves)
 * is dropped, nothing else.
 */
export async function secretOption(values: Record<string, unknown>, name: string): Promise<string> {
  const inline = values[name];
  const file = values[`${name}-file`];
  if (inline !== undefined && file !== undefined) throw new UsageError(`give --${name} or --${name}-file, not both`);
  if (typeof file === "string") {
    let text: string;
    try {
      // Standard input is read asynchronously: a synchronous read of a pipe
      // the writer has not filled yet can fail with EAGAIN.
      text = file === "-" ? await readStdin() : readFileSync(file, "utf8");
    } catch (error) {
      throw new UsageError(`--${name}-file: cannot read ${file === "-" ? "standard input" : file}: ${(error as Error).message}`);
    }
    const secret = text.replace(/\r?\n$/, "");
    if (secret === "") throw new UsageError(`--${name}-file: ${file === "-" ? "standard input" : file} is empty`);
    return secret;
  }
  if (typeof inline !== "string" || inline === "") throw new UsageError(`--${name} or --${name}-file is required`);
  return inline;
}

/** The options every proving command takes for the prover's window tables (src/agent/prover-tables.ts). */
export const TABLE_OPTIONS = {
  "table-cache": { type: "string" },
  "no-table-cache": { type: "boolean" },
  threads: { type: "string" },
} as const;

export const tableOptionsHelp = `  --table-cache DIR: where the prover keeps its window tables between runs
  (default $XDG_CACHE_HOME/zkagent/prover-tables, else
  ~/.cache/zkagent/prover-tables): the first run builds and writes them
  (Semaphore depth 20: seconds), later runs read them back, checked.
  --no-table-cache: no tables (a fast start every time, slower proofs).
  --threads N: threads per proof, this one included (default 1 for the
  agent circuit, the machine's cores up to 4 for a group proof); needs the
  tables.`;

/**
 * What the table options ask for: a directory (default the per-user one), or
 * no tables at all — a process that proves once gains nothing from tables it
 * cannot keep.
 */
export function tableChoice(values: { "table-cache"?: string; "no-table-cache"?: boolean; threads?: string }): {
  precompute: boolean;
  tableCache?: string | false;
  threads?: number;
} {
  let threads: number | undefined;
  if (values.threads !== undefined) {
    if (!/^[1-9][0-9]?$/.test(values.threads) || Number(values.threads) > MAX_PROVER_THREADS)
      throw new UsageError(`--threads must be a whole number from 1 to ${MAX_PROVER_THREADS}`);
    threads = Number(values.threads);
  }
  if (values["no-table-cache"]) {
    if (values["table-cache"] !== undefined) throw new UsageError("--table-cache and --no-table-cache exclude each other");
    return { precompute: false, tableCache: false, threads };
  }
  if (values["table-cache"] === "") throw new UsageError("--table-cache needs a directory");
  return { precompute: true, tableCache: values["table-cache"], threads };
}

/** The option every command that may prove for a group takes: the anonymity floor (src/agent/group/proof.ts, minAnonymity). */
export const GROUP_OPTIONS = { "min-anonymity": { type: "string" } } as const;

export const groupOptionsHelp = `  --min-anonymity N: refuse to prove for a group with fewer than N active
  members at the root proved against (default 3: a proof from 1 or 2 members
  names its member or narrows it to one of two).`;

/** --min-anonymity as the SDK's minAnonymity (undefined: the SDK's default). */
export function groupChoice(values: { "min-anonymity"?: string }): { minAnonymity?: number } {
  const text = values["min-anonymity"];
  if (text === undefined) return {};
  if (!/^[1-9][0-9]{0,6}$/.test(text)) throw new UsageError("--min-anonymity must be a whole number of members, at least 1");
  return { minAnonymity: Number(text) };
}

/** A JSON object from a file, for an option; anything else is a usage error naming the option. */
export function readJsonObjectFile(path: string, option: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--${option}: cannot read ${path}${code ? ` (${code})` : ": not JSON"}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new UsageError(`--${option}: ${path} is not a JSON object`);
  return value as Record<string, unknown>;
}
