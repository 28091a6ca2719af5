// Where the PostgreSQL tests find their server, and a private database per
// test file so suites running against the same server never see each other's
// rows. The server is ZKAGENT_TEST_POSTGRES_URL when set (a developer's own),
// else a throwaway cluster this test run starts itself (./postgres-cluster.ts).
import { SQL } from "bun";
import { sharedCluster } from "./postgres-cluster";

export const POSTGRES_URL_VARIABLE = "ZKAGENT_TEST_POSTGRES_URL";

/**
 * The test server's URL: the configured one, or the run's own cluster, started
 * on first use. Never undefined: the PostgreSQL suites are the only proof that
 * the multi-node store works, so they always run.
 */
export async function postgresTestUrl(): Promise<string> {
  const url = process.env[POSTGRES_URL_VARIABLE]?.trim();
  if (url) return url;
  const cluster = await sharedCluster();
  // Processes the tests start (servers, CLI) inherit the server, too.
  process.env[POSTGRES_URL_VARIABLE] = cluster.url;
  return cluster.url;
}

export interface TestDatabase {
  /** A URL like the server URL, naming the new database. */
  url: string;
  name: string;
  /** Drops the database, disconnecting whatever still uses it. */
  drop(): Promise<void>;
}

/** Creates an empty database `zkagent_t_<random>` on the server at `serverUrl`. */
export async function createTestDatabase(serverUrl: string): Promise<TestDatabase> {
  // Only [a-z0-9_]: the name is spliced into DDL, which takes no parameters.
  const name = `zkagent_t_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  await withAdmin(serverUrl, (admin) => admin.unsafe(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => withAdmin(serverUrl, (admin) => admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}

/** Empties every zkagent table in the database at `url` (the schema stays). */
export async function truncateAll(url: string): Promise<void> {
  await withAdmin(
    url,
    (admin) =>
      admin`TRUNCATE api_keys, agents, challenges, rate_windows, audit_log, idempotency_keys, signing_keys, usage_counters, mandate_spend, agent_rate_windows, circuits, webhook_endpoints, webhook_events, webhook_deliveries, groups, group_members, group_roots, group_spend, group_nodes`,
  );
}

async function withAdmin<T>(url: string, run: (admin: SQL) => Promise<T>): Promise<T> {
  const database = decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));
  const admin = new SQL(url, { max: 1, ...(database ? { database } : {}) });
  try {
    return await run(admin);
  } finally {
    await admin.close({ timeout: 0 });
  }
}
