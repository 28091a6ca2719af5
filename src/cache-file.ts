// The rules every on-disk cache of the agent follows (prover tables, group
// trees, downloaded Semaphore artifacts): where it lives, and how a file is
// written so that agents running side by side never read half a file or a
// file another user planted. Reading and checking stay with each cache: what
// makes a file trustworthy is its own header and hash.
import { randomUUID } from "node:crypto";
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/** `$XDG_CACHE_HOME/zkagent/<name>`, or `~/.cache/zkagent/<name>` when that is unset or not absolute (the XDG base directory rule). */
export function cacheDir(name: string, env: Record<string, string | undefined> = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), ".cache"), "zkagent", name);
}

/**
 * Writes `parts` as the file `path` in `dir` (created 0700): under a name of
 * its own (O_EXCL: no other writer holds it, no planted link is followed),
 * 0600, then renamed into place, so a concurrent reader sees the old file or
 * the whole new one. False when it could not be written (read-only or full
 * disk): a cache that cannot be written costs rebuilding, nothing else.
 */
export function writeCacheFile(dir: string, path: string, parts: readonly Uint8Array[]): boolean {
  const tmp = `${path}.${randomUUID()}.tmp`;
  let fd: number | undefined;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    for (const part of parts) {
      let at = 0;
      while (at < part.length) at += writeSync(fd, part, at, part.length - at);
    }
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, path);
    return true;
  } catch {
    try {
      if (fd !== undefined) closeSync(fd);
      rmSync(tmp, { force: true });
    } catch {
      // a stray .tmp file is never read
    }
    return false;
  }
}

/**
 * The bytes of `path` if it is a regular file of at most `maxBytes` — opened
 * without following a link and without waiting on a FIFO — else why not
 * ("none" when there is no such file).
 */
export function readCacheFile(path: string, maxBytes: number): Uint8Array | string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? "none" : `cannot be opened (${code})`;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return "not a regular file";
    if (stat.size > maxBytes) return `larger than ${maxBytes} bytes`;
    const bytes = new Uint8Array(stat.size);
    let offset = 0;
    while (offset < bytes.length) {
      const read = readSync(fd, bytes, offset, bytes.length - offset, offset);
      if (read === 0) return "shrank while it was read"; // another writer's file replaced it
      offset += read;
    }
    return bytes;
  } catch (error) {
    return `cannot be read (${(error as Error).message})`;
  } finally {
    closeSync(fd);
  }
}
