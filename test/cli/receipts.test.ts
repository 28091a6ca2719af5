// `zkagent receipts …` and `zkagent receipt verify` as a user runs them:
// separate processes on a temporary SQLite file (and a JWKS served on port 0).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { receiptFor } from "../../src/receipts/service";
import { KEY_REFRESH_MS, ReceiptSigner } from "../../src/receipts/signer";
import { openSqlite } from "../../src/store/sqlite";
import { decidedChallenge } from "../support/receipts";

const CLI = ["bun", "src/cli/index.ts"];
/** Each test spawns several CLI processes (~0.5 s each, more on a loaded machine). */
const SPAWNS_TIMEOUT_MS = 30_000;
const SECRET = "a receipt key secret of more than thirty-two characters";
let dir: string;
let db: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "zkagent-receipts-cli-"));
  db = join(dir, "zkagent.db");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[], options: { env?: Record<string, string>; stdin?: string } = {}) {
  const proc = Bun.spawn([...CLI, ...args], {
    env: { ...process.env, DATABASE_URL: db, LOG_LEVEL: "silent", RECEIPT_KEY_SECRET: SECRET, ...options.env },
    stdin: options.stdin === undefined ? "ignore" : new Blob([options.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}
const json = (stdout: string) => JSON.parse(stdout.trim());

/** A decided challenge in the CLI's database and its receipt, signed as the server would. */
async function signedReceipt(): Promise<string> {
  const store = openSqlite(db);
  try {
    const record = await decidedChallenge(store, "7");
    return (await receiptFor({ store, signer: new ReceiptSigner(store, { secret: SECRET }), issuer: "https://zk.example" }, record))!;
  } finally {
    await store.close();
  }
}

async function jwksFile(): Promise<string> {
  const store = openSqlite(db);
  try {
    const path = join(dir, `jwks-${crypto.randomUUID()}.json`);
    writeFileSync(path, JSON.stringify(await new ReceiptSigner(store, { secret: SECRET }).jwks()));
    return path;
  } finally {
    await store.close();
  }
}

/** Moves the active key's creation time back past the settle time, as if the rotation were old. */
async function settleAfterRotation() {
  const { Database } = await import("bun:sqlite");
  const raw = new Database(db);
  raw.run("UPDATE signing_keys SET created_at = created_at - ? WHERE state = 'active'", [KEY_REFRESH_MS + 1_000]);
  raw.close();
}

describe("zkagent receipts", () => {
  test(
    "list on an empty database says so; rotate creates the first key",
    async () => {
      expect(json((await cli(["receipts", "list", "--json"])).stdout)).toEqual({ keys: [] });
      const rotated = await cli(["receipts", "rotate", "--json"]);
      expect(rotated.code).toBe(0);
      const { active, previous, refresh_seconds } = json(rotated.stdout);
      expect(previous).toBeNull();
      expect(refresh_seconds).toBe(5);
      const { keys } = json((await cli(["receipts", "list", "--json"])).stdout);
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatchObject({ kid: active, state: "active", retired_at: null, public_jwk: { kty: "OKP", crv: "Ed25519", kid: active } });
    },
    SPAWNS_TIMEOUT_MS,
  );

  test(
    "list never prints private key material, in either form",
    async () => {
      const store = openSqlite(db);
      const stored = (await store.listSigningKeys()).map((k) => k.privateKey);
      await store.close();
      for (const args of [
        ["receipts", "list"],
        ["receipts", "list", "--json"],
      ]) {
        const { stdout } = await cli(args);
        for (const privateKey of stored) expect(stdout).not.toContain(privateKey.split(":")[1]!.slice(0, 24));
        expect(stdout).not.toContain('"d"');
      }
    },
    SPAWNS_TIMEOUT_MS,
  );

  test(
    "rotate keeps the old key published; retire refuses the active key, withdraws the old one",
    async () => {
      const before = json((await cli(["receipts", "list", "--json"])).stdout).keys.find((k: any) => k.state === "active").kid;
      const { active } = json((await cli(["receipts", "rotate", "--json"])).stdout);
      const states = Object.fromEntries(json((await cli(["receipts", "list", "--json"])).stdout).keys.map((k: any) => [k.kid, k.state]));
      expect(states[before]).toBe("published");
      expect(states[active]).toBe("active");

      // Right after a rotation, nodes may still sign with the old key: retiring it is refused.
      const early = await cli(["receipts", "retire", before]);
      expect(early.code).toBe(1);
      expect(early.stderr).toContain("nodes may still sign with earlier keys");
      await settleAfterRotation();

      const refused = await cli(["receipts", "retire", active]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("rotate first");
      const retired = await cli(["receipts", "retire", before, "--json"]);
      expect(retired.code).toBe(0);
      expect(json(retired.stdout)).toEqual({ kid: before, state: "retired" });
      expect((await cli(["receipts", "retire", "no-such-kid"])).code).toBe(1);
      // One kid in 64 starts with "-" (base64url): it is the operand, not an unknown option (that was a usage error, exit 2).
      const dashed = await cli(["receipts", "retire", "-Ab3_no-such-kid", "--json"]);
      expect(dashed.code).toBe(1);
      expect(json(dashed.stdout)).toEqual({ error: "no signing key -Ab3_no-such-kid" });
    },
    SPAWNS_TIMEOUT_MS,
  );

  test(
    "rotate seals the new key with RECEIPT_KEY_SECRET: without it no process can sign",
    async () => {
      const store = openSqlite(db);
      try {
        expect((await store.activeSigningKey())!.privateKey.startsWith("aes256gcm:")).toBe(true);
        await expect(new ReceiptSigner(store).activeKid()).rejects.toThrow(/RECEIPT_KEY_SECRET/);
        expect(await new ReceiptSigner(store, { secret: SECRET }).activeKid()).toBe((await store.activeSigningKey())!.kid);
      } finally {
        await store.close();
      }
    },
    SPAWNS_TIMEOUT_MS,
  );

  test(
    "usage errors exit 2",
    async () => {
      expect((await cli(["receipts", "retire"])).code).toBe(2);
      expect((await cli(["receipts", "frobnicate"])).code).toBe(2);
      expect((await cli(["receipts", "list"], { env: { RECEIPT_KEY_SECRET: "short" } })).code).toBe(2);
    },
    SPAWNS_TIMEOUT_MS,
  );
});

describe("zkagent receipt verify", () => {
  test(
    "valid against a JWKS file: exit 0 and the claims; --json gives the SDK's result",
    async () => {
      const receipt = await signedReceipt();
      const file = await jwksFile();
      const human = await cli(["receipt", "verify", receipt, "--jwks", file]);
      expect(human.code).toBe(0);
      expect(human.stdout).toContain('"status": "verified"');
      const machine = await cli(["receipt", "verify", receipt, "--jwks", file, "--json"]);
      expect(machine.code).toBe(0);
      expect(json(machine.stdout)).toMatchObject({ valid: true, claims: { iss: "https://zk.example", status: "verified" } });
    },
    SPAWNS_TIMEOUT_MS,
  );

  test(
    "from stdin (-) and with the JWKS fetched from a URL",
    async () => {
      const receipt = await signedReceipt();
      const jwks = await Bun.file(await jwksFile()).text();
      const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(jwks, { headers: { "content-type": "application/json" } }) });
      try {
        const result = await cli(["receipt", "verify", "-", "--jwks", `http://127.0.0.1:${server.port}/.well-known/jwks.json`, "--json"], {
          stdin: `${receipt}\n`,
        });
        expect(result.code).toBe(0);
        expect(json(result.stdout).valid).toBe(true);
      } finally {
        server.stop(true);
      }
    },
    SPAWNS_TIMEOUT_MS,
  );

  test(
    "a changed receipt exits 1 with the reason; an unreadable JWKS exits 2",
    async () => {
      const receipt = await signedReceipt();
      const file = await jwksFile();
      const [h, p, s] = receipt.split(".") as [string, string, string];
      const claims = JSON.parse(Buffer.from(p, "base64url").toString());
      const forged = [h, Buffer.from(JSON.stringify({ ...claims, sub: "mallory" })).toString("base64url"), s].join(".");
      const result = await cli(["receipt", "verify", forged, "--jwks", file, "--json"]);
      expect(result.code).toBe(1);
      expect(json(result.stdout)).toMatchObject({ valid: false, reason: "bad_signature" });
      expect((await cli(["receipt", "verify", receipt, "--jwks", join(dir, "missing.json")])).code).toBe(2);
      expect((await cli(["receipt", "verify", receipt])).code).toBe(2);
    },
    SPAWNS_TIMEOUT_MS,
  );

  test(
    'a malformed key set ({"keys":[null]}, a non-string kid) is an input error: exit 2, not 1',
    async () => {
      const receipt = await signedReceipt();
      for (const jwks of ['{"keys":[null]}', '{"keys":[{"kid":7}]}', '{"keys":{}}', "[]", "not json"]) {
        const file = join(dir, `bad-${crypto.randomUUID()}.json`);
        writeFileSync(file, jwks);
        const result = await cli(["receipt", "verify", receipt, "--jwks", file]);
        expect(result.code).toBe(2);
        expect(result.stderr).toContain("not a JWKS");
        expect(result.stderr).not.toContain("TypeError");
      }
    },
    SPAWNS_TIMEOUT_MS,
  );

  /** A C0 control other than newline, DEL, a C1 control, or a bidi override: what must never reach the terminal raw. */
  const rawControl = (text: string) => [...text].some((c) => c !== "\n" && (c < " " || (c >= "\u007f" && c <= "\u009f") || c === "\u202e"));

  test(
    "a crafted kid with CR and escape codes is printed escaped, never raw",
    async () => {
      const evil = "\r\u001b[2J\u001b[1;1HValid receipt\u009b31m\u202e";
      const header = Buffer.from(JSON.stringify({ alg: "EdDSA", typ: "zkagent-receipt+jwt", kid: evil })).toString("base64url");
      const forged = `${header}.${Buffer.from("{}").toString("base64url")}.c2ln`;
      const file = await jwksFile();
      for (const args of [[], ["--json"]]) {
        const result = await cli(["receipt", "verify", forged, "--jwks", file, ...args]);
        expect(result.code).toBe(1);
        const printed = result.stdout + result.stderr;
        expect(rawControl(printed)).toBe(false);
        expect(printed).toContain("\\u001b[2J");
      }
      // Other commands that echo their input escape it too.
      const unknown = await cli(["receipt", "\u001b]0;pwned\u0007"]);
      expect(unknown.code).toBe(2);
      expect(rawControl(unknown.stderr)).toBe(false);
      expect(unknown.stderr).toContain("\\u001b]0;pwned\\u0007");
    },
    SPAWNS_TIMEOUT_MS,
  );
});
