// Shared nonce stores with real servers (issue 41): two processes of the
// example shop share one store (ZKAGENT_NONCE_STORE), on a real redis-server
// (test/support/redis-server.ts starts one, installing Debian's package when
// missing) and, separately, on the PostgreSQL the tests bring. A signature
// admitted by one process and replayed to the other within its window is
// refused; with the store gone, signed requests are refused 503 with
// Retry-After, never admitted; once it is back, honest requests pass again.
// The stores are also run directly against each client kind they take.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { RedisClient, SQL } from "bun";
import { createIdentity, requestSigner } from "../../src/agent";
import { directoryResponse, nonceKey, NonceStoreUnavailable, PostgresNonceStore, RedisNonceStore } from "../../src/web-bot-auth";
import { freePort } from "../support/postgres-cluster";
import { createTestDatabase, postgresTestUrl, type TestDatabase } from "../support/postgres";
import { type RedisServer, startRedis } from "../support/redis-server";

setDefaultTimeout(120_000);

const ROOT = join(import.meta.dir, "../..");
const SHOP = "https://shop.example";
let operator: ReturnType<typeof Bun.serve>;
let operatorOrigin: string;
let signer: Awaited<ReturnType<typeof requestSigner>>;

beforeAll(async () => {
  const identity = await createIdentity();
  operator = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request) => directoryResponse([identity], { origin: new URL(request.url).origin }) });
  operatorOrigin = `http://127.0.0.1:${operator.port}`;
  signer = await requestSigner(identity, operatorOrigin);
});
afterAll(() => operator?.stop(true));

/** One process of the example shop on a free port, its nonces in `store`. */
async function shopProcess(store: string) {
  const port = await freePort();
  const proc = Bun.spawn([process.execPath, join(ROOT, "examples/shop/server.ts")], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      ZKAGENT_URL: "http://127.0.0.1:9", // never called: only the trusted operator's signatures are sent
      ZKAGENT_API_KEY: "zka_unused",
      ZKAGENT_SIGNATURE_AGENTS: operatorOrigin,
      ZKAGENT_ALLOW_INSECURE_LOOPBACK: "1",
      ZKAGENT_ORIGIN: SHOP,
      ZKAGENT_NONCE_STORE: store,
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  const first = await reader.read();
  reader.releaseLock();
  if (!new TextDecoder().decode(first.value).includes("listening")) throw new Error("the shop did not start");
  return {
    /** Sends `signed` (made for the shop's public origin) to this process. */
    send: (signed: Request) => fetch(`http://127.0.0.1:${port}/catalog`, { headers: signed.headers }),
    stop: async () => {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

const signed = () => signer.sign(new Request(`${SHOP}/catalog`));
const reasonOf = async (response: Response) => ((await response.json()) as { reason?: string }).reason;

/** The story both stores must tell, across two processes sharing one store. */
async function replayAcrossProcesses(store: string, down: () => Promise<void>, up: () => Promise<void>) {
  const [a, b] = await Promise.all([shopProcess(store), shopProcess(store)]);
  try {
    const request = await signed();
    const first = await a.send(request);
    expect({ status: first.status, body: await first.text() }).toMatchObject({ status: 200 });
    // The same signature to the other process, within its window: refused, a replay.
    const replay = await b.send(request);
    expect(replay.status).toBe(429);
    expect(await reasonOf(replay)).toBe("replayed_nonce");
    // And to the first again.
    expect((await a.send(request)).status).toBe(429);
    // Honest requests pass on both.
    expect((await b.send(await signed())).status).toBe(200);

    await down();
    for (const shop of [a, b]) {
      const refused = await shop.send(await signed());
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await reasonOf(refused)).toBe("nonce_unavailable");
    }
    await up();
    // Back: honest requests pass again (the clients reconnect; allow them a few tries).
    for (const shop of [a, b]) {
      let status = 0;
      for (let attempt = 0; attempt < 40 && status !== 200; attempt++) {
        const response = await shop.send(await signed());
        status = response.status;
        // While reconnecting, only a refusal: never an admission of a replay, never another 5xx.
        if (status !== 200) expect(status).toBe(503);
        if (status !== 200) await Bun.sleep(250);
      }
      expect(status).toBe(200);
    }
    // The replay is still refused after the store came back (Redis: the key was lost with the killed server, so a new one is tried).
    const again = await signed();
    expect((await a.send(again)).status).toBe(200);
    expect((await b.send(again)).status).toBe(429);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
}

describe("Redis (a real redis-server)", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(() => redis?.stop());

  test("the store over Bun's client: a key claimed once, atomically under 50 concurrent claims, expiring at its EXAT", async () => {
    const client = new RedisClient(redis.url);
    const store = new RedisNonceStore(client);
    const now = Math.floor(Date.now() / 1000);
    const key = nonceKey("https://op.example/.well-known/http-message-signatures-directory", "k", crypto.randomUUID());
    const claims = await Promise.all(Array.from({ length: 50 }, () => store.claim(key, now + 60)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await client.send("TTL", [`zkagent:${key}`])).toBeGreaterThan(50);
    // Expired on the server's clock: claimable again.
    const short = nonceKey("p", "k", crypto.randomUUID());
    expect(await store.claim(short, now + 1)).toBe(true);
    await Bun.sleep(2100);
    expect(await store.claim(short, now + 60)).toBe(true);
    client.close();
  });

  test("the other client shapes (ioredis-like call, node-redis-like sendCommand) send the same one command", async () => {
    const client = new RedisClient(redis.url);
    const key = nonceKey("p", "k", crypto.randomUUID());
    const viaCall = new RedisNonceStore({ call: (command: string, ...args: string[]) => client.send(command, args) });
    const viaSendCommand = new RedisNonceStore({ sendCommand: (args: string[]) => client.send(args[0]!, args.slice(1)) });
    const at = Math.floor(Date.now() / 1000) + 60;
    expect(await viaCall.claim(key, at)).toBe(true);
    expect(await viaSendCommand.claim(key, at)).toBe(false);
    client.close();
    expect(() => new RedisNonceStore({} as never)).toThrow(TypeError);
  });

  test("a client that hangs or errs is refused (NonceStoreUnavailable), never read as a first claim", async () => {
    const hung = new RedisNonceStore({ send: () => new Promise(() => {}) }, { timeoutMs: 50 });
    await expect(hung.claim("k", 1)).rejects.toBeInstanceOf(NonceStoreUnavailable);
    const erring = new RedisNonceStore({ send: async () => Promise.reject(new Error("ECONNREFUSED")) });
    await expect(erring.claim("k", 1)).rejects.toBeInstanceOf(NonceStoreUnavailable);
    const odd = new RedisNonceStore({ send: async () => "QUEUED" });
    await expect(odd.claim("k", 1)).rejects.toBeInstanceOf(NonceStoreUnavailable);
  });

  test("two shop processes on one Redis: a replay to the other is refused; Redis killed, 503 Retry-After; restarted, honest requests pass", async () => {
    await replayAcrossProcesses(
      redis.url,
      async () => redis.kill(),
      () => redis.restart(),
    );
  });
});

/** A TCP relay to PostgreSQL that the test can cut and restore: the store goes away for the shops without stopping the run's shared cluster. */
async function relay(target: URL) {
  const port = await freePort();
  const sockets = new Set<{ end(): void }>();
  let listener: { stop(closeActive?: boolean): void } | null = null;
  const open = () => {
    listener = Bun.listen<{ upstream?: Awaited<ReturnType<typeof Bun.connect>>; pending: Uint8Array[] }>({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(client) {
          client.data = { pending: [] };
          sockets.add(client);
          Bun.connect({
            hostname: target.hostname,
            port: Number(target.port),
            socket: {
              data: (_, chunk) => void client.write(chunk),
              close: () => void client.end(),
              error: () => void client.end(),
            },
          }).then(
            (upstream) => {
              sockets.add(upstream);
              client.data.upstream = upstream;
              for (const chunk of client.data.pending) upstream.write(chunk);
            },
            () => void client.end(),
          );
        },
        data(client, chunk) {
          if (client.data.upstream) client.data.upstream.write(chunk);
          else client.data.pending.push(new Uint8Array(chunk));
        },
        close(client) {
          client.data.upstream?.end();
        },
      },
    });
  };
  open();
  return {
    port,
    cut() {
      listener?.stop(true);
      listener = null;
      for (const socket of sockets) socket.end();
      sockets.clear();
    },
    restore: open,
  };
}

describe("PostgreSQL (the cluster the tests bring)", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase(await postgresTestUrl());
  });
  afterAll(() => database?.drop());

  test("the store over Bun's SQL: one UNLOGGED table, a key claimed once under 50 concurrent claims, expired rows purged", async () => {
    const sql = new SQL(database.url, { max: 8 });
    let now = Math.floor(Date.now() / 1000);
    const store = new PostgresNonceStore(sql, { table: "wba_nonces_direct", now: () => now });
    const key = nonceKey("p", "k", crypto.randomUUID());
    const claims = await Promise.all(Array.from({ length: 50 }, () => store.claim(key, now + 60)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    const [{ relpersistence }] = await sql`SELECT relpersistence FROM pg_class WHERE relname = 'wba_nonces_direct'`;
    expect(relpersistence).toBe("u"); // unlogged
    expect(await store.claim(nonceKey("p", "k", "short"), now + 1)).toBe(true);
    now += 120;
    expect(await store.purge()).toBe(2);
    const [{ count }] = await sql`SELECT count(*)::int AS count FROM wba_nonces_direct`;
    expect(count).toBe(0);
    await sql.close();
  });

  test("node-postgres's shape (query → { rows }) works the same", async () => {
    const sql = new SQL(database.url, { max: 2 });
    const store = new PostgresNonceStore(
      { query: async (text: string, params?: unknown[]) => ({ rows: await sql.unsafe(text, params) }) },
      { table: "wba_nonces_pg" },
    );
    const key = nonceKey("p", "k", crypto.randomUUID());
    expect(await store.claim(key, Math.floor(Date.now() / 1000) + 60)).toBe(true);
    expect(await store.claim(key, Math.floor(Date.now() / 1000) + 60)).toBe(false);
    await sql.close();
  });

  test("two shop processes on one PostgreSQL: a replay to the other is refused; the database cut off, 503 Retry-After; back, honest requests pass", async () => {
    const target = new URL(database.url);
    const cut = await relay(target);
    const through = new URL(database.url);
    through.hostname = "127.0.0.1";
    through.port = String(cut.port);
    await replayAcrossProcesses(
      through.toString(),
      async () => cut.cut(),
      async () => cut.restore(),
    );
    cut.cut();
  });
});

test("PostgresNonceStore: two stores creating the table at once both come up (the loser of the race tries again)", async () => {
  const database = await createTestDatabase(await postgresTestUrl());
  const clients = [new SQL(database.url, { max: 1 }), new SQL(database.url, { max: 1 })];
  try {
    const stores = clients.map((sql) => new PostgresNonceStore(sql, { table: "wba_nonces_race" }));
    const key = nonceKey("p", "k", crypto.randomUUID());
    const claims = await Promise.all(stores.map((store) => store.claim(key, Math.floor(Date.now() / 1000) + 60)));
    expect(claims.sort()).toEqual([false, true]);
  } finally {
    await Promise.all(clients.map((sql) => sql.close()));
    await database.drop();
  }
});
