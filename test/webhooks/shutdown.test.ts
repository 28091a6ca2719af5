// A graceful stop of the delivery worker (main.ts calls it as SIGTERM's
// drain begins): no new claims, the attempts in flight finish and are
// recorded, and no delivery is left leased, so another node (or the restart)
// claims the rest at once instead of after the lease runs out.
import { afterEach, describe, expect, test } from "bun:test";
import { createIdentity, prove } from "../../src/agent";
import { systemClock } from "../../src/clock";
import { loadConfig } from "../../src/config";
import { startServer } from "../../src/main";
import { createKey } from "../../src/modules/keys/service";
import { openSqlite } from "../../src/store/sqlite";
import { api, freePort, tempDatabase } from "../reliability/support";
import { storesUnderTest } from "../support/stores";
import { type Receiver, startReceiver, until } from "./receiver";
import { decideOne, keyWithEndpoint, type Service, startService } from "./support";

let service: Service | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await service?.worker.stop();
  receiver?.stop();
  service = receiver = undefined;
});

for (const { name, open } of storesUnderTest()) {
  describe(`webhook worker stop (${name})`, () => {
    test("stop() while attempts are in flight: they finish and are recorded, nothing more is sent, no lease is left", async () => {
      // Attempts last 2 s at most here, their leases 7 s: a lease left behind would hold its delivery that long.
      service = await startService(await open(), systemClock, { timeoutMs: 2000, pollMs: 100 });
      const { h, worker } = service;
      // Each delivery is in flight for 1 s: 40 of them at 16 at a time take 3 s, so some are in flight
      // when the decisions are done, and some not yet claimed.
      receiver = startReceiver({ delayMs: 1000 });
      const key = await keyWithEndpoint(h, "stopping", receiver);
      const TOTAL = 40; // more than the 16 attempts one endpoint may have in flight, so some wait unclaimed
      await Promise.all(Array.from({ length: TOTAL }, (_, i) => decideOne(h, key, i % 2 ? "failed" : "verified")));

      const beforeStop = receiver.log.length;
      await worker.stop();
      const afterStop = receiver.log.length;
      // Attempts were in flight when stop() was called, and it waited for their answers.
      expect(afterStop).toBeGreaterThan(beforeStop);
      // Each finished attempt is recorded as delivered: none is left to be sent again.
      const delivered = await h.store.listWebhookDeliveries({ state: "delivered", limit: 100 });
      expect(delivered).toHaveLength(afterStop);
      const pending = await h.store.listWebhookDeliveries({ state: "pending", limit: 100 });
      expect(pending.length).toBe(TOTAL - afterStop);
      expect(pending.length).toBeGreaterThan(0);

      // Nothing is claimed or sent after the stop.
      await Bun.sleep(500);
      expect(receiver.log.length).toBe(afterStop);

      // No lease survives the stop: another node claims every pending delivery at once.
      const now = Date.now();
      const claimed = await h.store.claimWebhookDeliveries({
        token: crypto.randomUUID(),
        now,
        until: now + 60_000,
        limit: 100,
        perEndpoint: 100,
        skipEndpoints: [],
      });
      expect(claimed.map((d) => d.eventId).sort()).toEqual(pending.map((d) => d.eventId).sort());
    }, 30_000);

    test("a worker started again after a stop delivers the rest at once, each event once", async () => {
      service = await startService(await open(), systemClock, { timeoutMs: 2000, pollMs: 100 });
      const { h, worker } = service;
      receiver = startReceiver({ delayMs: 300 });
      const key = await keyWithEndpoint(h, "restarting", receiver);
      const TOTAL = 40;
      await Promise.all(Array.from({ length: TOTAL }, (_, i) => decideOne(h, key, i % 2 ? "failed" : "verified")));
      await Bun.sleep(50);
      await worker.stop();
      const restartedAt = Date.now();
      worker.start();
      // Well inside the 7 s a left-over lease would hold a delivery back.
      await until(() => receiver!.ids().size >= TOTAL, 4_000, "every event after the restart");
      expect(Date.now() - restartedAt).toBeLessThan(4_000);
      await Bun.sleep(300);
      expect(receiver.log).toHaveLength(TOTAL);
    }, 30_000);
  });
}

test("the service's stop(): from the drain's start its worker claims nothing, the attempt in flight finishes and is recorded", async () => {
  const db = tempDatabase("webhook-drain");
  const setup = openSqlite(db);
  const { key } = await createKey(setup, systemClock, "drain", 0);
  await setup.close();
  receiver = startReceiver({ delayMs: 800 });
  const config = {
    ...loadConfig({}),
    hostname: "127.0.0.1",
    port: await freePort(),
    databaseUrl: db,
    logLevel: "silent" as const,
    webhooksAllowPrivate: "true" as const,
  };
  // The listener keeps serving for 1.5 s after stop() begins (a load balancer's window).
  const server = await startServer(config, { drainDelayMs: 1_500, bootstrap: false });
  let stopped = false;
  try {
    const endpoint = await api(server.url, key, "POST", "/v1/webhooks", { url: receiver.url, events: ["session.verified"] });
    expect(endpoint.status).toBe(201);
    receiver.secrets.push(endpoint.body.secret);
    const agent = await createIdentity();
    expect((await api(server.url, key, "POST", "/v1/agents", { agent_id: "a", identity_commitment: agent.identity_commitment })).status).toBe(201);
    const challenges = [];
    for (let i = 0; i < 2; i++) {
      const c = await api(server.url, key, "POST", "/v1/verify/challenge", { agent_id: "a", action: "purchase" });
      expect(c.status).toBe(200);
      challenges.push({ id: c.body.challenge_id as string, proof: await prove({ secret: agent.secret, nonce: c.body.nonce, action: "purchase" }) });
    }
    const decide = async (c: { id: string; proof: unknown }) =>
      expect((await api(server.url, key, "POST", "/v1/verify/proof", { challenge_id: c.id, proof: c.proof })).status).toBe(200);

    await decide(challenges[0]!); // its attempt starts on the commit's wake-up; the receiver holds it 800 ms
    await Bun.sleep(100);
    const stopping = server.stop();
    await decide(challenges[1]!); // decided while draining: left to the other nodes, not claimed here
    await stopping;
    stopped = true;
    // The attempt in flight was answered and recorded before the database closed; nothing more was sent.
    expect(receiver.log.map((r) => r.body.data.session_id)).toEqual([challenges[0]!.id]);
    await Bun.sleep(300);
    expect(receiver.log).toHaveLength(1);

    const store = openSqlite(db);
    try {
      const delivered = await store.listWebhookDeliveries({ state: "delivered", limit: 10 });
      expect(delivered.map((d) => d.sessionId)).toEqual([challenges[0]!.id]);
      const pending = await store.listWebhookDeliveries({ state: "pending", limit: 10 });
      expect(pending.map((d) => [d.sessionId, d.attempts])).toEqual([[challenges[1]!.id, 0]]);
      // Not leased: another node claims it at once.
      const now = Date.now();
      const claimed = await store.claimWebhookDeliveries({
        token: crypto.randomUUID(),
        now,
        until: now + 60_000,
        limit: 10,
        perEndpoint: 10,
        skipEndpoints: [],
      });
      expect(claimed.map((d) => d.sessionId)).toEqual([challenges[1]!.id]);
    } finally {
      await store.close();
    }
  } finally {
    if (!stopped) await server.stop();
  }
}, 60_000);
