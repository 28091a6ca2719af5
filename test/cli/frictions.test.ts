// Issue 33's CLI frictions, as a user meets them: separate processes on a
// temporary SQLite file and a real server on a real port. A service out of
// reach exits 3 naming the URL (an HTTP error keeps 1); demo reuses its key
// and creates it only once the server answered; agents and groups are
// registered from the CLI under the key the guard uses; audit --json;
// circuits list on a store no server has opened.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { demoKeyFile } from "../../src/cli/demo";

setDefaultTimeout(60_000);

const CLI = ["bun", "src/cli/index.ts"];
let dir: string;
let db: string;
let server: ReturnType<typeof Bun.spawn> | undefined;
let url: string;
/** A port nothing listens on: one the kernel gave out and took back. */
let deadUrl: string;

async function cli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([...CLI, ...args], {
    env: { ...process.env, DATABASE_URL: db, LOG_LEVEL: "silent", ZKAGENT_API_KEY: "", XDG_STATE_HOME: join(dir, "state"), ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

const json = (stdout: string) => {
  const lines = stdout.split("\n").filter((line) => line !== "");
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!);
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "zkagent-frictions-"));
  db = join(dir, "zkagent.db");
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  deadUrl = `http://127.0.0.1:${probe.port}`;
  probe.stop(true);
});

afterAll(async () => {
  server?.kill("SIGTERM");
  await server?.exited;
  rmSync(dir, { recursive: true, force: true });
});

/** `zkagent serve` on the test's database, on a port of the kernel's choosing; resolves with its URL once it listens. */
async function serve(): Promise<string> {
  server = Bun.spawn([...CLI, "serve"], {
    env: { ...process.env, DATABASE_URL: db, LOG_LEVEL: "info", PORT: "0", HOST: "127.0.0.1", WORKERS: "1" },
    stdout: "ignore",
    stderr: "pipe",
  });
  const reader = (server.stderr as ReadableStream<Uint8Array>).getReader();
  let log = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`serve ended before listening:\n${log}`);
    log += new TextDecoder().decode(value);
    const listening = /"msg":"listening","url":"([^"]+)"/.exec(log);
    if (listening) {
      reader.releaseLock();
      return listening[1]!;
    }
  }
}

describe("before any server opened the store", () => {
  test("circuits list shows the shipped circuit, active (it was empty)", async () => {
    const listed = await cli(["circuits", "list", "--json"]);
    expect(listed.code).toBe(0);
    const { circuits } = json(listed.stdout);
    expect(circuits).toEqual([expect.objectContaining({ id: expect.stringMatching(/^agent_identity-[0-9a-f]{16}$/), state: "active", setup: "development" })]);
    const human = await cli(["circuits", "list"]);
    expect(human.stdout).toMatch(/^agent_identity-[0-9a-f]{16} {2}active/);
  });

  test("demo with no server: exit 3 naming the URL it tried, and no key created", async () => {
    const demo = await cli(["demo", "--url", deadUrl]);
    expect(demo.code).toBe(3);
    expect(demo.stderr).toBe(`zkagent: cannot reach ${deadUrl}/health: connection refused (is the server running on that port?)\n`);
    expect(json((await cli(["keys", "list", "--json"])).stdout).keys).toEqual([]);
  });

  test("fetch: a refused connection exits 3 naming the URL; an HTTP error answer exits 1", async () => {
    const identity = join(dir, "agent.json");
    writeFileSync(identity, JSON.stringify({ ...json((await cli(["identity", "new", "--json"])).stdout), agent_id: "a-1" }));
    const down = await cli(["fetch", `${deadUrl}/orders`, "--identity", identity]);
    expect({ code: down.code, stderr: down.stderr }).toEqual({
      code: 3,
      stderr: `zkagent: cannot reach ${deadUrl}/orders: connection refused (is the server running on that port?)\n`,
    });
    const missing = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("no such page", { status: 404 }) });
    try {
      const notFound = await cli(["fetch", `http://127.0.0.1:${missing.port}/orders`, "--identity", identity]);
      expect({ code: notFound.code, stderr: notFound.stderr, stdout: notFound.stdout }).toEqual({
        code: 1,
        stderr: "zkagent: HTTP 404\n",
        stdout: "no such page",
      });
    } finally {
      missing.stop(true);
    }
  });

  test("an http:// service refused without the flag: the error names the CLI's --allow-insecure-loopback, not the SDK option", async () => {
    const args = ["prove", "--secret", "5", "--nonce", "7f".repeat(31), "--action", "a", "--circuit", `${deadUrl}/v1/circuits/agent_identity-0123456789abcdef`];
    const refused = await cli(args);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("with --allow-insecure-loopback");
    expect(refused.stderr).not.toContain("allowInsecureLoopback");
    // With the flag the download is tried, and the server being down is exit 3 naming the URL.
    const down = await cli([...args, "--allow-insecure-loopback"]);
    expect(down.code).toBe(3);
    expect(down.stderr).toStartWith(`zkagent: cannot reach ${deadUrl}/v1/circuits`);
  });

  test("groups and agents with no server: exit 3 naming the URL", async () => {
    const down = await cli(["groups", "create", "g", "--url", deadUrl], { ZKAGENT_API_KEY: "zka_0000000000000000_x" });
    expect(down.code).toBe(3);
    expect(down.stderr).toStartWith(`zkagent: cannot reach ${deadUrl}/v1/groups: connection refused`);
  });
});

describe("against a running server", () => {
  let key: string;
  beforeAll(async () => {
    url = await serve();
    key = json((await cli(["keys", "create", "--name", "merchant", "--json"])).stdout).key;
  });

  test("demo without a key: the first run creates the demo key, the next runs reuse it", async () => {
    const first = await cli(["demo", "--url", url, "--json"]);
    expect({ code: first.code, stderr: first.stderr }).toMatchObject({ code: 0, stderr: expect.stringContaining('0. created API key "demo"') });
    const second = await cli(["demo", "--url", url, "--json"]);
    expect({ code: second.code, stderr: second.stderr }).toMatchObject({ code: 0, stderr: expect.stringContaining('0. using API key "demo"') });
    expect(json(second.stdout).session.status).toBe("verified");
    const demoKeys = json((await cli(["keys", "list", "--json"])).stdout).keys.filter((k: { name: string }) => k.name === "demo");
    expect(demoKeys).toHaveLength(1);
    // Both runs' challenges were made with that one key.
    expect(json((await cli(["keys", "usage", demoKeys[0].id, "--json"])).stdout).challenges).toBe(4);
    // A kept key that no longer works (revoked) is replaced, not retried forever.
    await cli(["keys", "revoke", demoKeys[0].id]);
    const third = await cli(["demo", "--url", url]);
    expect(third.code).toBe(0);
    expect(third.stdout).toContain('0. created API key "demo"');
    // Kept in the state directory, one file for this database, readable by its owner only.
    const kept = join(dir, "state", "zkagent", "demo-keys");
    expect(readdirSync(kept)).toEqual([basename(demoKeyFile(db))]);
    expect(statSync(join(kept, readdirSync(kept)[0]!)).mode & 0o777).toBe(0o600);
  });

  test("agents register from an identity file, under the key given; show; a second registration is the service's 409 (exit 1)", async () => {
    const identity = join(dir, "shopper.json");
    const created = json((await cli(["identity", "new", "--json"])).stdout);
    writeFileSync(identity, JSON.stringify({ ...created, agent_id: "shopper" }));
    const mandate = join(dir, "mandate.json");
    writeFileSync(mandate, JSON.stringify({ limits: [{ action: "purchase", currency: "EUR", max_amount: "50.00" }] }));
    const registered = await cli(["agents", "register", "--identity", identity, "--mandate", mandate, "--url", url, "--json"], { ZKAGENT_API_KEY: key });
    expect(registered.code).toBe(0);
    const agent = json(registered.stdout);
    expect(agent).toMatchObject({ agent_id: "shopper", identity_commitment: created.identity_commitment, signing_key: created.signing_key });
    expect(registered.stdout).not.toContain(created.secret);
    expect(registered.stdout).not.toContain(created.signing_secret);
    // The key from a file works as well as from the environment.
    const keyFile = join(dir, "key.txt");
    writeFileSync(keyFile, `${key}\n`);
    const shown = await cli(["agents", "show", "shopper", "--url", url, "--key-file", keyFile, "--json"]);
    expect(json(shown.stdout)).toMatchObject({ agent_id: "shopper", mandate: { limits: [expect.objectContaining({ max_amount: "50.00" })] } });
    const again = await cli(["agents", "register", "--identity", identity, "--url", url], { ZKAGENT_API_KEY: key });
    expect(again.code).toBe(1);
    expect(again.stderr).toStartWith(`zkagent: POST ${url}/v1/agents: HTTP 409`);
    // Another key does not see it: registration is per key.
    const other = json((await cli(["keys", "create", "--name", "other", "--json"])).stdout).key;
    const elsewhere = await cli(["agents", "show", "shopper", "--url", url], { ZKAGENT_API_KEY: other });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toStartWith(`zkagent: GET ${url}/v1/agents/shopper: HTTP 404`);
    // No key at all: a usage error.
    expect((await cli(["agents", "show", "shopper", "--url", url])).code).toBe(2);
  });

  test("groups create, add (commitments or a Semaphore identity file), remove; the owner's key only", async () => {
    const env = { ZKAGENT_API_KEY: key };
    expect(json((await cli(["groups", "create", "household", "--url", url, "--json"], env)).stdout)).toMatchObject({ group_id: "household" });
    const members = await Promise.all([1, 2].map(async () => json((await cli(["identity", "new", "--semaphore", "--json"])).stdout)));
    const file = join(dir, "member.json");
    writeFileSync(file, JSON.stringify(members[1]));
    const added = await cli(["groups", "add", "household", members[0].identity_commitment, "--identity", file, "--url", url, "--json"], env);
    expect(added.code).toBe(0);
    expect(json(added.stdout)).toMatchObject({ group_id: "household", size: 2, active_members: 2 });
    expect(added.stdout).not.toContain(members[1].private_key);
    const removed = await cli(["groups", "remove", "household", members[0].identity_commitment, "--url", url], env);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain("1 active member(s), size 2");
    const other = json((await cli(["keys", "create", "--name", "stranger", "--json"])).stdout).key;
    const refused = await cli(["groups", "add", "household", members[0].identity_commitment, "--url", url, "--json"], { ZKAGENT_API_KEY: other });
    expect(refused.code).toBe(1);
    expect(json(refused.stdout).status).toBe(403);
    expect((await cli(["groups", "frobnicate", "household"], env)).code).toBe(2);
  });

  test("audit --json: one JSON object with the entries and the seq to page from", async () => {
    const all = await cli(["audit", "--json"]);
    expect(all.code).toBe(0);
    const { entries, last_seq } = json(all.stdout);
    expect(entries.length).toBeGreaterThan(0);
    expect(entries[0]).toMatchObject({ seq: expect.any(Number), event: expect.any(String), key_id: expect.any(String) });
    expect(last_seq).toBe(entries.at(-1).seq);
    // The same entries as the JSON lines without --json.
    const lines = (await cli(["audit"])).stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(lines).toEqual(entries);
    const page = json((await cli(["audit", "--json", "--after", String(last_seq)])).stdout);
    expect(page).toEqual({ entries: [], last_seq: null });
  });
});
