// The cap on unexpired pending challenges per key (issue 5: abuse limits).
import { expect, test } from "bun:test";
import { createApp } from "../../../src/app";
import { observed } from "../../support/contract";
import { createHarness } from "../../support/harness";

async function cappedHarness(maxPendingPerKey: number) {
  const h = await createHarness();
  const app = observed(createApp({ ...h.deps, limits: { maxPendingPerKey } }));
  const create = async (key: string) =>
    app.handle(
      new Request("http://zkagent.test/v1/verify/challenge", {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ agent_id: "a", action: "purchase" }),
      }),
    );
  return { h, create };
}

test("an unlimited key stops at the cap with 429, and may go on once challenges expire", async () => {
  const { h, create } = await cappedHarness(3);
  const key = await h.newKey("unlimited", 0);
  for (let i = 0; i < 3; i++) expect((await create(key)).status).toBe(200);
  const refused = await create(key);
  expect(refused.status).toBe(429);
  expect(((await refused.json()) as any).error).toBe("Too many pending challenges");
  expect(refused.headers.get("retry-after")).toBe("300");
  expect((await h.store.usage((await h.store.listKeys())[0]!.id))!.challenges).toBe(3);
  h.clock.advance(300_001);
  expect((await create(key)).status).toBe(200);
});

test("the cap counts only the calling key's challenges", async () => {
  const { h, create } = await cappedHarness(2);
  const a = await h.newKey("a", 0);
  const b = await h.newKey("b", 0);
  expect((await create(a)).status).toBe(200);
  expect((await create(a)).status).toBe(200);
  expect((await create(a)).status).toBe(429);
  expect((await create(b)).status).toBe(200);
});

test("issue 11: a 300 s lifetime spans six one-minute windows; rate × 5 = cap does not keep a key under it", async () => {
  // 2/min, cap 10: created late in the first window, challenges are still
  // pending in the sixth, so 6 × 2 = 12 could be pending at once.
  const { h, create } = await cappedHarness(10);
  const key = await h.newKey("fast", 2);
  h.clock.advance(59_000);
  for (let window = 0; window < 5; window++) {
    expect([(await create(key)).status, (await create(key)).status]).toEqual([200, 200]);
    h.clock.advance(60_000);
  }
  // t = 359 s: the first two (expiring at exactly 359 s) are still pending; 10 are.
  expect(await h.store.countPending(h.clock.now())).toBe(10);
  const refused = await create(key);
  expect(refused.status).toBe(429);
  expect(((await refused.json()) as any).error).toBe("Too many pending challenges");
  expect(await h.store.countPending(h.clock.now())).toBe(10);
});

test("a key whose rate limit cannot reach the cap is not counted", async () => {
  // 1/min × 6 windows = 6 ≤ cap 6: the cap can never bind, so only the rate limit answers.
  const { h, create } = await cappedHarness(6);
  const key = await h.newKey("slow", 1);
  expect((await create(key)).status).toBe(200);
  const second = await create(key);
  expect(second.status).toBe(429);
  expect(((await second.json()) as any).error).toBe("Rate limit exceeded");
});

test("the server takes the cap from MAX_PENDING_PER_KEY", async () => {
  const { mkdtempSync, rmSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { tmpdir } = await import("node:os");
  const { loadConfig } = await import("../../../src/config");
  const { startServer } = await import("../../../src/main");
  const { openSqlite } = await import("../../../src/store/sqlite");
  const { createKey } = await import("../../../src/modules/keys/service");
  const { systemClock } = await import("../../../src/clock");

  const dir = mkdtempSync(join(tmpdir(), "zkagent-cap-"));
  const databaseUrl = join(dir, "db.sqlite");
  const store = openSqlite(databaseUrl);
  const { key } = await createKey(store, systemClock, "cap", 0);
  await store.close();
  const config = loadConfig({ DATABASE_URL: databaseUrl, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", MAX_PENDING_PER_KEY: "2" });
  const server = await startServer(config, { bootstrap: false });
  try {
    const create = () =>
      fetch(`${server.url}/v1/verify/challenge`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ agent_id: "a", action: "purchase" }),
      }).then((r) => r.status);
    expect([await create(), await create(), await create()]).toEqual([200, 200, 429]);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
