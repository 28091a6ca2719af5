// Issue 27, faults: a receiver down for 30 s gets every event once it is
// back; a dead endpoint of one key does not delay another key's deliveries;
// two PostgreSQL nodes delivering from one outbox never send one event at
// the same time.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import type { Clock } from "../../src/clock";
import { systemClock } from "../../src/clock";
import { silentLogger } from "../../src/log";
import { openPostgres } from "../../src/store/postgres";
import { openSqlite } from "../../src/store/sqlite";
import type { ClaimedWebhookDelivery, Store } from "../../src/store/interface";
import { DeliveryWorker } from "../../src/webhooks/worker";
import { createTestDatabase, postgresTestUrl, type TestDatabase } from "../support/postgres";
import { keyIdOf } from "../modules/flow";
import { freePort } from "../reliability/support";
import { type Receiver, startReceiver, until } from "./receiver";
import { type Answer, decideOne, percentile, registerAgents, registerEndpoint, type Service, startService } from "./support";

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Real time sped up `factor` times: the default backoff schedule, run against a 30 s outage in 30/factor s. */
function fastClock(factor: number): Clock {
  const start = Date.now();
  const t0 = performance.now();
  return { now: () => Math.round(start + (performance.now() - t0) * factor) };
}

async function service(store: Store, clock: Clock, options: Parameters<typeof startService>[2] = {}): Promise<Service> {
  const s = await startService(store, clock, options);
  cleanups.push(() => s.worker.stop());
  return s;
}
function receiver(options: Parameters<typeof startReceiver>[0] = {}): Receiver {
  const r = startReceiver(options);
  cleanups.push(() => r.stop());
  return r;
}

describe("webhook faults", () => {
  test("the receiver down for 30 s (connection refused), then back: every event arrives, within a minute of its return, on the default schedule", async () => {
    const FACTOR = 10; // 30 s of service time in 3 s of test time
    const clock = fastClock(FACTOR);
    const { h } = await service(openSqlite(":memory:"), clock, { pollMs: 50 });
    const r = receiver();
    const key = await h.newKey("outage");
    r.secrets.push((await registerEndpoint(h, key, r.url)).secret);
    await registerAgents(h, key);

    r.stop(); // down
    const downAt = clock.now();
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => decideOne(h, key, i % 2 ? "failed" : "verified")));
    while (clock.now() - downAt < 30_000) await Bun.sleep(20);
    const failedWhileDown = await h.store.listWebhookDeliveries({ state: "pending", limit: 100 });
    expect(failedWhileDown).toHaveLength(30);
    // Each was tried and refused more than once during the outage (2 s, 4 s, 8 s, 16 s … with jitter).
    for (const d of failedWhileDown) expect(d.attempts).toBeGreaterThanOrEqual(2);
    expect(failedWhileDown[0]!.lastError).toMatch(/ECONNREFUSED|refused|Unable to connect/i);

    r.restart();
    const backAt = clock.now();
    await until(() => r.ids().size >= 30, 10_000, "30 events after the receiver's return");
    const lastArrival = Math.max(...r.log.map((x) => x.at));
    const afterReturnMs = (lastArrival - Date.now()) * FACTOR + (clock.now() - backAt);
    console.log(`[webhooks outage] all 30 events within ${(afterReturnMs / 1000).toFixed(1)} s (service time) of the receiver's return`);
    expect(afterReturnMs).toBeLessThan(60_000);
    expect(new Set(r.log.map((x) => x.body.data.session_id))).toEqual(new Set(answers.map((a) => a.sessionId)));
    expect(r.log.every((x) => x.valid)).toBe(true);
  }, 30_000);

  test("key A's dead endpoints (one never answers, one refuses) do not delay key B's deliveries", async () => {
    const { h } = await service(openSqlite(":memory:"), systemClock, { timeoutMs: 2000, pollMs: 100 });
    const b = receiver();
    const silent = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
    cleanups.push(() => silent.stop(true));
    const refusing = await freePort();
    const healthy = receiver();
    const keyA = await h.newKey("A");
    const keyHealthy = await h.newKey("A-healthy");
    const keyB = await h.newKey("B");
    await registerEndpoint(h, keyA, `http://127.0.0.1:${silent.port}/never`);
    await registerEndpoint(h, keyA, `http://127.0.0.1:${refusing}/refused`);
    healthy.secrets.push((await registerEndpoint(h, keyHealthy, healthy.url)).secret);
    b.secrets.push((await registerEndpoint(h, keyB, b.url)).secret);
    for (const key of [keyA, keyHealthy, keyB]) await registerAgents(h, key);

    const arrival = (sessionId: string) => b.log.find((x) => x.body.data.session_id === sessionId)?.at;
    /** Key B's delivery latencies over `rounds` rounds of one B decision beside three of `other` (none: B alone). */
    const latencies = async (rounds: number, other: string | null) => {
      const answers: Answer[] = [];
      for (let i = 0; i < rounds; i++) {
        const [answer] = await Promise.all([
          decideOne(h, keyB, i % 2 ? "failed" : "verified"),
          ...(other ? [decideOne(h, other, "verified"), decideOne(h, other, "failed"), decideOne(h, other, "refused")] : []),
        ]);
        answers.push(answer!);
      }
      await until(() => answers.every((a) => arrival(a.sessionId) !== undefined), 10_000, "key B's events");
      return answers.map((a) => arrival(a.sessionId)! - a.at);
    };

    const alone = await latencies(40, null);
    const besideHealthy = await latencies(40, keyHealthy);
    const besideDead = await latencies(40, keyA);
    const a = await h.store.listWebhookDeliveries({ state: "pending", limit: 1000 });
    const figures = (xs: number[]) => `p50 ${percentile(xs, 50)} ms, p99 ${percentile(xs, 99)} ms`;
    console.log(
      `[webhooks isolation] key B delivery latency, 40 decisions each: alone ${figures(alone)}; beside key A with a healthy endpoint ${figures(besideHealthy)}; beside key A with ${a.length} deliveries to dead endpoints pending ${figures(besideDead)}`,
    );
    // Key A's deliveries are really stuck (none delivered), and key B's never waited for one of their 2 s timeouts.
    expect(a.length).toBeGreaterThanOrEqual(200);
    expect(a.every((d) => d.keyId === keyIdOf(keyA))).toBe(true);
    expect(percentile(besideDead, 99)).toBeLessThan(1000);
    expect(percentile(besideDead, 50)).toBeLessThan(250);
  }, 60_000);
});

describe("two PostgreSQL nodes, one outbox", () => {
  let db: TestDatabase | undefined;
  afterAll(async () => {
    await db?.drop();
  });

  test("200 events, every first attempt answered 500: all delivered, and no webhook-id ever in flight twice at once (receiver log)", async () => {
    db = await createTestDatabase(await postgresTestUrl());
    const stores = [await openPostgres(db.url, { poolSize: 4 }), await openPostgres(db.url, { poolSize: 4 })];
    cleanups.push(async () => {
      for (const store of stores) await store.close();
    });
    const node1 = await service(stores[0]!, systemClock);
    // The second node: its own store (connections) and worker on the same database.
    const claims = [0, 0];
    const counted = (store: Store, node: number) => {
      const claim = store.claimWebhookDeliveries.bind(store);
      store.claimWebhookDeliveries = async (c): Promise<ClaimedWebhookDelivery[]> => {
        const got = await claim(c);
        claims[node]! += got.length;
        return got;
      };
    };
    counted(stores[0]!, 0);
    counted(stores[1]!, 1);
    const schedule = { firstMs: 100, maxMs: 400, giveUpAfterMs: 60_000 };
    node1.worker.stop();
    const workers = stores.map(
      (store) =>
        new DeliveryWorker({
          store,
          clock: systemClock,
          logger: silentLogger,
          receipts: node1.receipts,
          allowPrivate: true,
          timeoutMs: 2000,
          pollMs: 20,
          schedule,
        }),
    );
    for (const w of workers) {
      w.start();
      cleanups.push(() => w.stop());
    }
    // Answers 500 to the first attempt of every event, so each is claimed again, by whichever node is first.
    const r = receiver({ delayMs: 15, failFirst: true });
    const { h } = node1;
    const key = await h.newKey("two-nodes");
    r.secrets.push((await registerEndpoint(h, key, r.url)).secret);
    await registerAgents(h, key);

    const answers: Answer[] = [];
    for (let i = 0; i < 200; i += 25)
      answers.push(...(await Promise.all(Array.from({ length: 25 }, (_, j) => decideOne(h, key, (["verified", "failed", "refused"] as const)[(i + j) % 3]!)))));
    await until(() => r.ids().size >= 200, 30_000, "200 events from two nodes");
    await Bun.sleep(300);
    console.log(`[webhooks two nodes] claims per node: ${claims.join(" / ")}; attempts received ${r.log.length}; overlapping deliveries ${r.overlaps.length}`);
    expect(r.overlaps).toEqual([]);
    expect(r.log.filter((x) => !x.valid)).toEqual([]);
    expect(claims[0]! + claims[1]!).toBeGreaterThanOrEqual(400); // each event: the refused first attempt, then the delivery
    expect(claims[0]).toBeGreaterThan(0);
    expect(claims[1]).toBeGreaterThan(0);
    expect(new Set(r.log.map((x) => x.body.data.session_id))).toEqual(new Set(answers.map((a) => a.sessionId)));
  }, 60_000);
});
