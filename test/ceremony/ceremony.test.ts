// Phase 2 as a ceremony anyone can check (issue 17): the shipped circuit
// verifies through its whole chain and names its contributions and beacon;
// a zkey with one byte changed in a contribution, a phase-1 file that is not
// the pinned one, or a transcript that hides a contribution, make `ceremony
// verify` exit 1. And a new ceremony run by the CLI verifies.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { zkeyContributions } from "../../src/ceremony/contributions";
import { blake2b512, PTAU_BLAKE2B512 } from "../../src/ceremony/ptau";
import { vkHash } from "../../src/receipts/circuit";
import { verificationKey } from "../../src/verifier/circuit-key";

setDefaultTimeout(60_000);

const CLI = ["bun", "src/cli/index.ts"];
const ART = "circuits/artifacts";
const PTAU = "circuits/ptau/powersOfTau28_hez_final_09.ptau";
let tmp: string;

beforeAll(() => (tmp = mkdtempSync(join(tmpdir(), "zkagent-ceremony-"))));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function cli(...args: string[]) {
  const proc = Bun.spawn([...CLI, ...args], { env: { ...process.env, LOG_LEVEL: "silent" }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** Byte offset of section `type`'s data in a snarkjs binary file (magic, version, n, then {type u32, size u64, data}). */
function sectionOffset(bytes: Uint8Array, type: number): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sections = view.getUint32(8, true);
  let at = 12;
  for (let i = 0; i < sections; i++) {
    const t = view.getUint32(at, true);
    const size = Number(view.getBigUint64(at + 4, true));
    if (t === type) return at + 12;
    at += 12 + size;
  }
  throw new Error(`no section ${type}`);
}

function copyCeremony(name: string): string {
  const dir = join(tmp, name);
  cpSync(ART, dir, { recursive: true });
  return dir;
}

describe("the shipped circuit", () => {
  test("the committed phase-1 file is the pinned public one", () => {
    expect(blake2b512(readFileSync(PTAU))).toBe(PTAU_BLAKE2B512);
    expect(readFileSync(PTAU).byteLength).toBe(672_920);
  });

  test("ceremony verify passes and prints both contributions, the beacon and the service's vk_hash", async () => {
    const { stdout, code } = await cli("ceremony", "verify", "--json");
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(report.ok).toBe(true);
    expect(report.checks.map((c: { check: string }) => c.check)).toEqual([
      "circuit",
      "r1cs",
      "wasm",
      "ptau",
      "steps",
      "init",
      "zkey",
      "contributions",
      "transcript",
      "vk",
    ]);
    expect(report.vk_hash).toBe(vkHash(verificationKey));
    const transcript = JSON.parse(readFileSync(`${ART}/transcript.json`, "utf8"));
    const steps = transcript.steps.filter((s: { step: string }) => s.step !== "init");
    expect(report.contributions.map((c: { hash: string }) => c.hash)).toEqual(steps.map((s: { hash: string }) => s.hash));
    expect(report.contributions.filter((c: { beacon?: string }) => c.beacon === undefined)).toHaveLength(2);
    expect(report.contributions.at(-1)).toMatchObject({ beacon: "5f695ab12de7586673dd6a42fccd63f3fad77293b2ec8d66f19e3a2592be70fd", iterations_exp: 10 });

    const text = await cli("ceremony", "verify");
    expect(text.code).toBe(0);
    for (const step of steps) expect(text.stdout).toContain(`${step.name}: ${step.hash}`);
    expect(text.stdout).toContain("beacon 5f695ab12de7586673dd6a42fccd63f3fad77293b2ec8d66f19e3a2592be70fd, 2^10 iterations");
  });

  test("a zkey with one byte changed in a contribution does not verify (exit 1)", async () => {
    const dir = copyCeremony("tampered");
    const zkey = new Uint8Array(readFileSync(join(dir, "agent_identity.zkey")));
    // Section 10: csHash (64 bytes), the number of contributions (u32), then contribution #1's deltaAfter point.
    zkey[sectionOffset(zkey, 10) + 64 + 4 + 7]! ^= 0x01;
    writeFileSync(join(dir, "agent_identity.zkey"), zkey);
    const { stdout, code } = await cli("ceremony", "verify", dir);
    expect(code).toBe(1);
    expect(stdout).toMatch(/FAIL\s+zkey/);
    expect(stdout).toContain("does NOT verify");
  });

  test("a phase-1 file that is not the pinned one makes verify exit 1", async () => {
    const other = join(tmp, "other.ptau");
    const bytes = new Uint8Array(readFileSync(PTAU));
    bytes[bytes.length - 1]! ^= 0x01;
    writeFileSync(other, bytes);
    const { stdout, code } = await cli("ceremony", "verify", "--ptau", other);
    expect(code).toBe(1);
    expect(stdout).toMatch(/FAIL\s+ptau\s+.*is not the pinned phase-1 file/);
  });

  test("a transcript that leaves out a contribution does not verify", async () => {
    const dir = copyCeremony("short-transcript");
    const transcript = JSON.parse(readFileSync(join(dir, "transcript.json"), "utf8"));
    transcript.steps.splice(1, 1);
    writeFileSync(join(dir, "transcript.json"), JSON.stringify(transcript));
    const { stdout, code } = await cli("ceremony", "verify", dir, "--json");
    expect(code).toBe(1);
    expect(JSON.parse(stdout).checks.find((c: { check: string }) => c.check === "contributions").ok).toBe(false);
  });

  test("a verification key that is not the zkey's does not verify", async () => {
    const dir = copyCeremony("other-vk");
    const vk = JSON.parse(readFileSync(join(dir, "verification_key.json"), "utf8"));
    vk.IC.reverse();
    writeFileSync(join(dir, "verification_key.json"), JSON.stringify(vk));
    const { stdout, code } = await cli("ceremony", "verify", dir, "--json");
    expect(code).toBe(1);
    expect(JSON.parse(stdout).checks.find((c: { check: string }) => c.check === "vk").ok).toBe(false);
  });
});

describe("a new ceremony from the command line", () => {
  test("init, two contributions, a beacon: verify lists them; a closed or contribution-less ceremony is refused", async () => {
    const dir = join(tmp, "new");
    expect((await cli("ceremony", "init", "--out", dir)).code).toBe(0);
    // No contribution yet: anyone knows this key's toxic waste.
    const bare = JSON.parse((await cli("ceremony", "verify", dir, "--json")).stdout);
    expect(bare.ok).toBe(false);
    expect(bare.checks.find((c: { check: string }) => c.check === "contributions").detail).toContain("none");
    expect((await cli("ceremony", "beacon", dir, "--beacon", "ab", "--iterations", "10")).code).toBe(1);

    const first = await cli("ceremony", "contribute", dir, "--name", "alice", "--json");
    const second = await cli("ceremony", "contribute", dir, "--name", "bob", "--json");
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout).hash).toMatch(/^[0-9a-f]{128}$/);
    expect(JSON.parse(first.stdout).hash).not.toBe(JSON.parse(second.stdout).hash);
    expect((await cli("ceremony", "beacon", dir, "--beacon", "0123abcd", "--iterations", "10")).code).toBe(0);

    const { stdout, code } = await cli("ceremony", "verify", dir);
    expect(code).toBe(0);
    expect(stdout).toContain(`contribution #1 alice: ${JSON.parse(first.stdout).hash}`);
    expect(stdout).toContain(`contribution #2 bob: ${JSON.parse(second.stdout).hash}`);
    expect(stdout).toContain("beacon 0123abcd, 2^10 iterations");
    // The beacon closes it.
    const late = await cli("ceremony", "contribute", dir, "--name", "carol");
    expect(late.code).toBe(1);
    expect(late.stderr).toContain("closed");
  });

  test("entropy cannot be given, names must be printable, init refuses a non-pinned ptau", async () => {
    const dir = join(tmp, "refusals");
    const bad = join(tmp, "bad.ptau");
    writeFileSync(bad, "not a ptau");
    const refused = await cli("ceremony", "init", "--out", dir, "--ptau", bad);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("not the pinned phase-1 file");
    expect((await cli("ceremony", "init", "--out", dir)).code).toBe(0);
    expect((await cli("ceremony", "contribute", dir, "--entropy", "chosen")).code).toBe(2);
    const named = await cli("ceremony", "contribute", dir, "--name", "evil\u001b[2J");
    expect(named.code).toBe(1);
    expect(named.stderr).not.toContain("\u001b");
  });
});

test("the contributions read from the zkey (names, hashes, beacon) are what snarkjs's own verification prints for it", async () => {
  const { zKey } = await import("../../src/ceremony/snarkjs");
  const zkey = new Uint8Array(readFileSync(`${ART}/agent_identity.zkey`));
  const log: string[] = [];
  const logger = { debug() {}, info: (m: string) => log.push(m), warn() {}, error() {} };
  const mem = (data: Uint8Array) => ({ type: "mem" as const, data });
  expect(await zKey.verifyFromR1cs(mem(readFileSync(`${ART}/agent_identity.r1cs`)), mem(readFileSync(PTAU)), mem(zkey), logger)).toBe(true);
  // snarkjs's log: "contribution #i NAME:" then the hash in rows of hex words; "Beacon generator: HEX".
  const fromLog = log
    .map((line) => /^contribution #(\d+) ?([\s\S]*?):\n([\s\S]*)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ index: Number(m[1]), name: m[2], hash: m[3]!.replace(/\s+/g, "") }))
    .sort((a, b) => a.index - b.index);
  const read = await zkeyContributions(zkey);
  expect(fromLog).toHaveLength(3);
  expect(read.map(({ index, name, hash }) => ({ index, name, hash }))).toEqual(fromLog);
  expect(read.at(-1)!.beacon).toBe(log.find((l) => l.startsWith("Beacon generator: "))!.slice("Beacon generator: ".length));
});

describe("--circuit", () => {
  test("an unknown circuit is a usage error naming the known ones", async () => {
    const { code, stderr } = await cli("ceremony", "init", "--out", join(tmp, "nope"), "--circuit", "nope");
    expect(code).toBe(2);
    expect(stderr).toContain("--circuit must be one of agent_identity, budget_spend");
  });
  test("budget_spend takes its own pinned phase 1: the agent circuit's public 2^9 file is refused by hash before anything is written", async () => {
    const out = join(tmp, "budget");
    const { code, stderr } = await cli("ceremony", "init", "--out", out, "--circuit", "budget_spend", "--ptau", PTAU);
    expect(code).toBe(1);
    expect(stderr).toContain("is not the pinned phase-1 file");
    expect(stderr).toContain("a92b423171b063ed");
    expect(existsSync(out)).toBe(false);
  });
});
