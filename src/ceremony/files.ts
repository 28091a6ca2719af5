// A ceremony directory is hostile input (issue 23): it comes from the previous
// participant, who may have left a symlink where the next step writes
// (transcript.json.tmp → ~/project/package.json), a FIFO where it reads (a
// read that never returns) or a device behind a link. Before anything is
// read or written the whole directory is walked with lstat: only regular
// files and directories, or the step is refused. Reads then open without
// following links, check the opened file's type and size, and read at most
// the file's limit. Writes go to a fresh temporary directory inside it,
// created exclusively (O_EXCL), and are renamed into place: a rename replaces
// a name, it never writes through a link.
import { constants } from "node:fs";
import { lstat, mkdtemp, open, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CEREMONY_FILES, type CeremonyFile } from "../circuits/shipped";

export class CeremonyDirError extends Error {}

import { CEREMONY_FILE_LIMITS } from "./limits";

export { CEREMONY_FILE_LIMITS };

const kindOf = (stats: { isSymbolicLink(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }) =>
  stats.isSymbolicLink()
    ? "a symbolic link"
    : stats.isFIFO()
      ? "a FIFO"
      : stats.isSocket()
        ? "a socket"
        : stats.isCharacterDevice() || stats.isBlockDevice()
          ? "a device"
          : "not a regular file";

/** File names by role: the agent circuit's unless a ceremony for another circuit names its own (src/ceremony/circuits.ts). */
export type CeremonyFileNames = Readonly<Record<CeremonyFile, string>>;

/** Refuses `dir` unless it and everything in it are regular files and directories, and its known files are within their limits. */
export async function checkCeremonyDir(dir: string, names: CeremonyFileNames = CEREMONY_FILES): Promise<void> {
  const top = await lstat(dir).catch((error: NodeJS.ErrnoException) => {
    throw new CeremonyDirError(`${dir}: ${error.code ?? error.message}`);
  });
  if (!top.isDirectory()) throw new CeremonyDirError(`${dir} is ${top.isSymbolicLink() ? "a symbolic link" : "not a directory"}: refused`);
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      const stats = await lstat(path);
      if (stats.isDirectory()) await walk(path);
      else if (!stats.isFile()) throw new CeremonyDirError(`${path} is ${kindOf(stats)}: a ceremony directory holds regular files only, refused`);
    }
  };
  await walk(dir);
  for (const [file, name] of Object.entries(names) as [CeremonyFile, string][]) {
    const stats = await lstat(join(dir, name)).catch(() => null);
    if (stats && stats.size > CEREMONY_FILE_LIMITS[file]) {
      throw new CeremonyDirError(`${join(dir, name)} is ${stats.size} bytes, more than the ${CEREMONY_FILE_LIMITS[file]} accepted: refused`);
    }
  }
}

/** One file of a ceremony directory: not through a link, a regular file, at most its limit. */
export async function readCeremonyFile(dir: string, file: CeremonyFile, names: CeremonyFileNames = CEREMONY_FILES): Promise<Uint8Array> {
  const path = join(dir, names[file]);
  const limit = CEREMONY_FILE_LIMITS[file];
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // O_NONBLOCK: opening a FIFO returns at once (and it is refused below) instead of waiting for a writer.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CeremonyDirError(code === "ELOOP" ? `${path} is a symbolic link: refused` : `${path}: ${code ?? (error as Error).message}`);
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new CeremonyDirError(`${path} is ${kindOf(stats)}: refused`);
    if (stats.size > limit) throw new CeremonyDirError(`${path} is ${stats.size} bytes, more than the ${limit} accepted: refused`);
    const bytes = new Uint8Array(stats.size);
    let at = 0;
    while (at < bytes.length) {
      const { bytesRead } = await handle.read(bytes, at, bytes.length - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return bytes.subarray(0, at);
  } finally {
    await handle.close();
  }
}

/**
 * A fresh temporary directory inside `dir` (mkdtemp: a new name, created
 * exclusively) for one step's outputs. `write` creates files in it with
 * O_EXCL; `commit` renames them into `dir`; `discard` removes what is left.
 */
export async function stepArea(dir: string, names: CeremonyFileNames = CEREMONY_FILES) {
  const area = await mkdtemp(join(dir, ".zkagent-step-"));
  const written: CeremonyFile[] = [];
  return {
    /** A path in the area for a tool that writes its own output file (snarkjs). */
    path: (name: string) => join(area, name),
    async write(file: CeremonyFile, data: Uint8Array | string): Promise<void> {
      await writeFile(join(area, names[file]), data, { flag: "wx" });
      written.push(file);
    },
    /** Counts a file a tool wrote at path(its name) as written. */
    async adopt(file: CeremonyFile): Promise<void> {
      const stats = await lstat(join(area, names[file]));
      if (!stats.isFile()) throw new CeremonyDirError(`${file}: the step wrote no regular file`);
      written.push(file);
    },
    /** Renames the written files into `dir`, the transcript last: an interrupted commit leaves the transcript of the last whole step. */
    async commit(): Promise<void> {
      const order = [...written.filter((f) => f !== "transcript"), ...written.filter((f) => f === "transcript")];
      for (const file of order) await rename(join(area, names[file]), join(dir, names[file]));
      await rm(area, { recursive: true, force: true });
    },
    discard: () => rm(area, { recursive: true, force: true }),
  };
}
