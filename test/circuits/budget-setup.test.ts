// The budget spend circuit's shipped setup (circuits/artifacts/budget_spend/,
// docs/trust.md "Budgets: the spend circuit's setup"): the ceremony verifies
// from the r1cs through the pinned phase 1 to the verification key; one spend
// proof made by the project's own prover is accepted by snarkjs groth16
// verify run under Node (the independent reference) and by the project's
// verifier, which refuses it with each public signal changed alone.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spendPublicSignals } from "../../src/budgets/statement";
import { BUDGET_CEREMONY } from "../../src/ceremony/circuits";
import { shippedCeremony, verifyCeremony } from "../../src/ceremony/ceremony";
import { FIELD_ORDER_R as R } from "../../src/identity/field";
import { createProver } from "../../src/prover";
import { Groth16Verifier } from "../../src/verifier";
import { scenario } from "../support/budget-spend";

// snarkjs zkey verify of 16,031 constraints, and one proof: tens of seconds on a busy two-core machine.
setDefaultTimeout(600_000);

const DIR = "circuits/artifacts/budget_spend";
const vk = JSON.parse(readFileSync(`${DIR}/verification_key.json`, "utf8"));
const work = mkdtempSync(join(tmpdir(), "zkagent-budget-setup-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// One proof for the whole file (a proof of this circuit takes seconds): a later spend, the member's leaf last.
const spend = scenario({ position: 5, spent: 2000n, amount: 1500n });
const made = (async () => {
  const prover = await createProver(
    { zkey: new Uint8Array(readFileSync(`${DIR}/budget_spend.zkey`)), wasm: new Uint8Array(readFileSync(`${DIR}/budget_spend.wasm`)) },
    { precompute: false },
  );
  try {
    return await prover.prove(spend.input);
  } finally {
    prover.close();
  }
})();

describe("the shipped ceremony", () => {
  test("zkagent ceremony verify --circuit budget_spend holds: pinned phase 1, every contribution, the beacon last, the vk", async () => {
    const report = await verifyCeremony(await shippedCeremony(BUDGET_CEREMONY), { circuit: BUDGET_CEREMONY });
    expect(report.checks.filter((c) => !c.ok)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.contributions.filter((c) => c.beacon === undefined).length).toBeGreaterThanOrEqual(1);
    expect(report.contributions.at(-1)!.beacon).toBeDefined();
  });
  test("the key has 13 public signals, none with a zero point", () => {
    expect(vk.nPublic).toBe(13);
    expect(vk.IC).toHaveLength(14);
    for (const point of vk.IC.slice(1)) expect(point[2]).toBe("1");
  });
});

describe("a spend proof from the project's prover", () => {
  test("its public signals are the statement's, in snarkjs order", async () => {
    const { publicSignals } = await made;
    expect(publicSignals).toEqual(spendPublicSignals(spend.nullifier, spend.commitment, spend.pub));
  });
  test("snarkjs groth16 verify under Node accepts it with the published verification key", async () => {
    const { proof, publicSignals } = await made;
    writeFileSync(join(work, "vk.json"), JSON.stringify(vk));
    writeFileSync(join(work, "public.json"), JSON.stringify(publicSignals));
    writeFileSync(join(work, "proof.json"), JSON.stringify(proof));
    const run = Bun.spawn(
      ["node", "node_modules/snarkjs/build/cli.cjs", "groth16", "verify", join(work, "vk.json"), join(work, "public.json"), join(work, "proof.json")],
      {
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const [out, code] = await Promise.all([new Response(run.stdout).text(), run.exited]);
    expect(out).toContain("OK!");
    expect(code).toBe(0);
  });
  test("the project's verifier accepts it, and refuses it with each public signal changed alone", async () => {
    const { proof, publicSignals } = await made;
    const verifier = await Groth16Verifier.fromVerificationKey(vk);
    expect(verifier.verify(proof, publicSignals).ok).toBe(true);
    for (let i = 0; i < publicSignals.length; i++) {
      const changed = [...publicSignals];
      changed[i] = ((BigInt(changed[i]!) + 1n) % R).toString();
      expect({ signal: i, ok: verifier.verify(proof, changed).ok }).toEqual({ signal: i, ok: false });
    }
  });
});
