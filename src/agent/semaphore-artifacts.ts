// The Semaphore v4 artifacts the agent proves group membership with: the
// public ceremony's zkey and witness generator of one tree depth, from the
// installed @zk-kit/semaphore-artifacts package or a directory the caller
// names. Whatever the source, a file is used only if its SHA-256 is the one
// pinned in src/groups/semaphore-pins.ts (generated from that package): the
// witness generator is code the agent runs with its secret as input, so it is
// checked before it is compiled, and nothing here ever comes from a service.
import { createHash } from "node:crypto";
import { closeSync, constants, existsSync, mkdirSync, openSync, rmSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { createRequire } from "node:module";
import { setPriority } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { SEMAPHORE_ARTIFACTS_VERSION, SEMAPHORE_MAX_DEPTH, SEMAPHORE_PINS } from "../groups/semaphore-pins";
import { cachedTablesPath, createProver, type Prover } from "../prover";
import { proverThreads, tableOptions } from "./prover-tables";

/** An artifact that is missing, not a regular file, too large, or not the pinned bytes. */
export class SemaphoreArtifactError extends Error {
  override readonly name = "SemaphoreArtifactError";
}

// Bounds on what is read before hashing: the pinned files are at most 1.9 MB
// (wasm) and 5.8 MB (zkey, depth 32); a file far larger is refused unread.
const MAX_BYTES = { wasm: 8 << 20, zkey: 16 << 20 } as const;
type Kind = keyof typeof MAX_BYTES;

/** Whether `depth` is one the pins cover (1–32). */
export const isSemaphoreDepth = (depth: unknown): depth is number =>
  typeof depth === "number" && Number.isInteger(depth) && depth >= 1 && depth <= SEMAPHORE_MAX_DEPTH;

/** The installed @zk-kit/semaphore-artifacts directory. */
function packageDir(): string {
  try {
    return dirname(createRequire(import.meta.url).resolve("@zk-kit/semaphore-artifacts/package.json"));
  } catch {
    throw new SemaphoreArtifactError(
      `@zk-kit/semaphore-artifacts ${SEMAPHORE_ARTIFACTS_VERSION} is not installed here: pass the directory holding semaphore-<depth>.wasm and .zkey`,
    );
  }
}

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
}

/**
 * The zkey and witness generator of `depth`, each checked against its pinned
 * SHA-256 (throws SemaphoreArtifactError naming the file otherwise). `dir`:
 * where semaphore-<depth>.zkey/.wasm are; default the installed package.
 */
export async function loadSemaphoreArtifacts(depth: number, dir?: string): Promise<SemaphoreArtifacts> {
  if (!isSemaphoreDepth(depth)) throw new SemaphoreArtifactError(`no Semaphore artifacts are pinned for depth ${depth} (1–${SEMAPHORE_MAX_DEPTH})`);
  const base = dir ?? packageDir();
  const pin = SEMAPHORE_PINS[depth]!;
  const checked = async (kind: Kind) => {
    const path = join(base, `semaphore-${depth}.${kind}`);
    const bytes = await readBounded(path, kind);
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    if (sha256 !== pin[kind]) {
      throw new SemaphoreArtifactError(
        `${path}: SHA-256 ${sha256} is not the pinned ${pin[kind]} (@zk-kit/semaphore-artifacts ${SEMAPHORE_ARTIFACTS_VERSION}, depth ${depth}): refused`,
      );
    }
    return bytes;
  };
  const [zkey, wasm] = await Promise.all([checked("zkey"), checked("wasm")]);
  return { depth, zkey, wasm };
}

export interface SemaphoreProverOptions {
  /** Where semaphore-<depth>.zkey/.wasm are; default the installed @zk-kit/semaphore-artifacts. */
  artifactsDir?: string;
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
function buildTablesInBackground(depth: number, dir: string, file: string, artifactsDir?: string): boolean {
  if (typeof Bun === "undefined") return false;
  const script = fileURLToPath(new URL("./build-tables.ts", import.meta.url));
  if (!existsSync(script)) return false;
  const marker = `${file}.building`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (existsSync(marker) && Date.now() - statSync(marker).mtimeMs < BUILDER_MARKER_MS) return true;
    rmSync(marker, { force: true });
    closeSync(openSync(marker, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600));
  } catch {
    return false; // another process took the marker first, or the directory cannot be written
  }
  const child = Bun.spawn([process.execPath, script, String(depth), dir, marker, artifactsDir ?? ""], {
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

/** The prover for `depth`, built from the checked artifacts on first use. */
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
    entry.prover = loadSemaphoreArtifacts(depth, options.artifactsDir).then(async (a) => {
      const threads = proverThreads(options.threads, "cores");
      if (tables.tableCache !== undefined && options.waitForTables !== true) {
        const file = await cachedTablesPath(a.zkey, tables.tableCache);
        if (!existsSync(file) && buildTablesInBackground(depth, tables.tableCache, file, options.artifactsDir)) {
          entry.tables = file;
          return createProver({ zkey: a.zkey, wasm: a.wasm }, { precompute: false });
        }
      }
      return createProver({ zkey: a.zkey, wasm: a.wasm }, { ...tables, threads });
    });
    provers.set(key, entry);
    // A failed load is not kept: the next call reads the files again.
    entry.prover.catch(() => provers.delete(key));
    held = entry;
  }
  return held.prover;
}
