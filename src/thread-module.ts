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

/** How long a thread may take to load its module and answer `{ready: true}`. */
const START_TIMEOUT_MS = 30_000;

/**
 * Starts a Worker on `module` and sends it `init`. The worker is returned at
 * once (messages posted before it is ready wait in its queue); `started`
 * settles when it answers `{ready: true}`, or fails when it errs or stays
 * silent for START_TIMEOUT_MS. After that, its other messages go to
 * `message`, and an error to `died` (the owner restarts it). The thread alone
 * does not keep the process alive.
 */
export function spawnThread<T>(
  module: string,
  what: string,
  init: unknown,
  handlers: { message(data: T): void; died(error: Error): void },
): { worker: Worker; started: Promise<void> } {
  const worker = new Worker(module);
  const started = new Promise<void>((ready, failed) => {
    let up = false;
    const timer = setTimeout(() => {
      worker.terminate();
      failed(new Error(`${what} did not start within ${START_TIMEOUT_MS / 1000} s (${module})`));
    }, START_TIMEOUT_MS);
    worker.onmessage = (event: MessageEvent<T & { ready?: true }>) => {
      if (!up && event.data.ready) {
        up = true;
        clearTimeout(timer);
        return ready();
      }
      handlers.message(event.data);
    };
    worker.onerror = (event) => {
      if (up) return handlers.died(new Error(`${what} died: ${event.message}`));
      clearTimeout(timer);
      failed(new Error(`${what} failed to start: ${event.message}`));
    };
  });
  (worker as Worker & { unref(): void }).unref();
  worker.postMessage(init);
  return { worker, started };
}
