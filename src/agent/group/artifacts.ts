// The Semaphore v4 artifacts the agent proves group membership with (hides
// nothing, reveals which depth the agent proves at — the challenge's, the same
// for every member — to the service it downloads from): the
// public ceremony's zkey and witness generator of one tree depth. Whatever the
// source, a file is used only if its SHA-256 is the one pinned in
// src/groups/semaphore-pins.ts (generated from @zk-kit/semaphore-artifacts):
// the witness generator is code the agent runs with its secret as input, so
// it is checked before it is compiled. The sources, first that has the depth:
//
//   a directory the caller names     semaphore-<depth>.wasm/.zkey; only it
//   the installed npm package        @zk-kit/semaphore-artifacts (164 MB, all
//                                    32 depths), when the project has it
//   the cache                        $XDG_CACHE_HOME/zkagent/semaphore-artifacts
//                                    (~/.cache/…), files named by their pin
//   a trusted zkagent service        GET {service}/v1/circuits/{circuit id}/wasm
//                                    and /zkey (the challenge's circuit_id),
//                                    bounded while they stream, checked, then
//                                    written to the cache
//
// so the @zkagent/agent package carries none of them and downloads the one
// depth a group challenge names (1.5–7.7 MB), once per machine and user. The
// service is not trusted with the bytes, only asked for them: a file that is
// not the pinned one is refused, whichever source it came from.
import { createHash } from "node:crypto";
import { cacheDir as namedCacheDir, writeCacheFile } from "../../cache-file";
import { closeSync, constants, existsSync, mkdirSync, openSync, rmSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { createRequire } from "node:module";
import { setPriority } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { acceptedSource, readBounded as readBoundedBody } from "../../bounded-fetch";
import { SEMAPHORE_ARTIFACTS_VERSION, SEMAPHORE_MAX_DEPTH, SEMAPHORE_PINS } from "../../groups/semaphore-pins";
import { cachedTablesPath, createProver, type Prover } from "../../prover";
import { proverThreads, tableOptions } from "../prover-tables";

/** An artifact that is missing, not a regular file, too large, or not the pinned bytes. */
export class SemaphoreArtifactError extends Error {
  // The class's own name (GroupProofError says why).
  static {
    Object.defineProperty(SemaphoreArtifactError, "name", { value: "SemaphoreArtifactError" });
  }
  override readonly name = "SemaphoreArtifactError";
}

// Bounds on what is read before hashing: the pinned files are at most 1.9 MB
// (wasm) and 5.8 MB (zkey, depth 32); a file far larger is refused unread.
const MAX_BYTES = { wasm: 8 << 20, zkey: 16 << 20 } as const;
type Kind = keyof typeof MAX_BYTES;

/** Whether `depth` is one the pins cover (1–32). */
export const isSemaphoreDepth = (depth: unknown): depth is number =>
  typeof depth === "number" && Number.isInteger(depth) && depth >= 1 && depth <= SEMAPHORE_MAX_DEPTH;

/** The installed @zk-kit/semaphore-artifacts directory, or null where the project does not have it. */
function packageDir(): string | null {
  try {
    return dirname(createRequire(import.meta.url).resolve("@zk-kit/semaphore-artifacts/package.json"));
  } catch {
    return null;
  }
}

/** $XDG_CACHE_HOME/zkagent/semaphore-artifacts, or ~/.cache/… (the rule defaultTableCacheDir follows). */
export const defaultSemaphoreCacheDir = (env: Record<string, string | undefined> = process.env): string => namedCacheDir("semaphore-artifacts", env);

/**
 * One file, read with a bound: opened without blocking (a FIFO is refused,
 * not waited on), a regular file no larger than the kind's limit, and read
 * to exactly the size it had when opened.
 */
async function readBounded(path: string, kind: Kind): Promise<Uint8Array> {
  let file: Awaited<ReturnType<typeof open>>;
  try {
    file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new SemaphoreArtifactError(`${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    const stat = await file.stat();
    if (!stat.isFile()) throw new SemaphoreArtifactError(`${path}: not a regular file`);
    if (stat.size > MAX_BYTES[kind])
      throw new SemaphoreArtifactError(`${path}: ${stat.size} bytes, more than the ${MAX_BYTES[kind]} a Semaphore ${kind} may have`);
    const bytes = new Uint8Array(stat.size);
    let offset = 0;
    while (offset < bytes.length) {
      const { bytesRead } = await file.read(bytes, offset, bytes.length - offset, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    if (offset !== bytes.length) throw new SemaphoreArtifactError(`${path}: shrank while it was read`);
    return bytes;
  } finally {
    await file.close();
  }
}

export interface SemaphoreArtifacts {
  depth: number;
  zkey: Uint8Array;
  wasm: Uint8Array;
  /** The zkey's SHA-256 (hex): its pin, checked once on load, so the prover need not hash 5 MB again. */
  zkeySha256: string;
}

/** Where the artifacts may come from (the file header); every field optional. */
export interface SemaphoreArtifactSource {
  /** A directory holding semaphore-<depth>.zkey/.wasm: the only source when given. */
  dir?: string;
  /** A trusted zkagent service's base URL (https; http on loopback with allowInsecureLoopback): asked when no other source has the depth. */
  service?: string;
  /** The circuit id the service serves the depth under (a group challenge's circuit_id, semaphore_v4_d<depth>-<16 hex>). */
  circuitId?: string;
  /** Where downloads are kept; default defaultSemaphoreCacheDir(), false: neither read nor written. */
  cacheDir?: string | false;
  allowInsecureLoopback?: boolean;
  /** For tests and custom transports; the global fetch by default. */
  fetch?: typeof fetch;
  /** Look in the installed @zk-kit/semaphore-artifacts (default true); false: the cache and the service only. */
  installedPackage?: boolean;
  /** Milliseconds each download may take, its body included (default 120 s; the SDK passes its timeoutMs). */
  timeoutMs?: number;
}

const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const SEMAPHORE_ID = /^semaphore_v4_d([1-9]|[12][0-9]|3[0-2])-[0-9a-f]{16}$/;

/** `bytes`, refused unless they are the pinned file of `kind` at `depth`. */
function pinned(bytes: Uint8Array, depth: number, kind: Kind, where: string, sha256 = sha256Hex(bytes)): Uint8Array {
  const pin = SEMAPHORE_PINS[depth]![kind];
  if (sha256 !== pin) {
    throw new SemaphoreArtifactError(
      `${where}: SHA-256 ${sha256} is not the pinned ${pin} (@zk-kit/semaphore-artifacts ${SEMAPHORE_ARTIFACTS_VERSION}, depth ${depth}): refused`,
    );
  }
  return bytes;
}

/** Both files from one directory, checked. */
async function fromDirectory(depth: number, dir: string): Promise<SemaphoreArtifacts> {
  const read = async (kind: Kind) => {
    const path = join(dir, `semaphore-${depth}.${kind}`);
    return pinned(await readBounded(path, kind), depth, kind, path);
  };
  const [zkey, wasm] = await Promise.all([read("zkey"), read("wasm")]);
  return { depth, zkey, wasm, zkeySha256: SEMAPHORE_PINS[depth]!.zkey };
}

/** A cached file (named by its pin), or null when absent or not the pinned bytes (then it is fetched again and overwritten). */
async function fromCache(cacheDir: string, depth: number, kind: Kind): Promise<Uint8Array | null> {
  const pin = SEMAPHORE_PINS[depth]![kind];
  try {
    const bytes = await readBounded(join(cacheDir, `${pin}.${kind}`), kind);
    return sha256Hex(bytes) === pin ? bytes : null;
  } catch {
    return null;
  }
}

function toCache(dir: string, depth: number, kind: Kind, bytes: Uint8Array): void {
  // A cache that cannot be written costs a download next time, nothing else.
  writeCacheFile(dir, join(dir, `${SEMAPHORE_PINS[depth]![kind]}.${kind}`), [bytes]);
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: a service's text must not move the terminal's cursor
const CONTROL = /[\u0000-\u001f\u007f-\u009f]+/g;

/** Default time for one download, its body included, when the caller names none. */
const DOWNLOAD_TIMEOUT_MS = 120_000;

/**
 * What a service said with a refusal, for the error the agent shows: the
 * `message` (and `reason`) of a JSON error body, or the start of a text one
 * (at most 4 KiB read; control characters dropped). Empty when it said nothing.
 */
export async function serviceSays(response: Response): Promise<string> {
  let text: string;
  try {
    const body = await readBoundedBody(response, 4096);
    if (body === null) return "";
    text = new TextDecoder().decode(body.bytes);
  } catch {
    return "";
  }
  let said = text;
  try {
    const json = JSON.parse(text) as { message?: unknown; reason?: unknown; error?: unknown };
    const message = typeof json.message === "string" ? json.message : typeof json.error === "string" ? json.error : null;
    if (message !== null) said = typeof json.reason === "string" ? `${message} (${json.reason})` : message;
  } catch {
    // not JSON: the text as it came
  }
  said = said.replace(CONTROL, " ").trim().slice(0, 500);
  return said === "" ? "" : `: the service says: ${said}`;
}

/** One file from the service, bounded while it streams and checked against the pin; no redirect is followed. */
async function fromService(source: SemaphoreArtifactSource, depth: number, kind: Kind): Promise<Uint8Array> {
  const { service, circuitId } = source;
  let base: URL;
  try {
    base = new URL(service!);
  } catch {
    throw new SemaphoreArtifactError(`${service} is not a URL`);
  }
  if (!acceptedSource(base, source.allowInsecureLoopback))
    throw new SemaphoreArtifactError(`${service}: the service must be https:// (http:// only on a loopback address, with allowInsecureLoopback)`);
  const match = circuitId === undefined ? null : SEMAPHORE_ID.exec(circuitId);
  if (!match || Number(match[1]) !== depth)
    throw new SemaphoreArtifactError(`${circuitId ?? "no circuit id"} is not a Semaphore circuit id of depth ${depth} (semaphore_v4_d${depth}-<16 hex>)`);
  const url = new URL(`${base.pathname.replace(/\/$/, "")}/v1/circuits/${circuitId}/${kind}`, base);
  const get = source.fetch ?? fetch;
  const timeoutMs = source.timeoutMs ?? DOWNLOAD_TIMEOUT_MS;
  // One signal for the request and its body: a service that sends headers and then trickles is bounded too.
  const signal = AbortSignal.timeout(timeoutMs);
  const late = (error: unknown) =>
    new SemaphoreArtifactError(`GET ${url}: ${signal.aborted ? `no complete answer within ${timeoutMs / 1000} s (timeoutMs)` : (error as Error).message}`, {
      cause: error,
    });
  let response: Response;
  try {
    response = await get(url.href, { redirect: "error", signal });
  } catch (error) {
    throw late(error);
  }
  if (!response.ok) throw new SemaphoreArtifactError(`GET ${url}: HTTP ${response.status}${await serviceSays(response)}`);
  let body: Awaited<ReturnType<typeof readBoundedBody>>;
  try {
    body = await readBoundedBody(response, MAX_BYTES[kind]);
  } catch (error) {
    throw late(error);
  }
  if (body === null) throw new SemaphoreArtifactError(`GET ${url}: more than the ${MAX_BYTES[kind]} bytes a Semaphore ${kind} may have: refused`);
  // readBounded hashed the bytes while they streamed: that digest is the one checked, not a second pass.
  return pinned(body.bytes, depth, kind, `GET ${url}`, body.sha256);
}

/**
 * The zkey and witness generator of `depth`, each checked against its pinned
 * SHA-256 (throws SemaphoreArtifactError naming the file otherwise), from the
 * first source that has them (the file header). A string is a directory.
 */
export async function loadSemaphoreArtifacts(depth: number, source: string | SemaphoreArtifactSource = {}): Promise<SemaphoreArtifacts> {
  if (!isSemaphoreDepth(depth)) throw new SemaphoreArtifactError(`no Semaphore artifacts are pinned for depth ${depth} (1–${SEMAPHORE_MAX_DEPTH})`);
  const from = typeof source === "string" ? { dir: source } : source;
  if (from.dir !== undefined) return fromDirectory(depth, from.dir);
  const installed = from.installedPackage === false ? null : packageDir();
  if (installed !== null) return fromDirectory(depth, installed);
  const cacheDir = from.cacheDir === undefined ? defaultSemaphoreCacheDir() : from.cacheDir;
  const one = async (kind: Kind): Promise<Uint8Array> => {
    const cached = cacheDir === false ? null : await fromCache(cacheDir, depth, kind);
    if (cached) return cached;
    if (from.service === undefined) {
      throw new SemaphoreArtifactError(
        `semaphore-${depth}.${kind} is in no source: pass a trusted zkagent service (it serves the pinned files), a directory holding them, or install @zk-kit/semaphore-artifacts@${SEMAPHORE_ARTIFACTS_VERSION}`,
      );
    }
    const bytes = await fromService(from, depth, kind);
    if (cacheDir !== false) toCache(cacheDir, depth, kind, bytes);
    return bytes;
  };
  const [zkey, wasm] = await Promise.all([one("zkey"), one("wasm")]);
  return { depth, zkey, wasm, zkeySha256: SEMAPHORE_PINS[depth]!.zkey };
}

export interface SemaphoreProverOptions {
  /** Where semaphore-<depth>.zkey/.wasm are; default the installed @zk-kit/semaphore-artifacts, the cache, then `artifactsService`. */
  artifactsDir?: string;
  /** Where the depth's files are fetched from when no local source has them (a trusted zkagent service and the circuit id it serves them under). */
  artifactsService?: { service: string; circuitId: string; allowInsecureLoopback?: boolean; fetch?: typeof fetch; timeoutMs?: number };
  /** Where downloaded artifacts are kept; default defaultSemaphoreCacheDir(), false for none. */
  artifactsCache?: string | false;
  /** Window tables at load (see ProveOptions.precompute); default true. */
  precompute?: boolean;
  /** Where the tables are kept between processes; default defaultTableCacheDir(), false for none (ProveOptions.tableCache). */
  tableCache?: string | false;
  /** Threads per proof (createProver's threads); default the machine's cores, at most 4. */
  threads?: number;
  /**
   * With a table cache that has no tables for the depth yet: true builds
   * them before the first proof (seconds at depth 20); default false: the
   * first proof goes without them while a detached process builds them for
   * the next.
   */
  waitForTables?: boolean;
}

// One prover per depth (and table choice) per process. Every source yields the
// same pinned bytes, so the directory is not part of the key: a later call
// naming another directory reuses the prover and reads nothing.
//
// The first proof at a depth in a process whose table cache has no tables
// for it does not wait for them (Semaphore depth 20: seconds, more than the
// proof itself): it proves without tables, and a detached process builds them
// into the cache for the next one (build-tables.ts). A process that proves
// again once they are written loads them (`tables`: the file it waits for).
const provers = new Map<string, { prover: Promise<Prover>; tables?: string }>();

/** A builder started within this long is assumed to be still at work (its marker file). */
const BUILDER_MARKER_MS = 120_000;

/**
 * Starts the detached builder of `depth`'s tables, unless one is at work
 * (marker younger than BUILDER_MARKER_MS) or this runtime cannot start it
 * (not Bun, or a compiled binary without the script): false then.
 */
function buildTablesInBackground(
  depth: number,
  dir: string,
  file: string,
  artifacts: Pick<SemaphoreProverOptions, "artifactsDir" | "artifactsCache">,
): boolean {
  if (typeof Bun === "undefined") return false;
  const script = fileURLToPath(new URL("./build-tables.ts", import.meta.url));
  if (!existsSync(script)) return false;
  const marker = `${file}.building`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (existsSync(marker) && Date.now() - statSync(marker).mtimeMs < BUILDER_MARKER_MS) return true;
    rmSync(marker, { force: true });
    closeSync(openSync(marker, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600));
  } catch (error) {
    // Another process took the marker first: its builder is at work, so this proof goes without tables too. Anything else: no builder.
    return (error as NodeJS.ErrnoException).code === "EEXIST";
  }
  // The builder reads the files from where this process found them: the directory, the package, or the cache a download filled.
  const cache = artifacts.artifactsCache === false ? "-" : (artifacts.artifactsCache ?? "");
  const child = Bun.spawn([process.execPath, script, String(depth), dir, marker, artifacts.artifactsDir ?? "", cache], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
    detached: true,
  });
  try {
    setPriority(child.pid, 10); // behind the agent's own work
  } catch {
    // not permitted here: it runs at the same priority
  }
  child.unref();
  return true;
}

/** The prover for `depth`, built from the checked artifacts on first use. @internal (not in the packages' declarations) */
export function semaphoreProver(depth: number, options: SemaphoreProverOptions = {}): Promise<Prover> {
  const tables = tableOptions(options.precompute, options.tableCache);
  const key = `${depth}:${tables.precompute}`;
  let held = provers.get(key);
  // A prover made without tables while they were built elsewhere: once they are written, load them.
  if (held?.tables !== undefined && existsSync(held.tables)) {
    provers.delete(key);
    held = undefined;
  }
  if (!held) {
    const entry = {} as { prover: Promise<Prover>; tables?: string };
    entry.prover = loadSemaphoreArtifacts(depth, {
      dir: options.artifactsDir,
      ...options.artifactsService,
      cacheDir: options.artifactsCache,
    }).then(async (a) => {
      const threads = proverThreads(options.threads, "cores");
      if (tables.tableCache !== undefined && options.waitForTables !== true) {
        const file = await cachedTablesPath(a.zkeySha256, tables.tableCache);
        if (!existsSync(file) && buildTablesInBackground(depth, tables.tableCache, file, options)) {
          entry.tables = file;
          return createProver({ zkey: a.zkey, wasm: a.wasm, zkeySha256: a.zkeySha256 }, { precompute: false });
        }
      }
      return createProver({ zkey: a.zkey, wasm: a.wasm, zkeySha256: a.zkeySha256 }, { ...tables, threads });
    });
    provers.set(key, entry);
    // A failed load is not kept: the next call reads the files again.
    entry.prover.catch(() => provers.delete(key));
    held = entry;
  }
  return held.prover;
}
