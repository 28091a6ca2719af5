// The window tables' disk cache (ProverOptions.tableCache). Building the
// tables is nearly all of createProver's time (≈ 255 doublings per base: ≈ 6 s
// for Semaphore at depth 20 on a quiet core) and their content depends only on
// the zkey's points, the window widths and the module's number form, so a
// process that has built them once writes them to
//   <dir>/<SHA-256 of the zkey>.<first 16 hex of the module's SHA-256>.tables
// and the next process copies them straight into its module's memory.
//
// Checked on read, like the circuit cache (src/agent/circuit.ts): the file
// names the zkey and module digests it was built for, and the SHA-256 of its
// tables, recomputed on every read; sizes must be what the module allocates
// for the key. Anything else — missing, truncated, edited, another module —
// and the tables are built again and the file rewritten. Only a regular file
// is read (opened without following a link and without blocking, so a FIFO
// planted there is refused, not waited on), and no larger than MAX_BYTES.
//
// Several processes may share the directory (one agent per shell): it is
// created 0700, and each writer puts its file under a name of its own
// (O_EXCL, 0600) and renames it into place, so a reader sees either a whole
// file or none, and two writers cannot interleave their bytes. A table altered so that its hash still matched (someone who can
// write the cache directory can also rewrite its hash) would give proofs that
// do not verify: the self-check before a proof leaves (assembly/prover.ts)
// refuses them, and the prover then drops the file, builds the tables again
// and retries the proof once (createProver's CacheCheckedProver), so a bad
// cache costs one table build, never a wrong proof.
//
// Layout: one JSON line (the header below) ‖ "\n" ‖ the tables of the sets
// A, B1, B2, C, H one after the other, in the module's memory form.
import { randomUUID } from "node:crypto";
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "./wasm";

const FORMAT = "zkagent-prover-tables/1";
/** The largest file read: Semaphore depth 32's tables are 76.8 MB (its point counts and chosen windows); a larger file is none of ours. */
export const MAX_BYTES = 512 * 1024 * 1024;

interface Header {
  format: typeof FORMAT;
  zkey: string;
  module: string;
  /** Per base set (BaseSet order): the window width and the table's bytes. */
  windows: number[];
  sizes: number[];
  /** SHA-256 of everything after the header line. */
  tables: string;
}

export interface CachedTables {
  windows: number[];
  sizes: number[];
  /** The tables, set after set. */
  payload: Uint8Array;
}

export function tablesPath(dir: string, zkeyDigest: string, moduleDigest: string): string {
  return join(dir, `${zkeyDigest}.${moduleDigest.slice(0, 16)}.tables`);
}

/** The cached tables for this zkey and module, or undefined when there are none or they fail a check. */
export function readTables(path: string, zkeyDigest: string, moduleDigest: string, sets: number): CachedTables | undefined {
  const bytes = readRegularFile(path);
  if (!bytes) return undefined;
  const newline = bytes.indexOf(10);
  if (newline < 0) return undefined;
  let header: Header;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(0, newline)));
  } catch {
    return undefined;
  }
  const payload = bytes.subarray(newline + 1);
  const ints = (a: unknown) => Array.isArray(a) && a.length === sets && a.every((x) => Number.isSafeInteger(x) && x >= 0);
  if (header.format !== FORMAT || header.zkey !== zkeyDigest || header.module !== moduleDigest) return undefined;
  if (!ints(header.windows) || !ints(header.sizes)) return undefined;
  if (header.sizes.reduce((a, b) => a + b, 0) !== payload.length || sha256Hex(payload) !== header.tables) return undefined;
  return { windows: header.windows, sizes: header.sizes, payload };
}

/** The file's bytes if it is a regular file of at most MAX_BYTES (not a link, FIFO or device), else undefined. */
function readRegularFile(path: string): Uint8Array | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_BYTES) return undefined;
    const bytes = new Uint8Array(stat.size);
    let offset = 0;
    while (offset < bytes.length) {
      const read = readSync(fd, bytes, offset, bytes.length - offset, offset);
      if (read === 0) return undefined; // shrank while read: another writer's file replaced it
      offset += read;
    }
    return bytes;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Writes the tables (best effort: a directory that cannot be written only means no cache). */
export function writeTables(path: string, dir: string, zkeyDigest: string, moduleDigest: string, windows: number[], tables: Uint8Array[]): void {
  const sizes = tables.map((t) => t.length);
  const payload = new Uint8Array(sizes.reduce((a, b) => a + b, 0));
  let at = 0;
  for (const t of tables) {
    payload.set(t, at);
    at += t.length;
  }
  const header: Header = { format: FORMAT, zkey: zkeyDigest, module: moduleDigest, windows, sizes, tables: sha256Hex(payload) };
  const line = new TextEncoder().encode(`${JSON.stringify(header)}\n`);
  const tmp = `${path}.${randomUUID()}.tmp`;
  let fd: number | undefined;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // O_EXCL: a name no other writer holds (nor a link planted there to follow).
    fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    for (const part of [line, payload]) {
      let at = 0;
      while (at < part.length) at += writeSync(fd, part, at, part.length - at);
    }
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch {
    // read-only or full disk: the next createProver builds the tables again
    try {
      if (fd !== undefined) closeSync(fd);
      rmSync(tmp, { force: true });
    } catch {
      // nothing more to do: a stray .tmp file is never read
    }
  }
}
