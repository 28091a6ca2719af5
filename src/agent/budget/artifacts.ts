// The budget spend circuit's artifacts (circuits/artifacts/budget_spend): the
// witness generator (code the agent runs with its secret as input) and the
// proving key, used only when their SHA-256 is the one pinned here, whatever
// the source. The sources, first that has them:
//
//   a directory the caller names   budget_spend.wasm / budget_spend.zkey; only it
//   the clone's own files          circuits/artifacts/budget_spend (a checkout, not the npm package)
//   the files built in             the compiled binary's embedded copies (src/circuits/budget-files.ts,
//                                  installed by the full CLI through useBuiltInBudgetArtifacts; never
//                                  in the agent's npm package)
//   the cache                      $XDG_CACHE_HOME/zkagent/budget-artifacts, files named by their pin
//   a trusted zkagent service      GET {service}/v1/circuits/{circuit id}/wasm and /zkey, bounded, checked, cached
//
// What it reveals: to the service it downloads from, that some member of
// some budgeted group proves there (once per machine and user).
// test/agent/budget.test.ts recomputes the pins from the shipped files.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { acceptedSource, readBounded } from "../../bounded-fetch";
import { cacheDir, readCacheFile, writeCacheFile } from "../../cache-file";
import { createProver, type Prover } from "../../prover";
import { proverThreads, tableOptions } from "../prover-tables";
import { BudgetSpendError } from "./error";

/** SHA-256 of the shipped budget_spend.wasm and budget_spend.zkey. */
export const BUDGET_PINS = {
  wasm: { sha256: "4c8e55c5a9aa1543422e66e715f5ed159f08e041de2fc7b224b6a8c691b6955f", bytes: 5_075_791 },
  zkey: { sha256: "6031e403894287245298750bfd6bccf3c81c6cb56f2fcbc5204ca269231c2c27", bytes: 10_471_318 },
} as const;
type Kind = keyof typeof BUDGET_PINS;

/** The circuit id the service gives the pinned zkey: "budget_spend-" and its SHA-256's first 16 hex digits. */
export const BUDGET_CIRCUIT_ID = `budget_spend-${BUDGET_PINS.zkey.sha256.slice(0, 16)}`;

export interface BudgetArtifactSource {
  /** A directory holding budget_spend.wasm and budget_spend.zkey: the only source then. */
  dir?: string;
  /** Where downloads are kept; default $XDG_CACHE_HOME/zkagent/budget-artifacts, false for none. */
  cacheDir?: string | false;
  /** A trusted zkagent service to download them from. */
  service?: string;
  allowInsecureLoopback?: boolean;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

async function checked(bytes: Uint8Array, kind: Kind, where: string, digest?: string): Promise<Uint8Array> {
  const actual = digest ?? sha256Hex(bytes);
  if (actual !== BUDGET_PINS[kind].sha256)
    throw new BudgetSpendError("statement", `${where}: SHA-256 ${actual} is not the pinned budget_spend.${kind} (${BUDGET_PINS[kind].sha256}): refused`);
  return bytes;
}

/** The clone's circuits/artifacts/budget_spend, when this module runs from a checkout. */
function cloneDir(): string | null {
  try {
    const dir = fileURLToPath(new URL("../../../circuits/artifacts/budget_spend/", import.meta.url));
    return existsSync(join(dir, "budget_spend.zkey")) ? dir : null;
  } catch {
    return null;
  }
}

async function fromService(source: BudgetArtifactSource, kind: Kind): Promise<Uint8Array> {
  const base = new URL(source.service!);
  if (!acceptedSource(base, source.allowInsecureLoopback)) throw new BudgetSpendError("statement", `${source.service}: the service must be https://`);
  const url = new URL(`${base.pathname.replace(/\/$/, "")}/v1/circuits/${BUDGET_CIRCUIT_ID}/${kind}`, base);
  const timeoutMs = source.timeoutMs ?? 300_000;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await (source.fetch ?? fetch)(url.href, { redirect: "error", signal });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const body = await readBounded(response, BUDGET_PINS[kind].bytes);
    if (body === null) throw new Error(`more than the pinned ${BUDGET_PINS[kind].bytes} bytes`);
    return checked(body.bytes, kind, `GET ${url}`, body.sha256);
  } catch (error) {
    if (error instanceof BudgetSpendError) throw error;
    throw new BudgetSpendError("statement", `GET ${url}: ${signal.aborted ? `no answer within ${timeoutMs / 1000} s` : (error as Error).message}`);
  }
}

let builtIn: ((kind: Kind) => string) | null = null;

/** Files this program carries (the compiled binary's embedded copies): used after a named directory and the clone's, before the cache and the service; still checked against the pins. */
export function useBuiltInBudgetArtifacts(pathOf: ((kind: Kind) => string) | null): void {
  builtIn = pathOf;
}

/** The pinned wasm and zkey, from the first source that has them (the file header). */
export async function loadBudgetArtifacts(source: BudgetArtifactSource = {}): Promise<{ wasm: Uint8Array; zkey: Uint8Array }> {
  const dir = source.dir ?? cloneDir();
  const local = dir !== null ? (kind: Kind) => join(dir, `budget_spend.${kind}`) : builtIn;
  if (local !== null) {
    const read = async (kind: Kind) => {
      const path = local(kind);
      const bytes = await readFile(path).catch((error: NodeJS.ErrnoException) => {
        throw new BudgetSpendError("statement", `${path}: ${error.code ?? error.message}`);
      });
      return checked(new Uint8Array(bytes), kind, path);
    };
    return { wasm: await read("wasm"), zkey: await read("zkey") };
  }
  const cache = source.cacheDir === undefined ? cacheDir("budget-artifacts") : source.cacheDir;
  const one = async (kind: Kind): Promise<Uint8Array> => {
    const path = cache === false ? null : join(cache, `${BUDGET_PINS[kind].sha256}.${kind}`);
    const kept = path ? readCacheFile(path, BUDGET_PINS[kind].bytes) : "none";
    if (typeof kept !== "string" && sha256Hex(kept) === BUDGET_PINS[kind].sha256) return kept;
    if (source.service === undefined)
      throw new BudgetSpendError(
        "statement",
        `budget_spend.${kind} is in no source: pass a trusted zkagent service (it serves the pinned files) or a directory holding them`,
      );
    const bytes = await fromService(source, kind);
    if (cache !== false && path) writeCacheFile(cache, path, [bytes]);
    return bytes;
  };
  return { wasm: await one("wasm"), zkey: await one("zkey") };
}

export interface BudgetProverOptions {
  precompute?: boolean;
  tableCache?: string | false;
  threads?: number;
}

let prover: Promise<Prover> | undefined;

/** This process's budget prover (built once from the pinned artifacts). @internal (not in the packages' declarations: its Prover type names WebAssembly, which a Node project without the DOM lib lacks) */
export function budgetProver(source: BudgetArtifactSource, options: BudgetProverOptions = {}): Promise<Prover> {
  prover ??= (async () => {
    const artifacts = await loadBudgetArtifacts(source);
    const tables = tableOptions(options.precompute ?? false, options.tableCache);
    return createProver({ ...artifacts, zkeySha256: BUDGET_PINS.zkey.sha256 }, { ...tables, threads: proverThreads(options.threads, "cores") });
  })().catch((error) => {
    prover = undefined;
    throw error;
  });
  return prover;
}
