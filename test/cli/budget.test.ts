// The member's budget commands as separate processes: `zkagent budget join`
// keeps a membership from the owner's enrolment answer and the member's
// identity file (refusing another secret), `budget show` prints its terms and
// wallet without the secret, and `prove --budget-challenge` proves a spend
// against a stand-in service on a real loopback port (the members route and
// the notes feed), the printed proof accepted by the project's verifier.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { NOTES_GENESIS_LEAF } from "../../src/budgets/encoding";
import { H1 } from "../../src/budgets/hash";
import { LeanTree } from "../../src/groups/lean-tree";
import { enrolmentAnswer, GROUP } from "../agent/budget-member";
import { startFeedServer } from "../agent/group-feed-server";
import { budgetChallengeFor, firstSpendVerifies, SHOP_A, secret } from "../support/budget-spend";

setDefaultTimeout(120_000);

let dir: string;
const members = startFeedServer();
let server: ReturnType<typeof Bun.serve>;
let service: string;

async function cli(args: string[]) {
  const proc = Bun.spawn(["bun", "src/cli/index.ts", ...args], {
    env: { ...process.env, LOG_LEVEL: "silent", ZKAGENT_API_KEY: "", XDG_CACHE_HOME: join(dir, "xdg") },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "zkagent-cli-budget-"));
  writeFileSync(join(dir, "enrolment.json"), JSON.stringify(enrolmentAnswer()));
  writeFileSync(join(dir, "member.json"), JSON.stringify({ secret: secret.toString(), identity_commitment: H1(secret).toString() }));
  writeFileSync(join(dir, "other.json"), JSON.stringify({ secret: (secret + 1n).toString() }));
  const enrolment = enrolmentAnswer();
  members.add(GROUP, [BigInt(enrolment.leaf), 11n, 12n]);
  const notesRoot = LeanTree.fromLeaves([NOTES_GENESIS_LEAF]).root.toString();
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      if (url.pathname.endsWith("/notes"))
        return Response.json({
          group_id: GROUP,
          size: 1,
          offset: 1,
          notes: [],
          next_offset: null,
          checkpoints: [{ sequence: 0, size: 1, root: notesRoot, at: new Date().toISOString() }],
        });
      return fetch(`${members.url}${url.pathname}${url.search}`);
    },
  });
  service = `http://127.0.0.1:${server.port}`;
});
afterAll(() => {
  server.stop(true);
  members.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("zkagent budget join | show", () => {
  test("join keeps the membership (0600, under the cache directory), and prints neither the secret nor the salt", async () => {
    const out = await cli([
      "budget",
      "join",
      "--enrolment",
      join(dir, "enrolment.json"),
      "--identity",
      join(dir, "member.json"),
      "--service",
      service,
      "--json",
    ]);
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    const printed = JSON.parse(out.stdout);
    expect(printed).toMatchObject({ group_id: GROUP, leaf: enrolmentAnswer().leaf, service, dir: join(dir, "xdg", "zkagent", "budgets") });
    expect(out.stdout).not.toContain(secret.toString());
    expect(printed.salt).toBeUndefined();
    const files = readdirSync(printed.dir).filter((name) => name.endsWith(".membership.json"));
    expect(files.length).toBe(1);
    expect(statSync(join(printed.dir, files[0]!)).mode & 0o777).toBe(0o600);
  });

  test("another identity's secret is refused, naming why, and nothing is kept for it", async () => {
    const out = await cli([
      "budget",
      "join",
      "--enrolment",
      join(dir, "enrolment.json"),
      "--identity",
      join(dir, "other.json"),
      "--service",
      "https://elsewhere.example",
    ]);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/identity_commitment .* is not H1 of this secret/);
    expect(readdirSync(join(dir, "xdg", "zkagent", "budgets")).filter((name) => name.endsWith(".membership.json")).length).toBe(1);
  });

  test("show prints the terms and the wallet, never the secret", async () => {
    const out = await cli(["budget", "show", "--group", GROUP, "--service", service]);
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({
      group_id: GROUP,
      terms: { currency: "EUR", budget: "10000", period: "day" },
      wallet: { stopped: null, chains: {} },
    });
    expect(out.stdout).not.toContain(secret.toString());
  });
});

describe("zkagent prove --budget-challenge", () => {
  test("proves a spend against the service's trees; the printed proof verifies against the signals a service rebuilds", async () => {
    const now = Date.now();
    const context = { amount: "20.00", currency: "EUR" };
    const challenge = budgetChallengeFor({
      id: "ch_cli",
      nonce: "cd".repeat(31),
      group: GROUP,
      payee: SHOP_A,
      amount: "2000",
      currency: "EUR",
      context,
      at: now,
    });
    writeFileSync(join(dir, "challenge.json"), JSON.stringify(challenge));
    const base = ["prove", "--budget-challenge", join(dir, "challenge.json"), "--action", "purchase", "--context", JSON.stringify(context)];
    const elsewhere = await cli([...base, "--origin", "https://shop-b.example", "--service", service, "--allow-insecure-loopback"]);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(
      /refused to spend \(challenge\): the challenge pays https:\/\/shop-a.example, the agent is paying https:\/\/shop-b.example/,
    );
    const out = await cli([...base, "--origin", SHOP_A, "--service", service, "--allow-insecure-loopback", "--no-table-cache"]);
    expect(out.stderr).toBe("");
    expect(out.code).toBe(0);
    const proof = JSON.parse(out.stdout);
    expect(await firstSpendVerifies(proof, { group: GROUP, rootEnrolment: members.state(GROUP).root, at: now, ctx: challenge.budget.ctx })).toBe(true);
  });
});
