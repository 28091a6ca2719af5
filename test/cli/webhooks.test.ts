// `zkagent webhooks list|deliveries|redeliver` as an operator runs them:
// separate processes on a temporary SQLite file holding an endpoint and a
// delivery that failed for good (its endpoint answered 500 for its whole
// retry period), written as the store writes them.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/store/sqlite";
import { makeChallenge, makeKey } from "../store/contract";

const CLI = ["bun", "src/cli/index.ts"];
let dir: string;
let db: string;
let eventId: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "zkagent-webhooks-cli-"));
  db = join(dir, "zkagent.db");
  const store = openSqlite(db);
  const now = Date.now();
  const key = makeKey({ id: "00000000000000aa" });
  await store.createKey(key);
  await store.createWebhookEndpoint({
    id: "whep_0123456789abcdef0123456789abcdef",
    keyId: "00000000000000aa",
    url: "https://hooks.example/in",
    events: ",session.failed,session.verified,",
    secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldCE=",
    previousSecret: null,
    previousUntil: null,
    createdAt: now,
    deletedAt: null,
  });
  // A decision of that key: the store writes its event and delivery in the same transaction.
  const record = makeChallenge(key.id, { createdAt: now, expiresAt: now + 300_000 });
  await store.createChallenge(record, { windowStart: 0, limit: 0 });
  const outcome = await store.decideChallenge(record.id, { status: "failed", decidedAt: now, confidence: null, reason: "proof_rejected" });
  expect(outcome.decided).toBe(true);
  const [claimed] = await store.claimWebhookDeliveries({ token: "t", now: now + 1, until: now + 60_000, limit: 10, perEndpoint: 10, skipEndpoints: [] });
  eventId = claimed!.eventId;
  await store.finishWebhookDelivery(eventId, claimed!.endpointId, "t", { state: "failed", attempts: 31, nextAt: now, status: 500, error: "HTTP 500", at: now });
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[]) {
  const proc = Bun.spawn([...CLI, ...args], { env: { ...process.env, DATABASE_URL: db, LOG_LEVEL: "silent" }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

test("list shows the endpoint without its secret; deliveries lists the failed one; redeliver makes it pending again", async () => {
  const list = await cli(["webhooks", "list", "--json"]);
  expect(list.code).toBe(0);
  expect(JSON.parse(list.stdout).webhooks).toEqual([
    expect.objectContaining({ id: "whep_0123456789abcdef0123456789abcdef", key_id: "00000000000000aa", events: ["session.failed", "session.verified"] }),
  ]);
  expect(list.stdout).not.toContain("whsec_");

  const failed = await cli(["webhooks", "deliveries", "--state", "failed", "--json"]);
  expect(JSON.parse(failed.stdout).deliveries).toEqual([
    expect.objectContaining({ event_id: eventId, state: "failed", attempts: 31, last_status: 500, last_error: "HTTP 500", type: "session.failed" }),
  ]);

  const again = await cli(["webhooks", "redeliver", eventId, "--json"]);
  expect([again.code, JSON.parse(again.stdout)]).toEqual([0, { event_id: eventId, redelivered: 1 }]);
  const pending = JSON.parse((await cli(["webhooks", "deliveries", "--state", "pending", "--json"])).stdout).deliveries;
  expect(pending).toEqual([expect.objectContaining({ event_id: eventId, state: "pending", attempts: 0, last_error: "HTTP 500" })]);

  const unknown = await cli(["webhooks", "redeliver", "msg_ffffffffffffffffffffffffffffffff"]);
  expect(unknown.code).toBe(1);
  expect((await cli(["webhooks", "deliveries", "--state", "lost"])).code).toBe(2);
}, 30_000);
