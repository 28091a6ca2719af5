// The zkagent CLI as a user runs it: separate processes on a temporary SQLite
// file. The one suite that starts a real server (for `demo`).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verificationKey } from "../../src/agent";
import { createApp } from "../../src/app";
import { observed } from "../support/contract";
import { systemClock } from "../../src/clock";
import { publicSignals } from "../../src/identity/encoding";
import { silentLogger } from "../../src/log";
import { openSqlite } from "../../src/store/sqlite";
import { serviceVerifier } from "../../src/verifier/service";
import { errorJson } from "../support/harness";
import { referenceVerify } from "../support/snarkjs";

// Every test here starts processes; on a loaded two-core machine (CI, or
// several developers at once) that passed bun's 5 s default with nothing wrong.
setDefaultTimeout(30_000);

const CLI = ["bun", "src/cli/index.ts"];
let dir: string;
let db: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "zkagent-cli-"));
  db = join(dir, "zkagent.db");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[], env: Record<string, string> = {}, stdin?: string) {
  const proc = Bun.spawn([...CLI, ...args], {
    env: { ...process.env, DATABASE_URL: db, LOG_LEVEL: "silent", ZKAGENT_API_KEY: "", ...env },
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** stdout of a --json command: exactly one line holding one JSON object. */
function oneJson(stdout: string): any {
  const lines = stdout.split("\n").filter((line) => line !== "");
  expect(lines).toHaveLength(1);
  const value = JSON.parse(lines[0]!);
  expect(typeof value).toBe("object");
  return value;
}

async function inProcessApp() {
  const store = openSqlite(db);
  const app = observed(createApp({ store, clock: systemClock, verifier: await serviceVerifier(), logger: silentLogger }));
  const get = (path: string, key: string) => app.handle(new Request(`http://cli.test${path}`, { headers: { "x-api-key": key } }));
  return { store, get };
}

describe("keys", () => {
  let created: any;

  test("create --json prints exactly one JSON object with id, key and name", async () => {
    const { stdout, code } = await cli(["keys", "create", "--name", "x", "--rate-limit", "5", "--json"]);
    expect(code).toBe(0);
    created = oneJson(stdout);
    expect(created.id).toMatch(/^[0-9a-f]{16}$/);
    expect(created.key).toMatch(new RegExp(`^zka_${created.id}_[A-Za-z0-9_-]{43}$`));
    expect(created.name).toBe("x");
    expect(created.rate_limit_per_minute).toBe(5);
  });

  test("the created key authenticates against an app on the same file", async () => {
    const { store, get } = await inProcessApp();
    try {
      const response = await get("/v1/usage", created.key);
      expect(response.status).toBe(200);
      expect((await response.json()).name).toBe("x");
    } finally {
      await store.close();
    }
  });

  test("list --json shows the key by id and prefix, never the key itself", async () => {
    const { stdout, code } = await cli(["keys", "list", "--json"]);
    expect(code).toBe(0);
    const { keys } = oneJson(stdout);
    const listed = keys.find((k: any) => k.id === created.id);
    expect(listed).toMatchObject({ id: created.id, prefix: `zka_${created.id}`, name: "x", revoked_at: null });
    expect(stdout).not.toContain(created.key.slice(`zka_${created.id}_`.length));
  });

  test("usage ID --json reports the counters", async () => {
    const { stdout, code } = await cli(["keys", "usage", created.id, "--json"]);
    expect(code).toBe(0);
    expect(oneJson(stdout)).toEqual({ key_id: created.id, name: "x", challenges: 0, verifications: { verified: 0, failed: 0 }, rate_limit_per_minute: 5 });
  });

  test("revoke ID makes the key answer 403 Invalid API key", async () => {
    const { code } = await cli(["keys", "revoke", created.id]);
    expect(code).toBe(0);
    const { store, get } = await inProcessApp();
    try {
      const response = await get("/v1/usage", created.key);
      expect(response.status).toBe(403);
      expect(await errorJson(response)).toEqual({ error: "Invalid API key" });
    } finally {
      await store.close();
    }
  });

  test("issue 11: create --agent-rate-limit and set-limit --agent-rate-limit N|default", async () => {
    const made = oneJson((await cli(["keys", "create", "--name", "agents", "--agent-rate-limit", "7", "--json"])).stdout);
    expect(made.agent_rate_limit_per_minute).toBe(7);
    const set = oneJson((await cli(["keys", "set-limit", made.id, "--agent-rate-limit", "3", "--json"])).stdout);
    expect(set).toMatchObject({ agent_rate_limit_per_minute: 3, rate_limit_per_minute: made.rate_limit_per_minute });
    const back = oneJson((await cli(["keys", "set-limit", made.id, "--agent-rate-limit", "default", "--json"])).stdout);
    expect(back.agent_rate_limit_per_minute).toBeNull();
    expect((await cli(["keys", "set-limit", made.id])).code).toBe(2);
    expect((await cli(["keys", "set-limit", made.id, "--agent-rate-limit", "-1"])).code).toBe(2);
  }, 20_000);

  test("issue 40: set-origins stores serialized origins by id or prefix, --clear empties, a URL with a path is refused", async () => {
    const made = oneJson((await cli(["keys", "create", "--name", "shop", "--json"])).stdout);
    expect(made.origins).toEqual([]);
    const set = oneJson((await cli(["keys", "set-origins", made.prefix, "HTTPS://Shop-A.example:443", "http://shop-b.example:8080", "--json"])).stdout);
    expect(set.origins).toEqual(["https://shop-a.example", "http://shop-b.example:8080"]);
    const listed = oneJson((await cli(["keys", "list", "--json"])).stdout).keys.find((k: { id: string }) => k.id === made.id);
    expect(listed.origins).toEqual(set.origins);
    const refused = await cli(["keys", "set-origins", made.id, "https://shop-a.example/checkout"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("more than an origin");
    expect((await cli(["keys", "set-origins", made.id, "ftp://shop.example"])).code).toBe(2);
    expect((await cli(["keys", "set-origins", made.id])).code).toBe(2);
    expect(oneJson((await cli(["keys", "set-origins", made.id, "--clear", "--json"])).stdout).origins).toEqual([]);
    expect((await cli(["keys", "set-origins", "0000000000000000", "https://x.example", "--json"])).code).toBe(1);
  }, 30_000);

  test("usage of an unknown key exits 1", async () => {
    expect((await cli(["keys", "usage", "0000000000000000", "--json"])).code).toBe(1);
  });
});

describe("agent side", () => {
  test("identity new --json prints secret, commitment and signing keys", async () => {
    const { stdout, code } = await cli(["identity", "new", "--json"]);
    expect(code).toBe(0);
    const id = oneJson(stdout);
    expect(Object.keys(id).sort()).toEqual(["identity_commitment", "secret", "signing_key", "signing_secret"]);
    expect(id.secret).toMatch(/^[1-9][0-9]*$/);
    expect(id.identity_commitment).toMatch(/^[1-9][0-9]*$/);
  });

  test("prove --json output verifies with the reference verifier", async () => {
    const id = oneJson((await cli(["identity", "new", "--json"])).stdout);
    const nonce = "7f".repeat(31);
    const context = { amount: 20, currency: "EUR" };
    const { stdout, code } = await cli([
      "prove",
      "--secret",
      id.secret,
      "--nonce",
      nonce,
      "--action",
      "purchase",
      "--context",
      JSON.stringify(context),
      "--json",
    ]);
    expect(code).toBe(0);
    const { proof } = oneJson(stdout);
    const signals = publicSignals({ identityCommitment: BigInt(id.identity_commitment), nonce, action: "purchase", context });
    expect(await referenceVerify(verificationKey, signals, JSON.parse(proof))).toBe(true);
  });

  test("prove without --secret is a usage error (exit 2)", async () => {
    expect((await cli(["prove", "--nonce", "7f".repeat(31), "--action", "a"])).code).toBe(2);
  });

  test("issue 11: --secret-file and --signing-secret-file (a path, or - for stdin) keep secrets off the command line", async () => {
    const id = oneJson((await cli(["identity", "new", "--json"])).stdout);
    const nonce = "7f".repeat(31);
    const secretFile = join(dir, "secret.txt");
    await Bun.write(secretFile, `${id.secret}\n`);
    const fromFile = await cli(["prove", "--secret-file", secretFile, "--nonce", nonce, "--action", "purchase", "--json"]);
    expect(fromFile.code).toBe(0);
    const signals = publicSignals({ identityCommitment: BigInt(id.identity_commitment), nonce, action: "purchase", context: undefined });
    expect(await referenceVerify(verificationKey, signals, JSON.parse(oneJson(fromFile.stdout).proof))).toBe(true);
    const fromStdin = await cli(["prove", "--secret-file", "-", "--nonce", nonce, "--action", "purchase", "--json"], {}, id.secret);
    expect({ code: fromStdin.code, stderr: fromStdin.stderr }).toEqual({ code: 0, stderr: "" });
    expect(await referenceVerify(verificationKey, signals, JSON.parse(oneJson(fromStdin.stdout).proof))).toBe(true);

    const signArgs = ["--challenge-id", "ch_x", "--nonce", nonce, "--action", "purchase", "--json"];
    const inline = oneJson((await cli(["sign", "--signing-secret", id.signing_secret, ...signArgs])).stdout);
    const keyFile = join(dir, "signing.txt");
    await Bun.write(keyFile, id.signing_secret);
    expect(oneJson((await cli(["sign", "--signing-secret-file", keyFile, ...signArgs])).stdout)).toEqual(inline);
    const viaStdin = await cli(["sign", "--signing-secret-file", "-", ...signArgs], {}, `${id.signing_secret}\n`);
    // Exit code and stderr first, so a failure says why (seen once in CI: empty stdout, not reproduced since).
    expect({ code: viaStdin.code, stderr: viaStdin.stderr }).toEqual({ code: 0, stderr: "" });
    expect(oneJson(viaStdin.stdout)).toEqual(inline);

    // Both forms at once, a missing file, an empty one: usage errors.
    expect((await cli(["prove", "--secret", id.secret, "--secret-file", secretFile, "--nonce", nonce, "--action", "a"])).code).toBe(2);
    expect((await cli(["prove", "--secret-file", join(dir, "absent"), "--nonce", nonce, "--action", "a"])).code).toBe(2);
    expect((await cli(["prove", "--secret-file", "-", "--nonce", nonce, "--action", "a"], {}, "")).code).toBe(2);
  }, 60_000);

  test("issue 11: secret 0 is refused by prove (its commitment Poseidon(0) is public), inline or from a file", async () => {
    const nonce = "7f".repeat(31);
    const inline = await cli(["prove", "--secret", "0", "--nonce", nonce, "--action", "a"]);
    expect(inline.code).toBe(2);
    expect(inline.stderr).toContain("[1, r)");
    expect((await cli(["prove", "--secret-file", "-", "--nonce", nonce, "--action", "a"], {}, "0\n")).code).toBe(2);
  }, 20_000);
});

describe("serve + demo", () => {
  test("demo --json runs the whole flow against a served database and ends verified", async () => {
    let server: ReturnType<typeof Bun.spawn> | undefined;
    let port = 0;
    for (let attempt = 0; attempt < 5 && !server; attempt++) {
      port = 20000 + Math.floor(Math.random() * 20000);
      const proc = Bun.spawn([...CLI, "serve"], {
        env: { ...process.env, DATABASE_URL: db, LOG_LEVEL: "info", PORT: String(port), HOST: "127.0.0.1" },
        stdout: "ignore",
        stderr: "pipe",
      });
      // Wait for the "listening" log line, or for the process to die (port taken).
      const reader = (proc.stderr as ReadableStream<Uint8Array>).getReader();
      let log = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        log += new TextDecoder().decode(value);
        if (log.includes('"listening"')) break;
      }
      reader.releaseLock();
      if (log.includes('"listening"')) server = proc;
      else proc.kill();
    }
    expect(server).toBeDefined();
    try {
      const { stdout, code } = await cli(["demo", "--url", `http://127.0.0.1:${port}`, "--json"]);
      const result = oneJson(stdout);
      expect(code).toBe(0);
      expect(result.verification).toMatchObject({ verified: true, confidence: 0.999, session_id: result.challenge_id });
      expect(result.session.status).toBe("verified");
      // The demo's mandate (30.00 EUR a day) stops the second purchase, which would make 35.00.
      expect(result.over_limit).toMatchObject({ verified: false, reason: "mandate_violation", detail: "max_total" });
      expect(result.spend).toMatchObject([{ total: "20", count: 1, currency: "EUR", period: "day" }]);
      // The proof times it printed: the first proof also loads the circuit, the second reuses it.
      expect(result.proof_ms).toHaveLength(2);
      for (const ms of result.proof_ms) expect(Number.isInteger(ms) && ms >= 0).toBe(true);

      // Issue 11: the API key from ZKAGENT_API_KEY, never on the command line; no "demo" key is created.
      const created = oneJson((await cli(["keys", "create", "--name", "env-demo", "--json"])).stdout);
      const keysBefore = oneJson((await cli(["keys", "list", "--json"])).stdout).keys.length;
      const viaEnv = await cli(["demo", "--url", `http://127.0.0.1:${port}`, "--json"], { ZKAGENT_API_KEY: created.key });
      expect(viaEnv.code).toBe(0);
      expect(oneJson((await cli(["keys", "list", "--json"])).stdout).keys.length).toBe(keysBefore);
      // The demo's two challenges (the purchase and the over-limit one) are counted on the key from the environment.
      expect(oneJson((await cli(["keys", "usage", created.id, "--json"])).stdout).challenges).toBe(2);
    } finally {
      server!.kill("SIGTERM");
      await server!.exited;
    }
  }, 60_000);
});

describe("help and usage errors", () => {
  const COMMANDS = ["serve", "keys", "identity", "prove", "sign", "demo", "verify", "principal", "mandate"];
  const helps = new Map<string, Awaited<ReturnType<typeof cli>>>();
  beforeAll(async () => {
    // Spawned side by side: each is a fresh process, so they cannot interfere.
    const results = await Promise.all(COMMANDS.map((command) => cli([command, "--help"])));
    COMMANDS.forEach((command, i) => helps.set(command, results[i]!));
  }, 30_000); // seven processes at once take over 5 s on a loaded two-core machine

  test.each(COMMANDS)("%s --help exits 0 and prints its usage", (command) => {
    const { stdout, stderr, code } = helps.get(command)!;
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toContain(`zkagent ${command}`);
  });

  test("zkagent --help exits 0 and lists the commands", async () => {
    const { stdout, code } = await cli(["--help"]);
    expect(code).toBe(0);
    for (const command of ["serve", "keys", "identity", "prove", "sign", "demo"]) expect(stdout).toContain(command);
  });

  test("an unknown command exits 2 with a message on stderr", async () => {
    const { stderr, stdout, code } = await cli(["frobnicate"]);
    expect(code).toBe(2);
    expect(stderr).toContain('unknown command "frobnicate"');
    expect(stdout).toBe("");
  });
});
