// What the CLI tells a new user (issue 38): `zkagent fetch --signature-agent`
// says on standard error when the signature was refused and what it falls
// back to, an HTTP failure carries the server's error, reason and message,
// `-v` shows each exchange; `--version`; `identity new --agent-id`; and
// `bun run zkagent …` prints no command line (a --secret would land in logs).
// The merchant here is a stand-in answering as the guard does, so nothing is
// proved: these are the CLI's words, not the guard's decisions.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createIdentity } from "../../src/agent";

setDefaultTimeout(30_000);

const ROOT = join(import.meta.dir, "../..");
const dir = mkdtempSync(join(tmpdir(), "zkagent-says-"));
const seen: { signed: boolean; authorization: string | null }[] = [];
let shop: ReturnType<typeof Bun.serve>;

beforeAll(async () => {
  writeFileSync(join(dir, "agent.json"), JSON.stringify({ ...(await createIdentity()), agent_id: "bot" }));
  shop = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const authorization = request.headers.get("authorization");
      seen.push({ signed: request.headers.has("signature"), authorization });
      const json = (status: number, body: object, headers: Record<string, string> = {}) =>
        new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
      if (authorization === null)
        return json(
          401,
          { error: "Signature refused", reason: "unknown_key", message: "no key of https://ops.example's directory has this keyid" },
          new URL(request.url).pathname === "/only-signatures" ? {} : { "www-authenticate": 'ZKAgent realm="shop"' },
        );
      return json(403, { error: "ZKAgent claim not accepted", reason: "scheme_not_accepted", message: "this resource does not accept agent claims" });
    },
  });
});

afterAll(() => {
  shop.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

async function run(cmd: string[], cwd = ROOT) {
  const proc = Bun.spawn(cmd, { cwd, env: { ...process.env, LOG_LEVEL: "silent" }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}
const zkagent = (...args: string[]) => run([process.execPath, "src/cli/index.ts", ...args]);

test("a refused signature is said on stderr with the server's reason, and the proof it falls back to; the final failure carries the server's error", async () => {
  const url = `http://127.0.0.1:${shop.port}/catalog`;
  const result = await zkagent("fetch", url, "--identity", join(dir, "agent.json"), "--signature-agent", "https://ops.example");
  expect(result.code).toBe(1);
  expect(result.stderr).toBe(
    [
      "zkagent: the signature was refused (unknown_key): no key of https://ops.example's directory has this keyid; answering with a ZKAgent proof instead",
      "zkagent: HTTP 403: ZKAgent claim not accepted (scheme_not_accepted): this resource does not accept agent claims",
      "",
    ].join("\n"),
  );
  // Signed both times, the claim on the second: the line is said once.
  expect(seen.slice(-2).map((request) => [request.signed, request.authorization])).toEqual([
    [true, null],
    [true, 'ZKAgent agent="bot"'],
  ]);
});

test("a route that offers no proof: the refusal says so", async () => {
  const url = `http://127.0.0.1:${shop.port}/only-signatures`;
  const result = await zkagent("fetch", url, "--identity", join(dir, "agent.json"), "--signature-agent", "https://ops.example");
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(
    "zkagent: the signature was refused (unknown_key): no key of https://ops.example's directory has this keyid; the server offers no proof instead\n",
  );
  expect(result.stderr).toContain("zkagent: HTTP 401: Signature refused (unknown_key): no key");
});

test("-v: one line per request and answer, naming the claim and the challenge, never a secret", async () => {
  const url = `http://127.0.0.1:${shop.port}/catalog`;
  const result = await zkagent("fetch", url, "-v", "--identity", join(dir, "agent.json"), "--signature-agent", "https://ops.example");
  const lines = result.stderr.split("\n");
  expect(lines).toContain(`zkagent: > GET ${url} (signed)`);
  expect(lines).toContain(
    "zkagent: < 401 WWW-Authenticate: ZKAgent realm=shop: Signature refused (unknown_key): no key of https://ops.example's directory has this keyid",
  );
  expect(lines).toContain(`zkagent: > GET ${url} (signed) ZKAgent agent=bot`);
  const identity = JSON.parse(readFileSync(join(dir, "agent.json"), "utf8"));
  expect(result.stderr).not.toContain(identity.secret);
  expect(result.stderr).not.toContain(identity.signing_secret);
});

test("zkagent --version prints the release, for the whole CLI and the agent's", async () => {
  const version = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
  expect(await zkagent("--version")).toEqual({ stdout: `zkagent ${version}\n`, stderr: "", code: 0 });
  expect(await run([process.execPath, "src/cli/agent.ts", "--version"])).toEqual({ stdout: `zkagent ${version} (@zkagent/agent)\n`, stderr: "", code: 0 });
});

test("bun run zkagent prints no command line: a --secret given to it stays out of the terminal and CI logs", async () => {
  const secret = "12345678901234567890";
  const result = await run([process.execPath, "run", "zkagent", "sign", "--signing-secret", secret, "--challenge-id", "c", "--nonce", "ab", "--action", "a"]);
  expect(result.stdout + result.stderr).not.toContain(secret);
  const quiet = await run([process.execPath, "run", "zkagent", "--version"]);
  expect(quiet.stderr).toBe("");
});

test("identity new --agent-id writes the id into the identity, ready for fetch --identity; a bad id is a usage error", async () => {
  const made = await zkagent("identity", "new", "--agent-id", "shopper-1", "--json");
  expect(made.code).toBe(0);
  const identity = JSON.parse(made.stdout);
  expect(identity.agent_id).toBe("shopper-1");
  expect(Object.keys(identity).sort()).toEqual(["agent_id", "identity_commitment", "secret", "signing_key", "signing_secret"]);
  const member = JSON.parse((await zkagent("identity", "new", "--semaphore", "--group-id", "household", "--json")).stdout);
  expect(Object.keys(member).sort()).toEqual(["group_id", "identity_commitment", "private_key"]);
  for (const [args, says] of [
    [["--agent-id", ".."], '--agent-id must not be "." or ".."'],
    [["--agent-id", ""], "--agent-id must be 1 to 256 characters"],
    [["--semaphore", "--agent-id", "x"], "--agent-id names an agent identity"],
    [["--group-id", "g"], "--group-id goes with --semaphore"],
  ] as const) {
    const refused = await zkagent("identity", "new", ...args);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(says);
  }
});
