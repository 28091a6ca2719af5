// Issue 27: the outbox survives SIGKILL. A real `zkagent serve` process makes
// 200 decisions (failed ones, and every 25th a real proof: verified, or
// refused by the mandate) and is killed with SIGKILL at a random moment;
// restarted on the same database it finishes the run. Then, counted in the
// database and in the receiver's log: every decided session has exactly one
// event and it was delivered, every event is about a decided session, and
// every decision the client saw acknowledged is among them. On SQLite and
// on PostgreSQL.
//
// WEBHOOK_CRASH_SEED sets the seed of the kill moments (printed).
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { afterAll, expect, test } from "bun:test";
import { createIdentity, prove } from "../../src/agent";
import { systemClock } from "../../src/clock";
import { createKey } from "../../src/modules/keys/service";
import { openPostgres } from "../../src/store/postgres";
import { openSqlite } from "../../src/store/sqlite";
import type { Store } from "../../src/store/interface";
import { createTestDatabase, postgresTestUrl, type TestDatabase } from "../support/postgres";
import { api, killGroup, type ServerProcess, startServe, tempDatabase } from "../reliability/support";
import { startReceiver, until } from "./receiver";
import { rng } from "../support/random";

const SEED = Number(process.env.WEBHOOK_CRASH_SEED ?? Date.now() % 100_000);
const DECISIONS = 200;
const CLIENTS = 8;

let running: ServerProcess | undefined;
const databases: TestDatabase[] = [];
afterAll(async () => {
  if (running) killGroup(running.child, "SIGKILL");
  for (const db of databases) await db.drop().catch(() => {});
});

interface Counts {
  decided: string[];
  events: { session_id: string; id: string }[];
  undelivered: number;
}

const ENV = { WEBHOOKS_ALLOW_PRIVATE: "true", WEBHOOKS_POLL_MS: "100", WEBHOOKS_TIMEOUT_MS: "1000" };

async function run(name: string, databaseUrl: string, openStore: () => Promise<Store>, counts: () => Promise<Counts>) {
  const random = rng(SEED + name.length);
  const setup = await openStore();
  const { key } = await createKey(setup, systemClock, "crash", 0);
  await setup.close();
  const agent = await createIdentity();
  const receiver = startReceiver();
  const t0 = Date.now();
  const phases: string[] = [];
  const phase = (what: string) => phases.push(`${what} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  try {
    running = await startServe(databaseUrl, ENV);
    phase("started");
    const endpoint = await api(running.url, key, "POST", "/v1/webhooks", { url: receiver.url, events: ["session.verified", "session.failed"] });
    expect(endpoint.status).toBe(201);
    receiver.secrets.push(endpoint.body.secret);
    for (const [agentId, mandate] of [
      ["free", undefined],
      ["capped", { limits: [{ action: "purchase", currency: "EUR", max_amount: "10.00" }] }],
    ] as const)
      expect((await api(running.url, key, "POST", "/v1/agents", { agent_id: agentId, identity_commitment: agent.identity_commitment, mandate })).status).toBe(
        201,
      );

    const acknowledged = new Set<string>();
    let next = 0;
    let killed = false;
    /** Decision `i`: every 25th with a real proof (verified, or refused by the mandate), the others a malformed proof (failed). */
    const decide = async (url: string, i: number) => {
      const real = i % 25 === 0;
      const agentId = real && i % 50 === 25 ? "capped" : "free";
      const context = { amount: 20, currency: "EUR", merchant: "shop-a" };
      const c = await api(url, key, "POST", "/v1/verify/challenge", { agent_id: agentId, action: "purchase", context });
      expect(c.status).toBe(200);
      const proof = real ? await prove({ secret: agent.secret, nonce: c.body.nonce, action: "purchase", context }) : "not a proof";
      const answer = await api(url, key, "POST", "/v1/verify/proof", { challenge_id: c.body.challenge_id, proof });
      expect(answer.status === 200 || answer.status === 400).toBe(true);
      if (answer.body.receipt) acknowledged.add(c.body.challenge_id);
    };
    const clients = (url: string, stopAt: number) =>
      Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (!killed && next < stopAt) {
            const i = next++;
            try {
              await decide(url, i);
            } catch (error) {
              if (!killed) throw error;
              return;
            }
          }
        }),
      );
    const killAt = 20 + Math.floor(random() * (DECISIONS - 60));
    const load = clients(running.url, DECISIONS);
    while (next < killAt) await Bun.sleep(2);
    killed = true;
    killGroup(running.child, "SIGKILL");
    await running.exited;
    await load;
    const beforeKill = next;
    phase("killed");

    running = await startServe(databaseUrl, ENV);
    killed = false;
    phase("restarted");
    await clients(running.url, DECISIONS + CLIENTS);
    phase("decided");
    const final = await counts();
    await until(async () => (await counts()).undelivered === 0 && receiver.ids().size >= (await counts()).events.length, 20_000, "every event delivered");
    const after = await counts();
    phase("delivered");
    console.log(
      `[webhooks crash ${name}] seed ${SEED}: killed after ${beforeKill} decisions started; ${after.decided.length} decided, ${after.events.length} events, ${receiver.ids().size} delivered, ${acknowledged.size} acknowledged (${phases.join(", ")})`,
    );
    expect(after.decided.length).toBe(final.decided.length);
    // One event per decided session, and none for anything else.
    expect(after.events.map((e) => e.session_id).sort()).toEqual([...after.decided].sort());
    // Each delivered (distinct webhook-ids, valid signatures) and about a decided session.
    expect([...receiver.ids()].sort()).toEqual(after.events.map((e) => e.id).sort());
    expect(new Set(receiver.log.map((r) => r.body.data.session_id))).toEqual(new Set(after.decided));
    expect(receiver.log.every((r) => r.valid)).toBe(true);
    // Every acknowledged decision is among them.
    for (const id of acknowledged) expect(after.decided).toContain(id);
    expect(after.decided.length).toBeGreaterThanOrEqual(DECISIONS - CLIENTS);
  } finally {
    if (running) killGroup(running.child, "SIGKILL");
    running = undefined;
    receiver.stop();
  }
}

test("SIGKILL during 200 decisions, restart (SQLite): every decided session's event delivered, no event without its decision", async () => {
  const file = tempDatabase("webhook-crash");
  const counts = async (): Promise<Counts> => {
    const db = new Database(file, { readonly: true });
    try {
      return {
        decided: (db.query("SELECT id FROM challenges WHERE status <> 'pending'").all() as { id: string }[]).map((r) => r.id),
        events: db.query("SELECT session_id, id FROM webhook_events").all() as { session_id: string; id: string }[],
        undelivered: (db.query("SELECT count(*) AS n FROM webhook_deliveries WHERE state <> 'delivered'").get() as { n: number }).n,
      };
    } finally {
      db.close();
    }
  };
  await run("sqlite", file, async () => openSqlite(file), counts);
}, 90_000);

test("SIGKILL during 200 decisions, restart (PostgreSQL): every decided session's event delivered, no event without its decision", async () => {
  const db = await createTestDatabase(await postgresTestUrl());
  databases.push(db);
  const counts = async (): Promise<Counts> => {
    const sql = new SQL(db.url, { max: 1 });
    try {
      return {
        decided: ((await sql`SELECT id FROM challenges WHERE status <> 'pending'`) as { id: string }[]).map((r) => r.id),
        events: [...((await sql`SELECT session_id, id FROM webhook_events`) as { session_id: string; id: string }[])],
        undelivered: Number((await sql`SELECT count(*) AS n FROM webhook_deliveries WHERE state <> 'delivered'`)[0].n),
      };
    } finally {
      await sql.close();
    }
  };
  await run("postgres", db.url, () => openPostgres(db.url, { poolSize: 2 }), counts);
}, 90_000);
