// Graceful shutdown: on SIGTERM the service stops accepting connections,
// answers the requests it already has, closes the database and exits 0;
// while draining, /ready answers 503.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../src/clock";
import { loadConfig } from "../../src/config";
import { startServer } from "../../src/main";
import { createKey } from "../../src/modules/keys/service";
import { openStore } from "../../src/store";
import { freePort, waitForHealth } from "../binary/startup";

const dir = mkdtempSync(join(tmpdir(), "zkagent-shutdown-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function newKey(databaseUrl: string): Promise<string> {
  const store = await openStore(databaseUrl, { sqliteSynchronous: "NORMAL" });
  const { key } = await createKey(store, systemClock, "shutdown", 0);
  await store.close();
  return key;
}

/** A POST whose body arrives in two parts: the request is in flight until release() is called. */
function slowChallenge(url: string, key: string) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const body = JSON.stringify({ agent_id: "slow-agent", action: "purchase" });
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(new TextEncoder().encode(body.slice(0, 10)));
      await released;
      controller.enqueue(new TextEncoder().encode(body.slice(10)));
      controller.close();
    },
  });
  const response = fetch(`${url}/v1/verify/challenge`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: stream,
    duplex: "half",
  } as RequestInit);
  return { response, release };
}

test("SIGTERM: the in-flight request is answered, new connections are refused, exit 0", async () => {
  const databaseUrl = join(dir, "sigterm.db");
  const key = await newKey(databaseUrl);
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = Bun.spawn(["bun", join(import.meta.dir, "../../src/cli/index.ts"), "serve", "--workers", "1"], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: databaseUrl, LOG_LEVEL: "info" },
    stdout: "ignore",
    stderr: "pipe",
  });
  try {
    await waitForHealth(url, 15_000, child.exited);
    const slow = slowChallenge(url, key);
    await Bun.sleep(200); // the request has reached the handler, which waits for the rest of the body
    child.kill("SIGTERM");
    await Bun.sleep(200);
    // The listener is closed while the slow request is still open.
    expect(
      await fetch(`${url}/health`).then(
        (r) => r.status,
        (e) => e.code,
      ),
    ).toBe("ECONNREFUSED");
    slow.release();
    const res = await slow.response;
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).challenge_id).toMatch(/^ch_/);
    expect(await child.exited).toBe(0);
    const log = await new Response(child.stderr).text();
    const messages = log
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).msg);
    // Order matters: drain begins, the in-flight request completes, then the database closes.
    expect(messages.indexOf("draining")).toBeGreaterThan(-1);
    expect(messages.lastIndexOf("request")).toBeGreaterThan(messages.indexOf("draining"));
    expect(messages.at(-1)).toBe("stopped");
    // SQLite removes the WAL file when the last connection closes cleanly.
    expect(existsSync(`${databaseUrl}-wal`)).toBe(false);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}, 30_000);

test("while draining (the drain delay), /ready answers 503 draining on a still-open listener", async () => {
  const databaseUrl = join(dir, "delay.db");
  await newKey(databaseUrl);
  const config = loadConfig({ PORT: "0", HOST: "127.0.0.1", DATABASE_URL: databaseUrl, LOG_LEVEL: "silent" });
  const server = await startServer(config, { bootstrap: false, drainDelayMs: 500 });
  expect((await fetch(`${server.url}/ready`)).status).toBe(200);
  const stopped = server.stop();
  await Bun.sleep(50);
  const during = await fetch(`${server.url}/ready`);
  expect(during.status).toBe(503);
  expect(((await during.json()) as any).failing).toBe("draining");
  expect((await fetch(`${server.url}/health`)).status).toBe(200); // alive, just not ready
  await stopped;
  expect(
    await fetch(`${server.url}/health`).then(
      (r) => r.status,
      (e) => e.code,
    ),
  ).toBe("ECONNREFUSED");
});
