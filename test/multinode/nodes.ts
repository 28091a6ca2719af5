// Real service processes for the multi-node tests: `zkagent serve` started
// as a child with its own port, talking HTTP over loopback. Nothing here is
// in-process: a node shares only the database with its siblings.
import type { Subprocess } from "bun";
import { afterAll, beforeAll } from "bun:test";
import { createKey } from "../../src/modules/keys/service";
import { systemClock } from "../../src/clock";
import { openStore } from "../../src/store";
import type { Store } from "../../src/store/interface";
import { createTestDatabase, type TestDatabase } from "../support/postgres";

const CLI = new URL("../../src/cli/index.ts", import.meta.url).pathname;
const READY_TIMEOUT_MS = 20_000;

export interface Node {
  url: string;
  process: Subprocess;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

/** A loopback port nobody listens on right now. */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

export async function startNode(databaseUrl: string, workers = 1, extraEnv: Record<string, string> = {}): Promise<Node> {
  const port = freePort();
  const child = Bun.spawn([process.execPath, CLI, "serve", "--workers", String(workers)], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: databaseUrl, LOG_LEVEL: "warn", ...extraEnv },
    stdin: "ignore",
    stdout: "ignore", // the bootstrap key is printed here; tests make their own
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + READY_TIMEOUT_MS;
  // With several workers behind one port, one healthy answer may come from
  // the first worker up; a run of successes makes a late sibling unlikely to
  // matter (it would only be missing from the load, never wrong).
  let ok = 0;
  while (ok < workers * 3) {
    if (child.exitCode !== null) throw new Error(`node on ${url} exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`node on ${url} not healthy after ${READY_TIMEOUT_MS} ms`);
    const healthy = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    ok = healthy ? ok + 1 : 0;
    if (!healthy) await Bun.sleep(50);
  }
  return {
    url,
    process: child,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await child.exited;
    },
  };
}

/** `count` nodes sharing a database of their own; set once the enclosing describe's beforeAll has run. */
export interface PostgresNodes {
  database: TestDatabase;
  /** A connection of the test's own, opened (migrating the database) before the nodes race to do it. */
  store: Store;
  nodes: Node[];
}

/**
 * For the enclosing describe: a fresh database on the PostgreSQL server at
 * `serverUrl` with `count` nodes on it, started in a beforeAll (before the
 * describe's own) and stopped, closed and dropped in an afterAll.
 */
export function nodesOnPostgres(serverUrl: string, count: number, extraEnv: Record<string, string> = {}): PostgresNodes {
  const pg = { nodes: [] as Node[] } as PostgresNodes;
  beforeAll(async () => {
    pg.database = await createTestDatabase(serverUrl);
    pg.store = await openStore(pg.database.url);
    pg.nodes = await Promise.all(Array.from({ length: count }, () => startNode(pg.database.url, 1, extraEnv)));
  }, 60_000); // `count` process starts, each allowed READY_TIMEOUT_MS
  afterAll(async () => {
    await Promise.all(pg.nodes.map((node) => node.stop()));
    await pg.store?.close();
    await pg.database?.drop();
  });
  return pg;
}

/** A key created straight in the database the nodes share. */
export async function newKey(databaseUrl: string, rateLimit = 0): Promise<{ key: string; id: string }> {
  const store = await openStore(databaseUrl);
  try {
    const { key, record } = await createKey(store, systemClock, "multinode", rateLimit);
    return { key, id: record.id };
  } finally {
    await store.close();
  }
}

export interface Reply {
  status: number;
  body: any;
}

export async function call(node: Node, method: string, path: string, key: string, body?: unknown): Promise<Reply> {
  const response = await fetch(node.url + path, {
    method,
    headers: body === undefined ? { "x-api-key": key } : { "x-api-key": key, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, body: parsed };
}
