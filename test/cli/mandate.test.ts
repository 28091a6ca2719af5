// zkagent principal new / mandate sign, as separate processes.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createPublicKey, verify } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { verifyMandateJws } from "../../src/mandates/principal";
import type { Mandate } from "../../src/mandates/schema";

// Every test starts CLI processes; on a shared machine each takes seconds.
setDefaultTimeout(30_000);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "zkagent-mandate-cli-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(args: string[]) {
  const proc = Bun.spawn(["bun", "src/cli/index.ts", ...args], { env: { ...process.env, LOG_LEVEL: "silent" }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

describe("zkagent principal / mandate", () => {
  test("principal new --json, then mandate sign with the key file: a JWS the service accepts for that agent", async () => {
    const created = await cli(["principal", "new", "--json"]);
    expect(created.code).toBe(0);
    const principal = JSON.parse(created.stdout);
    expect(Object.keys(principal).sort()).toEqual(["principal_key", "principal_secret"]);
    const keyFile = join(dir, "principal.json");
    writeFileSync(keyFile, created.stdout, { mode: 0o600 });
    const bareFile = join(dir, "principal.secret");
    writeFileSync(bareFile, `${principal.principal_secret}\n`, { mode: 0o600 });

    const mandate: Mandate = { limits: [{ action: "purchase", currency: "EUR", max_total: "100.00", period: "day" }] };
    const args = [
      "mandate",
      "sign",
      "--key-id",
      "0123456789abcdef",
      "--agent-id",
      "shopper-1",
      "--commitment",
      "777",
      "--mandate",
      JSON.stringify(mandate),
      "--iat",
      "1795000000",
    ];
    const fromJson = await cli([...args, "--principal-secret-file", keyFile]);
    const fromBare = await cli([...args, "--principal-secret-file", bareFile, "--json"]);
    expect(fromJson.code).toBe(0);
    expect(fromBare.code).toBe(0);
    const jws = fromJson.stdout.trim();
    // Ed25519 is deterministic: the same key and payload give the same JWS.
    expect(JSON.parse(fromBare.stdout)).toEqual({ mandate_jws: jws });
    expect(
      await verifyMandateJws(jws, { keyId: "0123456789abcdef", agentId: "shopper-1", identityCommitment: "777", principalKey: principal.principal_key }),
    ).toEqual({
      ok: true,
      value: { mandate, iat: 1_795_000_000 },
    });
    const [header, payload, signature] = jws.split(".");
    const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: principal.principal_key }, format: "jwk" });
    expect(verify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature!, "base64url"))).toBe(true);
  });

  test("a mistyped mandate, a missing option or an unreadable key file is a usage error (exit 2)", async () => {
    const keyFile = join(dir, "k.json");
    writeFileSync(keyFile, (await cli(["principal", "new", "--json"])).stdout);
    const base = ["mandate", "sign", "--principal-secret-file", keyFile, "--key-id", "k", "--agent-id", "a", "--commitment", "1"];
    const typo = await cli([...base, "--mandate", '{"limits":[{"max_count":1,"period":"day","actoin":"x"}]}']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown members limits[0].actoin");
    expect((await cli([...base])).stderr).toContain("--mandate is required");
    expect((await cli(["mandate", "sign", "--principal-secret-file", keyFile, "--agent-id", "a", "--commitment", "1", "--mandate", "{}"])).stderr).toContain(
      "--key-id is required",
    );
    expect((await cli([...base, "--mandate", "[1"])).stderr).toContain("--mandate must be a JSON object");
    const signWith = (keyFile: string) =>
      cli(["mandate", "sign", "--principal-secret-file", keyFile, "--key-id", "k", "--agent-id", "a", "--commitment", "1", "--mandate", "{}"]);
    const missing = await signWith(join(dir, "none"));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("cannot read --principal-secret-file");
    writeFileSync(join(dir, "bad"), "not-a-key");
    const bad = await signWith(join(dir, "bad"));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("signing secret must be 32 bytes");
  }, 60_000); // seven process starts
});
