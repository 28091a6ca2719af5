// An in-process service for HTTP tests: app.handle(new Request(…)), no port.
import { expect } from "bun:test";
import { createApp } from "../../src/app";
import { ManualClock } from "../../src/clock";
import type { AppDeps } from "../../src/deps";
import { silentLogger } from "../../src/log";
import { createKey } from "../../src/modules/keys/service";
import { openSqlite } from "../../src/store/sqlite";
import type { Store } from "../../src/store/interface";
import { serviceVerifier } from "../../src/verifier/service";
import { observed } from "./contract";

export const BASE = "http://zkagent.test";

export interface Harness {
  app: ReturnType<typeof createApp>;
  store: Store;
  clock: ManualClock;
  deps: AppDeps;
  newKey(name?: string, rateLimit?: number): Promise<string>;
  call(
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Headers }>;
}

export async function createHarness(store: Store = openSqlite(":memory:"), overrides: Partial<AppDeps> = {}): Promise<Harness> {
  const clock = new ManualClock();
  const deps: AppDeps = { store, clock, verifier: await serviceVerifier(), logger: silentLogger, ...overrides };
  // Every answer a test receives is checked against the OpenAPI document (support/contract.ts).
  const app = observed(createApp(deps));
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
      return { status: response.status, body: withoutRequestId(response, await response.text()), headers: response.headers };
    },
  };
}

/**
 * The JSON body (or the text when it is not JSON). Every error body carries
 * `request_id`, equal to the x-request-id header: checked here for every
 * response the tests read, then removed, so that tests state the rest of
 * the body exactly.
 */
export function withoutRequestId(response: Response, text: string): any {
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  if (response.status >= 400 && typeof parsed === "object" && parsed !== null && typeof parsed.error === "string") {
    expect(parsed.request_id).toBe(response.headers.get("x-request-id")!);
    delete parsed.request_id;
  }
  return parsed;
}

/** Response.json() for a raw app.handle answer, with the request id checked and removed as above. */
export const errorJson = async (response: Response) => withoutRequestId(response, await response.text());
