// The adapters' types as the docs show them: types/*.ts (one file per
// adapter, the core guard, and the API client's types against the service's
// schemas) compiled under strict tsc, TypeScript 7 and 5.
// Their `@ts-expect-error` lines must stay errors (tsc reports one that no
// longer is), so a session type that widened or narrowed fails here.
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const PROJECT = join(import.meta.dir, "types/tsconfig.json");

for (const [version, tsc] of [
  ["7", join(ROOT, "node_modules/.bin/tsc")],
  ["5", join(ROOT, "node_modules/typescript5/bin/tsc")],
] as const)
  test(`Express, Hono, Elysia and the guard: the session follows accept, under strict tsc (TypeScript ${version})`, () => {
    const result = Bun.spawnSync([tsc, "-p", PROJECT], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    expect(result.stdout.toString() + result.stderr.toString()).toBe("");
    expect(result.exitCode).toBe(0);
  }, 60_000);
