// The committed circuit artifacts are consistent and every public input is
// bound: snarkjs (under node) checks the zkey against the r1cs and the public phase-1 ptau, the committed
// verification key is the zkey's, and changing any single public input makes
// a valid proof fail under the reference verifier.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { referenceVerify, snarkjs } from "../support/snarkjs";
import { sampleProof } from "../support/proofs";

// Each of these runs snarkjs in a node process: seconds on a busy two-core machine.
setDefaultTimeout(60_000);

const ART = "circuits/artifacts";
const SNARKJS = ["node", "node_modules/snarkjs/build/cli.cjs"];
const committedVk = JSON.parse(readFileSync(`${ART}/verification_key.json`, "utf8"));
const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

async function run(args: string[]) {
  const proc = Bun.spawn([...SNARKJS, ...args], { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, output: stdout + stderr };
}

describe("committed artifacts", () => {
  test("snarkjs zkey verify accepts the zkey against the r1cs and the ptau", async () => {
    const { code, output } = await run([
      "zkey",
      "verify",
      `${ART}/agent_identity.r1cs`,
      "circuits/ptau/powersOfTau28_hez_final_09.ptau",
      `${ART}/agent_identity.zkey`,
    ]);
    expect(output).toContain("ZKey Ok!");
    expect(code).toBe(0);
  });

  test("verification_key.json equals the key exported from the zkey", async () => {
    const dir = mkdtempSync(join(tmpdir(), "zkagent-vk-"));
    try {
      const { code } = await run(["zkey", "export", "verificationkey", `${ART}/agent_identity.zkey`, join(dir, "vk.json")]);
      expect(code).toBe(0);
      expect(JSON.parse(readFileSync(join(dir, "vk.json"), "utf8"))).toEqual(committedVk);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the r1cs has 4 public inputs, 1 private input and no outputs", async () => {
    const info = await (snarkjs as any).r1cs.info(`${ART}/agent_identity.r1cs`, { info() {}, debug() {}, warn() {}, error() {} });
    expect(info.nPubInputs).toBe(4);
    expect(info.nPrvInputs).toBe(1);
    expect(info.nOutputs).toBe(0);
    expect(committedVk.nPublic).toBe(4);
    expect(committedVk.IC).toHaveLength(5);
  });

  test("no public input has a zero verification-key point (each appears in a constraint)", () => {
    for (const point of committedVk.IC.slice(1)) expect(point[2]).toBe("1");
  });
});

describe("every public input is constrained", () => {
  test("the sample proof verifies with its own inputs", async () => {
    const { proof, publicSignals } = await sampleProof();
    expect(await referenceVerify(committedVk, publicSignals, JSON.parse(proof))).toBe(true);
  });

  test.each([
    [0, "identity_commitment"],
    [1, "nonce"],
    [2, "action_hash"],
    [3, "context_hash"],
  ])("changing input %d (%s) alone makes the proof fail", async (index) => {
    const { proof, publicSignals } = await sampleProof();
    for (const delta of [1n, R - 1n]) {
      const changed = [...publicSignals];
      changed[index] = String((BigInt(changed[index]!) + delta) % R);
      expect(await referenceVerify(committedVk, changed, JSON.parse(proof))).toBe(false);
    }
  });
});
