// Graceful shutdown (SIGTERM) of a real `zkagent serve --workers 1`:
// the listener closes, a request already in flight still gets its answer,
// the process exits 0, and the SQLite file is intact afterwards. Readiness
// draining (/ready → 503 from the moment shutdown begins) is checked in
// process through startServer's drainDelayMs, the window a load balancer sees.
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { createIdentity, prove } from "../../src/agent";
import { systemClock } from "../../src/clock";
import { loadConfig } from "../../src/config";
import { startServer } from "../../src/main";
import { createKey } from "../../src/modules/keys/service";
import { openSqlite } from "../../src/store/sqlite";
import { api, freePort, killGroup, startServe, tempDatabase, type ServerProcess } from "./support";

let running: ServerProcess | undefined;
afterAll(() => {
  if (running) killGroup(running.child, "SIGKILL");
});

const refused = async (url: string) => {
  try {
    await fetch(`${url}/health`);
    return false;
  } catch {
    return true;
  }
};

test("SIGTERM: stops accepting, the in-flight proof verification is answered, exit 0, database intact", async () => {
  const db = tempDatabase("shutdown");
  const setup = openSqlite(db);
  const { key } = await createKey(setup, systemClock, "shutdown", 0);
  await setup.close();
  const agent = await createIdentity();

  running = await startServe(db);
  const { url } = running;
  expect((await api(url, key, "POST", "/v1/agents", { agent_id: "a", identity_commitment: agent.identity_commitment })).status).toBe(201);
  const c = await api(url, key, "POST", "/v1/verify/challenge", { agent_id: "a", action: "purchase" });
  expect(c.status).toBe(200);
  const proof = await prove({ secret: agent.secret, nonce: c.body.nonce, action: "purchase" });
  const body = new TextEncoder().encode(JSON.stringify({ challenge_id: c.body.challenge_id, proof }));
  const half = body.length >> 1;

  // A slow client: the request line, headers and half the body go out, then it waits.
  let secondPull!: () => void;
  const sentFirstHalf = new Promise<void>((resolve) => (secondPull = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let pulls = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        pulls++;
        if (pulls === 1) return controller.enqueue(body.subarray(0, half));
        secondPull(); // the first half has been handed to the socket
        await released;
        controller.enqueue(body.subarray(half));
        controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  const inFlight = fetch(`${url}/v1/verify/proof`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json", "content-length": String(body.length) },
    body: stream,
    // @ts-ignore Bun/undici streaming upload
    duplex: "half",
  });
  await sentFirstHalf;
  // A round trip on another connection: the server's loop has read what arrived before it.
  expect((await fetch(`${url}/health`)).status).toBe(200);

  killGroup(running.child, "SIGTERM");
  // It stops accepting: new connections are refused while the slow request is still open.
  const deadline = Date.now() + 10_000;
  while (!(await refused(url))) {
    expect(Date.now()).toBeLessThan(deadline);
    await Bun.sleep(10);
  }
  expect(await Promise.race([running.exited.then(() => "exited"), Bun.sleep(50).then(() => "alive")])).toBe("alive");

  release();
  const answer = await inFlight;
  expect(answer.status).toBe(200);
  const verdict = (await answer.json()) as any;
  expect(verdict.verified).toBe(true);
  expect(verdict.confidence).toBe(0.99);

  expect(await running.exited).toBe(0);
  running = undefined;

  const check = new Database(db);
  expect((check.query("PRAGMA integrity_check").get() as any).integrity_check).toBe("ok");
  const row = check.query("SELECT status, confidence FROM challenges WHERE id = ?").get(c.body.challenge_id) as any;
  expect(row).toEqual({ status: "verified", confidence: 0.99 });
  check.close();
}, 60_000);

test("SIGTERM with nothing in flight: exits 0 promptly and a restart serves the same data", async () => {
  const db = tempDatabase("shutdown-idle");
  const setup = openSqlite(db);
  const { key } = await createKey(setup, systemClock, "idle", 0);
  await setup.close();
  running = await startServe(db);
  const c = await api(running.url, key, "POST", "/v1/verify/challenge", { agent_id: "a", action: "x" });
  expect(c.status).toBe(200);
  const t0 = Date.now();
  killGroup(running.child, "SIGTERM");
  expect(await running.exited).toBe(0);
  expect(Date.now() - t0).toBeLessThan(5_000);
  running = await startServe(db);
  const s = await api(running.url, key, "GET", `/v1/verify/status/${c.body.challenge_id}`);
  expect(s.status).toBe(200);
  expect(s.body.status).toBe("pending");
  killGroup(running.child, "SIGTERM");
  expect(await running.exited).toBe(0);
  running = undefined;
  const check = new Database(db);
  expect((check.query("PRAGMA integrity_check").get() as any).integrity_check).toBe("ok");
  check.close();
}, 60_000);

test("draining: /ready answers 503 (failing: draining) from the moment stop() begins, while /health still answers", async () => {
  const db = tempDatabase("drain");
  const port = await freePort();
  const config = { ...loadConfig({}), hostname: "127.0.0.1", port, databaseUrl: db, logLevel: "silent" as const };
  const server = await startServer(config, { drainDelayMs: 1_500, bootstrap: false });
  const ready = await fetch(`${server.url}/ready`);
  expect(ready.status).toBe(200);
  const stopping = server.stop();
  const deadline = Date.now() + 1_000;
  let drained: Response | undefined;
  while (Date.now() < deadline) {
    const r = await fetch(`${server.url}/ready`);
    if (r.status === 503) {
      drained = r;
      break;
    }
    await Bun.sleep(10);
  }
  expect(drained?.status).toBe(503);
  expect(((await drained!.json()) as any).failing).toBe("draining");
  expect((await fetch(`${server.url}/health`)).status).toBe(200);
  await stopping;
  expect(await refused(server.url)).toBe(true);
}, 30_000);
