// Where a file imported `with { type: "file" }` is, as a path readFile and
// Bun.file take. Under `bun run` and in the compiled binary the import is an
// absolute path (on disk, or $bunfs); a bundle (the npm packages of
// scripts/pack.ts, for Node or for Bun) makes it relative to the bundle's own
// file, which is not the working directory. The caller passes its own
// import.meta.url: the bundle that holds the import.
import { fileURLToPath } from "node:url";

export const bundledFilePath = (path: string, importMetaUrl: string): string => (path.startsWith(".") ? fileURLToPath(new URL(path, importMetaUrl)) : path);
