// scripts/pack.ts's guard on what a package carries: a bundle that reaches a
// module its package must not carry stops the pack, naming the module; the
// real packages' bundles pass it (test/packages/packages.test.ts installs them).
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { bundle, PACKAGES, scrubMachinePaths } from "../../scripts/pack";

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

const ROOT = resolve(import.meta.dir, "../..");
const filesHolding = (dir: string, text: string) =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && readFileSync(join(entry.parentPath, entry.name), "latin1").includes(text))
    .map((entry) => entry.name);

test("no bundle carries the build machine's checkout path (Bun inlines a CommonJS module's __filename); one left elsewhere stops the pack", async () => {
  for (const name of ["@zkagent/agent", "zkagent"]) {
    const dir = join(stage, `paths-${name.replace(/\W/g, "")}`);
    await bundle(spec(name), dir);
    expect(filesHolding(join(dir, "dist"), ROOT)).toEqual([]);
    // what the scrub left in place of web-worker's inlined __filename
    expect(filesHolding(join(dir, "dist"), '"node_modules/web-worker/cjs/node.js"').length).toBeGreaterThan(0);
  }
  const odd = join(stage, "odd");
  mkdirSync(odd, { recursive: true });
  writeFileSync(join(odd, "a.js"), `const here = "${ROOT}";`);
  expect(() => scrubMachinePaths(odd, ROOT)).toThrow(`the build machine's path ${ROOT} is in:\n  a.js`);
});
