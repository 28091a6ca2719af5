// The URL guard at delivery: a name that resolved to a public address when
// the endpoint was registered and resolves to a loopback address now (DNS
// rebinding) is refused at the attempt, nothing is sent, and the attempt is
// counted in /metrics as a retry, with the outbox's age reported.
import { afterAll, expect, test } from "bun:test";
import { ManualClock } from "../../src/clock";
import { silentLogger } from "../../src/log";
import { createMetrics } from "../../src/observability/metrics";
import { ReceiptSigner } from "../../src/receipts/signer";
import { openSqlite } from "../../src/store/sqlite";
import { DeliveryWorker } from "../../src/webhooks/worker";
import { createHarness } from "../support/harness";
import { startReceiver, until } from "./receiver";
import { decideOne, decidingVerifier, registerAgents, registerEndpoint } from "./support";

const receiver = startReceiver();
afterAll(() => receiver.stop());

test("registered while public, loopback at delivery: refused at the attempt, nothing sent, retried, counted", async () => {
  const store = openSqlite(":memory:");
  const clock = new ManualClock(Date.now());
  const metrics = createMetrics();
  const receipts = { signer: new ReceiptSigner(store), issuer: "http://localhost" };
  const publicAnswer = async () => [{ address: "93.184.216.34", family: 4 }];
  const h = await createHarness(store, { verifier: decidingVerifier, clock, receipts, metrics, webhooks: { allowPrivate: false, resolve: publicAnswer } });
  const key = await h.newKey("rebinding");
  await registerEndpoint(h, key, `https://rebinding.example:${receiver.port}/hooks`);
  await registerAgents(h, key);
  const worker = new DeliveryWorker({
    store,
    clock,
    logger: silentLogger,
    receipts,
    metrics,
    allowPrivate: false,
    timeoutMs: 1000,
    pollMs: 50,
    resolve: async () => [{ address: "127.0.0.1", family: 4 }],
  });
  worker.start();
  try {
    const answer = await decideOne(h, key, "verified");
    await until(async () => (await store.listWebhookDeliveries({ limit: 1 }))[0]?.attempts === 1, 5_000, "the first attempt");
    const [delivery] = await store.listWebhookDeliveries({ limit: 1 });
    expect(delivery).toMatchObject({ sessionId: answer.sessionId, state: "pending", lastStatus: null });
    expect(delivery!.lastError).toStartWith("URL refused: resolves to 127.0.0.1, a loopback, link-local or private address");
    expect(receiver.log).toHaveLength(0);
    await worker.stop(); // no second attempt while the clock moves on
    clock.advance(30_000);
    const scrape = await h.call("GET", "/metrics");
    expect(scrape.body).toContain('zkagent_webhook_deliveries_total{outcome="retry"} 1');
    expect(scrape.body).toMatch(/zkagent_webhook_oldest_pending_seconds 30(\.\d+)?\n/);
  } finally {
    await worker.stop();
  }
});
