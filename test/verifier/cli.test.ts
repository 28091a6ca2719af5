// `zkagent verify` (src/cli/verify.ts): exit codes 0 / 1 / 2 like snarkjs.
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../../src/cli/args.ts";
import { verifyCommand } from "../../src/cli/verify.ts";
import { toCompactProof } from "../../src/verifier/encoding.ts";
import { agentIdentity, proofPool } from "./pool.ts";

let dir: string;
const file = (name: string, content: unknown) => {
  const p = join(dir, name);
  writeFileSync(p, typeof content === "string" ? content : JSON.stringify(content));
  return p;
};
let vk: string, proof: string, pub: string, wrongPub: string, compact: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "zkagent-verify-"));
  const [e, other] = await proofPool(agentIdentity, 2);
  vk = file("vk.json", agentIdentity.vkey);
  proof = file("proof.json", e!.proof);
  compact = file("proof.txt", toCompactProof(e!.proof) + "\n");
  pub = file("public.json", e!.publicSignals);
  wrongPub = file("wrong.json", other!.publicSignals);
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = async (argv: string[]) => {
  const out: string[] = [];
  const log = spyOn(console, "log").mockImplementation((...a) => void out.push(a.join(" ")));
  const err = spyOn(console, "error").mockImplementation((...a) => void out.push(a.join(" ")));
  try {
    return { code: await verifyCommand(argv), out: out.join("\n") };
  } catch (error) {
    // Usage errors end the process with exit 2 in src/cli/index.ts.
    if (error instanceof UsageError) return { code: 2, out: error.message };
    throw error;
  } finally {
    log.mockRestore();
    err.mockRestore();
  }
};

/** verifyCommand with --json: its exit code and the one JSON object it wrote on stdout (and nothing through console). */
const runJson = async (argv: string[]) => {
  const written: string[] = [];
  const write = spyOn(process.stdout, "write").mockImplementation(((chunk: string, callback?: () => void) => {
    written.push(String(chunk));
    callback?.();
    return true;
  }) as typeof process.stdout.write);
  const log = spyOn(console, "log");
  const err = spyOn(console, "error");
  try {
    const code = await verifyCommand([...argv, "--json"]);
    expect(log).not.toHaveBeenCalled();
    expect(err).not.toHaveBeenCalled();
    expect(written).toHaveLength(1);
    return { code, json: JSON.parse(written[0]!) };
  } finally {
    write.mockRestore();
    log.mockRestore();
    err.mockRestore();
  }
};

describe("zkagent verify --json", () => {
  test("one JSON object: valid (exit 0), invalid with the reason (exit 1), a file error (exit 2)", async () => {
    expect(await runJson(["--vk", vk, "--proof", proof, "--public", pub])).toEqual({ code: 0, json: { valid: true } });
    expect(await runJson(["--vk", vk, "--proof", proof, "--public", wrongPub])).toEqual({ code: 1, json: { valid: false, reason: "proof_rejected" } });
    const missing = await runJson(["--vk", join(dir, "missing.json"), "--proof", proof, "--public", pub]);
    expect(missing.code).toBe(2);
    expect(missing.json.error).toContain("cannot read input");
  });
});

describe("zkagent verify", () => {
  test("valid proof: exit 0 and OK!", async () => {
    expect(await run(["--vk", vk, "--proof", proof, "--public", pub])).toEqual({ code: 0, out: "OK!" });
    expect((await run([`--vk=${vk}`, `--proof=${compact}`, `--public=${pub}`])).code).toBe(0);
  });
  test("invalid proof: exit 1 with the reason", async () => {
    const r = await run(["--vk", vk, "--proof", proof, "--public", wrongPub]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("proof_rejected");
    const bad = await run(["--vk", vk, "--proof", file("bad.json", "{}"), "--public", pub]);
    expect(bad).toEqual({ code: 1, out: "Invalid proof: invalid_proof_format" });
  });
  test("usage and file errors: exit 2", async () => {
    expect((await run(["--vk", vk, "--proof", proof])).code).toBe(2);
    expect((await run(["--vk", vk, "--proof", proof, "--public", pub, "--x", "1"])).code).toBe(2);
    expect((await run(["--vk", join(dir, "missing.json"), "--proof", proof, "--public", pub])).code).toBe(2);
    const badKey = await run(["--vk", file("badvk.json", { protocol: "plonk" }), "--proof", proof, "--public", pub]);
    expect(badKey.code).toBe(2);
    expect(badKey.out).toContain("invalid verification key");
  });
});
