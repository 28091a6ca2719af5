// The agent SDK is for agent developers on Node as well as Bun: bundled for
// Node, it must create an identity and prove from any working directory, and
// the proof must verify with the independent reference verifier.
import { expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { verificationKey } from "../../src/verifier/circuit-key";
import { publicSignals } from "../../src/identity/encoding";
import { referenceVerify } from "../support/snarkjs";
import { createSemaphoreIdentity } from "../../src/agent";
import { semaphoreGroup, stockSemaphore } from "./stock-semaphore";

// Every test here starts processes; on a loaded two-core machine (CI, or
// several developers at once) that passed bun's 5 s default with nothing wrong.
setDefaultTimeout(30_000);

test("the SDK bundled for Node proves under node, from another working directory", async () => {
  // Inside the repo so the bundle's bare imports (snarkjs, circomlibjs) resolve from node_modules.
  const outdir = join(import.meta.dir, "../../build/sdk-node-test");
  rmSync(outdir, { recursive: true, force: true });
  const built = await Bun.build({ entrypoints: [join(import.meta.dir, "../../src/agent/index.ts")], outdir, target: "node", packages: "external" });
  expect(built.success).toBe(true);

  const nonce = "5a".repeat(31);
  const context = { amount: 20, currency: "EUR" };
  const script = `
    import { createIdentity, prove } from ${JSON.stringify(join(outdir, "index.js"))};
    const id = await createIdentity();
    const proof = await prove({ secret: id.secret, nonce: ${JSON.stringify(nonce)}, action: "purchase", context: ${JSON.stringify(context)} });
    process.stdout.write(JSON.stringify({ commitment: id.identity_commitment, proof }));
    process.exit(0);`;
  const cwd = mkdtempSync(join(tmpdir(), "zkagent-node-"));
  const child = Bun.spawnSync(["node", "--input-type=module", "-e", script], { cwd, stdout: "pipe", stderr: "pipe" });
  rmSync(cwd, { recursive: true, force: true });
  expect(child.stderr.toString()).toBe("");
  expect(child.exitCode).toBe(0);

  const { commitment, proof } = JSON.parse(child.stdout.toString());
  const signals = publicSignals({ identityCommitment: BigInt(commitment), nonce, action: "purchase", context });
  expect(await referenceVerify(verificationKey, signals, JSON.parse(proof))).toBe(true);
  const otherAction = publicSignals({ identityCommitment: BigInt(commitment), nonce, action: "refund", context });
  expect(await referenceVerify(verificationKey, otherAction, JSON.parse(proof))).toBe(false);
});

test("the SDK bundled for Node makes a group proof under node (pinned artifacts from the installed package) that the stock verifyProof accepts", async () => {
  const outdir = join(import.meta.dir, "../../build/sdk-node-group-test");
  rmSync(outdir, { recursive: true, force: true });
  const built = await Bun.build({ entrypoints: [join(import.meta.dir, "../../src/agent/index.ts")], outdir, target: "node", packages: "external" });
  expect(built.success).toBe(true);

  // Three members: the SDK's default anonymity floor.
  const ids = [createSemaphoreIdentity(), createSemaphoreIdentity(), createSemaphoreIdentity()];
  const members = ids.map((id) => id.identity_commitment);
  const challenge = {
    challenge_id: "ch_node",
    nonce: "5a".repeat(31),
    action: "purchase",
    group_id: "g",
    merkle_tree_root: semaphoreGroup(members).root.toString(),
    merkle_tree_depth: 2,
    message: "7",
    scope: "8",
    circuit_id: "semaphore-2",
  };
  const script = `
    import { proveGroupMembership } from ${JSON.stringify(join(outdir, "index.js"))};
    const proof = await proveGroupMembership(${JSON.stringify({ privateKey: ids[1]!.private_key, members, challenge })}, { precompute: false });
    process.stdout.write(JSON.stringify(proof));
    process.exit(0);`;
  const cwd = mkdtempSync(join(tmpdir(), "zkagent-node-"));
  const child = Bun.spawnSync(["node", "--input-type=module", "-e", script], { cwd, stdout: "pipe", stderr: "pipe" });
  rmSync(cwd, { recursive: true, force: true });
  expect(child.stderr.toString()).toBe("");
  expect(child.exitCode).toBe(0);
  const proof = JSON.parse(child.stdout.toString());
  expect(await stockSemaphore([{ verify: proof }, { verify: { ...proof, scope: "9" } }])).toEqual([true, false]);
});
