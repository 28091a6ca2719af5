// scripts/pack.ts's guard on what a package carries: a bundle that reaches a
// module its package must not carry stops the pack, naming the module; the
// real packages' bundles pass it (test/packages/packages.test.ts installs them).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundle, PACKAGES } from "../../scripts/pack";

const stage = mkdtempSync(join(tmpdir(), "zkagent-pack-"));
afterAll(() => rmSync(stage, { recursive: true, force: true }));
const spec = (name: string) => PACKAGES.find((p) => p.name === name)!;

test("the merchant's bundle stays clear of the prover, ZK libraries and the store; a rule it breaks stops the pack, naming the module", async () => {
  const merchant = spec("@zkagent/merchant");
  const inputs = await bundle(merchant, join(stage, "ok"));
  expect(inputs).toContain("src/merchant/adapters/express.ts");
  expect(inputs).toContain("src/merchant/client.ts");
  expect(inputs.some((input) => /^src\/(agent|prover|store)\//.test(input) || input.includes("snarkjs"))).toBe(false);
  await expect(bundle({ ...merchant, forbidden: [/^src\/http-auth\/statement\.ts$/] }, join(stage, "refused"))).rejects.toThrow(
    "@zkagent/merchant reaches modules it must not carry:\n  src/http-auth/statement.ts",
  );
});

test("the agent's bundle (SDK and CLI) carries the prover and never the store, the HTTP service or the Semaphore artifacts", async () => {
  const inputs = await bundle(spec("@zkagent/agent"), join(stage, "agent"));
  expect(inputs).toContain("src/cli/agent.ts");
  expect(inputs).toContain("src/prover/index.ts");
  expect(inputs.filter((input) => /^src\/(store|http|modules)\/|semaphore-artifacts\/|node_modules\/elysia\//.test(input))).toEqual([]);
});
