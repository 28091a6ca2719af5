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
import { readCacheFile, writeCacheFile } from "../cache-file";

const asBytes = (read: Uint8Array | string): Uint8Array | undefined => (typeof read === "string" ? undefined : read);
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
  const bytes = asBytes(readCacheFile(path, MAX_BYTES));
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
  // read-only or full disk: the next createProver builds the tables again
  writeCacheFile(dir, path, [line, payload]);
}
