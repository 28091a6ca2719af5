// An adopter's code through the package exports (zkagent/merchant,
// zkagent/merchant/hono, zkagent/merchant/elysia, zkagent/agent) compiles
// under tsc --strict with no casts: types/usage.ts.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const USAGE = join(import.meta.dir, "types");

test("a merchant handler and an agent call compile under tsc --strict, with no cast, any or unknown", () => {
  // Comments and import lines (whose `x as y` renames are not casts) aside.
  const source = readFileSync(join(USAGE, "usage.ts"), "utf8").replace(/^\s*(\/\/|import ).*$/gm, "");
  expect(source).not.toMatch(/\bas\s+[A-Za-z{[(]|\bany\b|\bunknown\b|<[A-Z]\w*>\s*\w|@ts-/);
  const result = Bun.spawnSync([join(ROOT, "node_modules/.bin/tsc"), "-p", join(USAGE, "tsconfig.json")], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  expect(result.stdout.toString() + result.stderr.toString()).toBe("");
  expect(result.exitCode).toBe(0);
});

test("the exports map names the entry points with their types", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  for (const entry of ["./agent", "./merchant", "./merchant/hono", "./merchant/elysia", "./merchant/express"]) {
    expect(pkg.exports[entry].types).toMatch(/^\.\/src\/.+\.ts$/);
    expect(readFileSync(join(ROOT, pkg.exports[entry].types), "utf8").length).toBeGreaterThan(0);
  }
});
