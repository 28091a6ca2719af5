// Issue 11, item 11: /metrics is public and scraped in loops; it must not
// scan every tenant's pending challenges per scrape, and it can be closed
// with a bearer token from the configuration (METRICS_TOKEN).
import { expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { observed } from "../support/contract";
import type { Store } from "../../src/store/interface";
import { BASE, createHarness } from "../support/harness";
import { samples } from "./exposition";

/** A store that counts countPending calls over all keys (the gauge's; the pending cap counts one key). */
function counting(store: Store) {
  const calls = { countPending: 0 };
  const proxy = new Proxy(store, {
    get(target, name, receiver) {
      if (name === "countPending") return (now: number, keyId?: string) => (keyId === undefined && calls.countPending++, target.countPending(now, keyId));
      const value = Reflect.get(target, name, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: proxy as Store, calls };
}

test("eight concurrent scrape loops cost one COUNT per refresh interval, and the gauge still moves", async () => {
  const base = await createHarness();
  const { store, calls } = counting(base.store);
  const h = await createHarness(store);
  const key = await h.newKey("m", 0);
  for (let i = 0; i < 3; i++) await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "a", action: "b" } });
  const scrape = async () => samples((await h.call("GET", "/metrics")).body as string).get("zkagent_challenges_pending");
  const first = await Promise.all(Array.from({ length: 8 }, scrape));
  for (let round = 0; round < 5; round++) expect(await Promise.all(Array.from({ length: 8 }, scrape))).toEqual(Array(8).fill(3));
  expect(first).toEqual(Array(8).fill(3));
  expect(calls.countPending).toBe(1);
  // After the refresh interval the next scrape counts again and sees the new value.
  await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "a", action: "b" } });
  h.clock.advance(15_000);
  expect(await scrape()).toBe(4);
  expect(calls.countPending).toBe(2);
});

test("with a metrics token: 401 without it or with another, 200 with Authorization: Bearer <token>", async () => {
  const h = await createHarness();
  const app = observed(createApp({ ...h.deps, metricsToken: "s3cret-token" }));
  const get = (authorization?: string) => app.handle(new Request(`${BASE}/metrics`, { headers: authorization ? { authorization } : {} }));
  const anonymous = await get();
  expect(anonymous.status).toBe(401);
  expect(anonymous.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
  expect(((await anonymous.json()) as any).error).toBe("Metrics token required");
  for (const wrong of ["Bearer wrong", "Bearer s3cret-token-", "Basic s3cret-token", "s3cret-token", "Bearer "]) expect((await get(wrong)).status).toBe(401);
  const ok = await get("Bearer s3cret-token");
  expect(ok.status).toBe(200);
  expect(await ok.text()).toContain("zkagent_http_requests_total");
  // The probes stay open: an orchestrator carries no token.
  expect((await app.handle(new Request(`${BASE}/health`))).status).toBe(200);
  expect((await app.handle(new Request(`${BASE}/ready`))).status).toBe(200);
});
