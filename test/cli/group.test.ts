// The agent's private-verification commands end to end, as separate
// processes: `identity new --semaphore` and `prove --group-challenge` against
// a local HTTP server on a real port that serves a group's members. That
// server is a stand-in for the one route the agent reads (GET
// /v1/groups/{id}/members, built on the service side of issue 24); the
// interop test against the real service routes runs after the merge. The
// printed proof is checked by the stock Semaphore v4 verifyProof under node.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Identity } from "@semaphore-protocol/identity";
import { createSemaphoreIdentity } from "../../src/agent";
import { groupMessageOf } from "../../src/groups/derivation";
import { ROOT, semaphoreGroup, stockSemaphore } from "../agent/stock-semaphore";

// Every test starts processes that prove; a loaded two-core machine is slow.
setDefaultTimeout(60_000);

async function cli(args: string[], stdin?: string) {
  const proc = Bun.spawn(["bun", "src/cli/index.ts", ...args], {
    cwd: ROOT,
    // The prover's table cache goes under this run's directory, never the user's.
    env: { ...process.env, LOG_LEVEL: "silent", ZKAGENT_API_KEY: "", XDG_CACHE_HOME: join(dir, "xdg") },
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

let dir: string;
let server: ReturnType<typeof Bun.serve>;
let service: string;
let served: Record<string, string[]> = {};
const requests: Request[] = [];

/** `zkagent prove --group-challenge` for an identity file of this test, from the test's service over loopback http. */
const proveGroup = (challenge: string, identity: string, extra: string[] = []) =>
  cli(["prove", "--group-challenge", challenge, "--identity", join(dir, identity), "--service", service, "--allow-insecure-loopback", ...extra]);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "zkagent-cli-group-"));
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      requests.push(request);
      const match = /^\/v1\/groups\/([^/]+)\/members$/.exec(new URL(request.url).pathname);
      const members = match ? served[decodeURIComponent(match[1]!)] : undefined;
      return members ? Response.json({ members }) : Response.json({ error: "Group not found" }, { status: 404 });
    },
  });
  service = `http://127.0.0.1:${server.port}`;
});
afterAll(() => {
  server.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

interface Keys {
  private_key: string;
  identity_commitment: string;
}

describe("zkagent identity new --semaphore", () => {
  test("--json: a private key Semaphore's Identity.import reads, and its commitment", async () => {
    const { stdout, stderr, code } = await cli(["identity", "new", "--semaphore", "--json"]);
    expect([code, stderr]).toEqual([0, ""]);
    const keys = JSON.parse(stdout) as Keys;
    expect(Object.keys(keys)).toEqual(["private_key", "identity_commitment"]);
    expect(Identity.import(keys.private_key).commitment.toString()).toBe(keys.identity_commitment);
  });

  test("without --json: one line per field, as identity new prints", async () => {
    const { stdout, code } = await cli(["identity", "new", "--semaphore"]);
    expect(code).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual(["private_key", "identity_commitment"]);
    const [key, commitment] = lines.map((l) => l.split(/\s+/)[1]!);
    expect(Identity.import(key!).commitment.toString()).toBe(commitment!);
  });
});

describe("zkagent prove --group-challenge", () => {
  let members: Keys[];
  let challengePath: string;
  let challenge: Record<string, unknown>;

  beforeAll(async () => {
    // The SDK's identities: the command that makes them is tested above, and every process costs a second here.
    members = [0, 1, 2, 3].map(() => createSemaphoreIdentity());
    // Three active members (the agent's default anonymity floor) and a removed one.
    const leaves = [members[0]!.identity_commitment, "0", members[1]!.identity_commitment, members[2]!.identity_commitment];
    served = { "fleet-1": leaves };
    challenge = {
      challenge_id: "ch_cli",
      nonce: "ab".repeat(31),
      action: "purchase",
      context: { amount: 20 },
      expires_in: 300,
      timestamp: 1,
      group_id: "fleet-1",
      merkle_tree_root: semaphoreGroup(leaves).root.toString(),
      merkle_tree_depth: 2,
      // The message the service derives from the nonce, action and context: the command checks it before proving.
      message: groupMessageOf({ nonce: "ab".repeat(31), action: "purchase", context: { amount: 20 } }).toString(),
      scope: "4141414141",
      circuit_id: "semaphore-2",
    };
    challengePath = join(dir, "challenge.json");
    writeFileSync(challengePath, JSON.stringify(challenge));
    for (const [i, m] of members.entries()) writeFileSync(join(dir, `id${i}.json`), JSON.stringify(m));
  });

  test("prints the stock proof object; the stock verifyProof accepts it; only the members route was asked, without a key", async () => {
    requests.length = 0;
    // An http --service without the flag: refused before anything is read.
    const plain = await cli(["prove", "--group-challenge", challengePath, "--identity", join(dir, "id1.json"), "--service", service]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain("with --allow-insecure-loopback)"); // the CLI names its flag, not the SDK option
    expect(requests).toHaveLength(0);
    const { stdout, stderr, code } = await proveGroup(challengePath, "id1.json");
    expect([code, stderr]).toEqual([0, ""]);
    const lines = stdout.split("\n").filter(Boolean);
    expect(lines).toHaveLength(1);
    const proof = JSON.parse(lines[0]!);
    expect(Object.keys(proof)).toEqual(["merkleTreeDepth", "merkleTreeRoot", "nullifier", "message", "scope", "points"]);
    expect([proof.merkleTreeDepth, proof.merkleTreeRoot, proof.message, proof.scope]).toEqual([
      2,
      challenge.merkle_tree_root,
      challenge.message,
      challenge.scope,
    ]);
    expect(requests.map((r) => [r.method, new URL(r.url).pathname, r.headers.get("x-api-key")])).toEqual([["GET", "/v1/groups/fleet-1/members", null]]);
    expect(await stockSemaphore([{ verify: proof }, { verify: { ...proof, message: "8080808080808081" } }])).toEqual([true, false]);
  });

  test("a message that is not the one the nonce, action and context give: exit 1 (message_mismatch) before any member is read", async () => {
    requests.length = 0;
    const forged = join(dir, "forged-challenge.json");
    writeFileSync(forged, JSON.stringify({ ...challenge, message: "8080808080808080" }));
    const { stdout, stderr, code } = await proveGroup(forged, "id1.json");
    expect([code, stdout]).toEqual([1, ""]);
    expect(stderr).toContain("refused to prove (message_mismatch, field message)");
    expect(requests).toHaveLength(0);
  });

  test("the identity as a bare private key on standard input", async () => {
    const { stdout, code } = await cli(
      ["prove", "--group-challenge", challengePath, "--identity", "-", "--service", service, "--allow-insecure-loopback"],
      `${members[0]!.private_key}\n`,
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout).merkleTreeRoot).toBe(challenge.merkle_tree_root);
  });

  test("a non-member: exit 1, naming its commitment, nothing on stdout", async () => {
    const { stdout, stderr, code } = await proveGroup(challengePath, "id3.json");
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toContain(members[3]!.identity_commitment);
    expect(stderr).toContain("not a member");
  });

  test("members that do not give the challenge's root: exit 1, naming it", async () => {
    const leaves = served["fleet-1"]!;
    served = { "fleet-1": [members[0]!.identity_commitment, members[2]!.identity_commitment, members[1]!.identity_commitment, "0"] };
    const { stdout, stderr, code } = await proveGroup(challengePath, "id1.json");
    served = { "fleet-1": leaves };
    expect([code, stdout]).toEqual([1, ""]);
    expect(stderr).toContain(`not the challenge's ${challenge.merkle_tree_root}`);
  });

  test("no --identity is a usage error (exit 2); an agent challenge is refused naming group_id (exit 1)", async () => {
    const usage = await cli(["prove", "--group-challenge", challengePath]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--identity is required");
    const agentChallenge = join(dir, "agent-challenge.json");
    writeFileSync(agentChallenge, JSON.stringify({ challenge_id: "ch_1", nonce: "ab".repeat(31) }));
    const { code, stderr } = await proveGroup(agentChallenge, "id0.json");
    expect(code).toBe(1);
    expect(stderr).toContain("group_id");
  });

  test("the table cache: a builder the first process starts writes it (0700 directory, 0600 file), the second reads it without rewriting, a planted bad file is replaced", async () => {
    const cacheDir = join(dir, "xdg", "zkagent", "prover-tables");
    rmSync(join(dir, "xdg"), { recursive: true, force: true });
    const run = async () => {
      const { stdout, stderr, code } = await proveGroup(challengePath, "id1.json");
      expect([code, stderr]).toEqual([0, ""]);
      return JSON.parse(stdout);
    };
    const tables = () => readdirSync(cacheDir).filter((f) => f.endsWith(".tables"));
    const first = await run();
    // The first process did not wait for the tables: a detached builder writes them (and drops its marker) for the next.
    const deadline = Date.now() + 60_000;
    while (tables().length === 0 || readdirSync(cacheDir).some((f) => f.endsWith(".building"))) {
      if (Date.now() > deadline) throw new Error("the tables were not written within 60 s");
      await Bun.sleep(200);
    }
    expect(tables()).toHaveLength(1);
    // No temporary file left behind.
    expect(readdirSync(cacheDir)).toEqual(tables());
    const path = join(cacheDir, tables()[0]!);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const written = statSync(path);
    const bytes = readFileSync(path);

    const second = await run();
    // Read, not rebuilt: a rebuild renames a new file into place (another inode).
    expect(statSync(path).ino).toBe(written.ino);
    expect(readFileSync(path).equals(bytes)).toBe(true);

    // A planted file whose tables do not hash to its header: ignored, the tables built again and the file replaced.
    const planted = Buffer.from(bytes);
    planted[planted.length - 5]! ^= 0xff;
    writeFileSync(path, planted);
    const third = await run();
    expect(readFileSync(path).equals(bytes)).toBe(true);

    // --no-table-cache: proves without tables, writes nothing.
    rmSync(join(dir, "xdg"), { recursive: true, force: true });
    const { stdout, code } = await proveGroup(challengePath, "id1.json", ["--no-table-cache"]);
    expect(code).toBe(0);
    expect(statSync(cacheDir, { throwIfNoEntry: false })).toBeUndefined();

    // Every proof verifies with the stock verifier.
    expect(await stockSemaphore([first, second, third, JSON.parse(stdout)].map((verify) => ({ verify })))).toEqual([true, true, true, true]);
  });
});
