// GET /ready answers 503 naming the failing check.
import { expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { observed } from "../support/contract";
import { ManualClock } from "../../src/clock";
import { silentLogger } from "../../src/log";
import { DATABASE_CHECK_TIMEOUT_MS, Lifecycle } from "../../src/lifecycle";
import { openSqlite } from "../../src/store/sqlite";
import type { Store } from "../../src/store/interface";

const verifier = { verify: () => ({ ok: true as const }) };

async function ready(store: Store, lifecycle: Lifecycle) {
  const app = observed(createApp({ store, clock: new ManualClock(), verifier, logger: silentLogger, lifecycle }));
  const res = await app.handle(new Request("http://zkagent.test/ready"));
  return { status: res.status, body: (await res.json()) as any };
}

const loaded = () => Object.assign(new Lifecycle(), { verifierLoaded: true });

test("draining: 503 with failing=draining, other checks still reported", async () => {
  const lifecycle = loaded();
  lifecycle.draining = true;
  const res = await ready(openSqlite(":memory:"), lifecycle);
  expect(res).toEqual({ status: 503, body: { status: "not_ready", failing: "draining", checks: { database: "ok", verifier: "ok", draining: "fail" } } });
});

test("verifier not loaded: 503 with failing=verifier", async () => {
  const res = await ready(openSqlite(":memory:"), new Lifecycle());
  expect(res.status).toBe(503);
  expect(res.body.failing).toBe("verifier");
});

test("database closed: 503 with failing=database", async () => {
  const store = openSqlite(":memory:");
  await store.close();
  const res = await ready(store, loaded());
  expect(res.status).toBe(503);
  expect(res.body).toMatchObject({ failing: "database", checks: { database: "fail" } });
});

test("a database that hangs fails the check within its timeout instead of hanging the probe", async () => {
  const store = openSqlite(":memory:");
  const hung = new Proxy(store, { get: (target, name) => (name === "ping" ? () => new Promise(() => {}) : Reflect.get(target, name)) });
  const started = performance.now();
  const res = await ready(hung, loaded());
  expect(res.body.failing).toBe("database");
  expect(performance.now() - started).toBeLessThan(DATABASE_CHECK_TIMEOUT_MS + 1000);
});
