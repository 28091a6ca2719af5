// Where a worker thread's module is, seen from the module that starts it.
// The same source runs three ways, and the thread's file sits differently in
// each: from the sources it is the starter's neighbour (`thread-main.ts`);
// compiled into the binary (scripts/build.ts adds it as an entry point) every
// module's URL is the binary's root, under which entry points keep their
// paths below src/ (`groups/thread-main.ts`); bundled into a package
// (scripts/pack.ts, also an entry point) it is `dist/<dir>/<name>.js` while
// the starter sits in a chunk one level down or at dist/ itself.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The URL of the thread module `src/<dir>/<name>.ts` for a starter whose own URL is `from` (its import.meta.url) and source file `src/<dir>/<starter>`. */
export function threadModule(from: string, dir: string, starter: string, name: string): string {
  if (from.endsWith(`/${dir}/${starter}`)) return new URL(`./${name}.ts`, from).href;
  if (from.startsWith("file:")) {
    for (const candidate of [`./${dir}/${name}.js`, `../${dir}/${name}.js`]) {
      const url = new URL(candidate, from);
      if (existsSync(fileURLToPath(url))) return url.href;
    }
  }
  return new URL(`./${dir}/${name}.ts`, from).href;
}
