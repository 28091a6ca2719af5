// Where the agent keeps the group trees it synced (issue 32), one file per
// (zkagent service origin, group id), so that a later process fetches only
// the changes since the version it holds instead of every leaf, and hashes
// only what changed:
//   $XDG_CACHE_HOME/zkagent/group-trees/<SHA-256 of origin ‖ "\n" ‖ group id>.tree
//
// The rules are the prover tables' (src/prover/tables.ts): the directory is
// created 0700; a writer puts its file under a name of its own (O_EXCL, 0600,
// no link followed) and renames it into place, so a reader sees a whole file
// or none; only a regular file, opened without following a link and without
// blocking, and no larger than MAX_BYTES is read. Checked on every read: the
// header names the format, the service, the group, the version, the size and
// the root, and the SHA-256 of the levels that follow; the top level must be
// that root. Anything else and the file is dropped and the group synced from
// version 0. A file altered so that every check still passes (whoever can
// write the directory can recompute the hash) gains nothing: the synced root
// must be the one the service serves, and the path a proof uses is hashed up
// to the root it proves against before the proof is made (src/agent/group/proof.ts).
//
// What it hides: nothing beyond the machine (0700/0600; the tree is public,
// the file names no member). What it reveals, to whoever reads the
// directory: which groups of which services this user proves for.
//
// Layout: one JSON line (the header below) ‖ "\n" ‖ every level's nodes,
// leaves first, 32 bytes each, big-endian (LeanTree.payload()).
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { cacheDir, readCacheFile, writeCacheFile } from "../../cache-file";
import { LeanTree } from "../../groups/lean-tree";

const FORMAT = "zkagent-group-tree/1";
/** 2^21 leaves (the SDK's default bound) take 128 MiB over all levels; a larger file is none of ours. */
export const MAX_TREE_FILE_BYTES = 160 << 20;

interface Header {
  format: typeof FORMAT;
  service: string;
  group: string;
  version: number;
  size: number;
  /** Decimal ("0" for an empty tree). */
  root: string;
  /** SHA-256 (hex) of everything after the header line. */
  content: string;
}

/** $XDG_CACHE_HOME/zkagent/group-trees, or ~/.cache/zkagent/group-trees (the prover tables' rule). */
export const defaultTreeCacheDir = (env: Record<string, string | undefined> = process.env): string => cacheDir("group-trees", env);

export function treePath(dir: string, service: string, group: string): string {
  return join(dir, `${createHash("sha256").update(`${service}\n${group}`).digest("hex")}.tree`);
}

export interface CachedTree {
  tree: LeanTree;
  version: number;
}

/** Why the file at `path` is not a usable tree of (service, group), or the tree. Missing: "none". */
export function readTree(path: string, service: string, group: string): CachedTree | { problem: string } {
  const bytes = readCacheFile(path, MAX_TREE_FILE_BYTES);
  if (typeof bytes === "string") return { problem: bytes };
  const newline = bytes.indexOf(10);
  if (newline < 0) return { problem: "no header line" };
  let header: Header;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(0, newline)));
  } catch {
    return { problem: "the header is not JSON" };
  }
  if (typeof header !== "object" || header === null || header.format !== FORMAT) return { problem: "not a zkagent group tree" };
  if (header.service !== service || header.group !== group) return { problem: "the tree of another service or group" };
  if (!Number.isSafeInteger(header.version) || header.version < 0) return { problem: "no version" };
  const payload = bytes.subarray(newline + 1);
  if (createHash("sha256").update(payload).digest("hex") !== header.content) return { problem: "its content does not have the hash its header names" };
  const tree = LeanTree.fromPayload(header.size, payload);
  if (!tree) return { problem: "its levels do not have the size its header names" };
  if (tree.root.toString() !== header.root) return { problem: "its top node is not the root its header names" };
  return { tree, version: header.version };
}

/** Drops a file that failed a check (best effort). */
export function dropTree(path: string): void {
  try {
    rmSync(path, { force: true });
  } catch {
    // a file that cannot be removed is read, refused and resynced again next time
  }
}

/** Writes the tree at `version` (best effort: a directory that cannot be written only means the next process syncs from 0). */
export function writeTree(dir: string, path: string, service: string, group: string, version: number, tree: LeanTree): void {
  const parts = tree.payload();
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  const header: Header = { format: FORMAT, service, group, version, size: tree.size, root: tree.root.toString(), content: hash.digest("hex") };
  writeCacheFile(dir, path, [new TextEncoder().encode(`${JSON.stringify(header)}\n`), ...parts]);
}
