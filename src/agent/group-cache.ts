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
// to the root it proves against before the proof is made (src/agent/group.ts).
//
// Layout: one JSON line (the header below) ‖ "\n" ‖ every level's nodes,
// leaves first, 32 bytes each, big-endian (AgentTree.payload()).
import { createHash, randomUUID } from "node:crypto";
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { AgentTree } from "./group-tree";

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
export function defaultTreeCacheDir(env: Record<string, string | undefined> = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), ".cache"), "zkagent", "group-trees");
}

export function treePath(dir: string, service: string, group: string): string {
  return join(dir, `${createHash("sha256").update(`${service}\n${group}`).digest("hex")}.tree`);
}

export interface CachedTree {
  tree: AgentTree;
  version: number;
}

/** Why the file at `path` is not a usable tree of (service, group), or the tree. Missing: "none". */
export function readTree(path: string, service: string, group: string): CachedTree | { problem: string } {
  const bytes = readRegularFile(path);
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
  const tree = AgentTree.fromPayload(header.size, payload);
  if (!tree) return { problem: "its levels do not have the size its header names" };
  if (tree.root.toString() !== header.root) return { problem: "its top node is not the root its header names" };
  return { tree, version: header.version };
}

/** The file's bytes if it is a regular file of at most MAX_TREE_FILE_BYTES (not a link, FIFO or device), else why not. */
function readRegularFile(path: string): Uint8Array | string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "none" : `cannot be opened (${(error as NodeJS.ErrnoException).code})`;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return "not a regular file";
    if (stat.size > MAX_TREE_FILE_BYTES) return `larger than ${MAX_TREE_FILE_BYTES} bytes`;
    const bytes = new Uint8Array(stat.size);
    let offset = 0;
    while (offset < bytes.length) {
      const read = readSync(fd, bytes, offset, bytes.length - offset, offset);
      if (read === 0) return "shrank while it was read";
      offset += read;
    }
    return bytes;
  } catch (error) {
    return `cannot be read (${(error as Error).message})`;
  } finally {
    closeSync(fd);
  }
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
export function writeTree(dir: string, path: string, service: string, group: string, version: number, tree: AgentTree): void {
  const parts = tree.payload();
  const hash = createHash("sha256");
  for (const part of parts) hash.update(part);
  const header: Header = { format: FORMAT, service, group, version, size: tree.size, root: tree.root.toString(), content: hash.digest("hex") };
  const tmp = `${path}.${randomUUID()}.tmp`;
  let fd: number | undefined;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // O_EXCL: a name no other writer holds (nor a link planted there to follow).
    fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    for (const part of [new TextEncoder().encode(`${JSON.stringify(header)}\n`), ...parts]) {
      let at = 0;
      while (at < part.length) at += writeSync(fd, part, at, part.length - at);
    }
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
  } catch {
    try {
      if (fd !== undefined) closeSync(fd);
      rmSync(tmp, { force: true });
    } catch {
      // a stray .tmp file is never read
    }
  }
}
