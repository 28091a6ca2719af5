// Issue 11: the new settings reach the running server — audit retention
// (item 16, purged by the purge loop), METRICS_TOKEN (item 11) and the agent
// quota defaults (item 10).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../src/clock";
import { loadConfig } from "../../src/config";
import { localIssuerWarning, privateWebhooksWarning, startServer } from "../../src/main";
import { createKey } from "../../src/modules/keys/service";
import { openSqlite } from "../../src/store/sqlite";

const dir = mkdtempSync(join(tmpdir(), "zkagent-settings-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const DAY = 24 * 60 * 60 * 1000;

async function seeded(name: string) {
  const databaseUrl = join(dir, `${name}.db`);
  const store = openSqlite(databaseUrl);
  const { key, record } = await createKey(store, systemClock, name, 0);
  const now = Date.now();
  for (const [id, at] of [
    ["ch_old", now - 3 * DAY],
    ["ch_new", now - 1000],
  ] as const) {
    await store.createChallenge(
      {
        id,
        keyId: record.id,
        agentId: "a",
        action: "b",
        context: null,
        nonce: "1",
        createdAt: at,
        expiresAt: at + 300_000,
        status: "pending",
        decidedAt: null,
        confidence: null,
        reason: null,
      },
      { windowStart: at, limit: 0 },
    );
  }
  await store.close();
  return { databaseUrl, key };
}

async function auditAfterStart(env: Record<string, string>, name: string) {
  const { databaseUrl } = await seeded(name);
  const server = await startServer(loadConfig({ DATABASE_URL: databaseUrl, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", ...env }), { bootstrap: false });
  await server.stop();
  const store = openSqlite(databaseUrl);
  const sessions = (await store.listAudit({ limit: 10 })).map((entry) => entry.sessionId);
  await store.close();
  return sessions;
}

test("AUDIT_RETENTION_DAYS: the purge loop drops older audit entries; 0 keeps them all", async () => {
  expect(await auditAfterStart({ AUDIT_RETENTION_DAYS: "2" }, "retain-2")).toEqual(["ch_new"]);
  expect(await auditAfterStart({ AUDIT_RETENTION_DAYS: "0" }, "retain-0")).toEqual(["ch_old", "ch_new"]);
  expect(await auditAfterStart({}, "retain-default")).toEqual(["ch_old", "ch_new"]); // 365 days by default
});

test("METRICS_TOKEN closes /metrics; DEFAULT_AGENT_RATE_LIMIT and MAX_AGENTS_PER_KEY bound registrations", async () => {
  const { databaseUrl, key } = await seeded("server");
  const server = await startServer(
    loadConfig({
      DATABASE_URL: databaseUrl,
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "silent",
      METRICS_TOKEN: "tok-0123456789abcdef",
      DEFAULT_AGENT_RATE_LIMIT: "2",
      MAX_AGENTS_PER_KEY: "1",
    }),
    { bootstrap: false },
  );
  try {
    expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: "Bearer tok-0123456789abcdef" } })).status).toBe(200);
    const register = (agentId: string) =>
      fetch(`${server.url}/v1/agents`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ agent_id: agentId, identity_commitment: "5" }),
      });
    expect((await register("one")).status).toBe(201);
    const second = await register("two");
    expect(second.status).toBe(429);
    expect(((await second.json()) as any).error).toBe("Too many agents");
  } finally {
    await server.stop();
  }
});

test("PUBLIC_URL unset on an address others reach: a warning that receipts carry a local issuer; loopback or PUBLIC_URL: none", () => {
  const warning = localIssuerWarning({ hostname: "0.0.0.0", publicUrl: "" }, "http://localhost:3000");
  expect(warning).toMatchObject({ iss: "http://localhost:3000", host: "0.0.0.0" });
  expect(warning?.fix).toContain("PUBLIC_URL");
  expect(localIssuerWarning({ hostname: "10.0.0.7", publicUrl: "" }, "http://10.0.0.7:3000")).not.toBeNull();
  for (const hostname of ["127.0.0.1", "localhost", "::1"]) expect(localIssuerWarning({ hostname, publicUrl: "" }, "http://localhost:3000")).toBeNull();
  expect(localIssuerWarning({ hostname: "0.0.0.0", publicUrl: "https://zk.example.com" }, "https://zk.example.com")).toBeNull();
});

test("WEBHOOKS_ALLOW_PRIVATE=true: the start logs a warning saying webhooks may reach private addresses; off: no such line", async () => {
  expect(privateWebhooksWarning({ webhooksAllowPrivate: "false" })).toBeNull();
  const startLines = async (allow: string) => {
    const lines: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((chunk: string | Uint8Array) => (lines.push(String(chunk)), true)) as typeof process.stderr.write;
    try {
      const { databaseUrl } = await seeded(`private-${allow}`);
      const config = loadConfig({ DATABASE_URL: databaseUrl, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", WEBHOOKS_ALLOW_PRIVATE: allow });
      const server = await startServer(config, { bootstrap: false });
      await server.stop();
    } finally {
      process.stderr.write = write;
    }
    return lines.map((line) => JSON.parse(line) as { level: string; msg: string; setting?: string });
  };
  const on = await startLines("true");
  expect(on.filter((line) => line.msg === "webhooks may reach private addresses")).toEqual([
    expect.objectContaining({ level: "warn", setting: "WEBHOOKS_ALLOW_PRIVATE=true" }),
  ]);
  expect((await startLines("false")).filter((line) => line.msg === "webhooks may reach private addresses")).toEqual([]);
});
