// An in-process service for HTTP tests: app.handle(new Request(…)), no port.
import { createApp } from "../../src/app";
import { ManualClock } from "../../src/clock";
import type { AppDeps } from "../../src/deps";
import { silentLogger } from "../../src/log";
import { createKey } from "../../src/modules/keys/service";
import { openSqlite } from "../../src/store/sqlite";
import type { Store } from "../../src/store/interface";
import { serviceVerifier } from "../../src/verifier/service";

export const BASE = "http://zkagent.test";

export interface Harness {
  app: ReturnType<typeof createApp>;
  store: Store;
  clock: ManualClock;
  deps: AppDeps;
  newKey(name?: string, rateLimit?: number): Promise<string>;
  call(method: string, path: string, options?: { key?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; body: any; headers: Headers }>;
}

export async function createHarness(store: Store = openSqlite(":memory:")): Promise<Harness> {
  const clock = new ManualClock();
  const deps: AppDeps = { store, clock, verifier: await serviceVerifier(), logger: silentLogger };
  const app = createApp(deps);
  return {
    app,
    store,
    clock,
    deps,
    newKey: async (name = "test", rateLimit = 0) => (await createKey(store, clock, name, rateLimit)).key,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.key) headers["x-api-key"] = options.key;
      let body: string | undefined;
      if (options.body !== undefined) {
        body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
        headers["content-type"] ??= "application/json";
      }
      const response = await app.handle(new Request(BASE + path, { method, headers, body }));
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      return { status: response.status, body: parsed, headers: response.headers };
    },
  };
}
