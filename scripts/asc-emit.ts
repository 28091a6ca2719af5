// Shared by the generators of assembly/ (scripts/asc-constants.ts,
// scripts/asc-fp2mul.ts, scripts/asc-layout.ts): write a generated file, or
// with --check compare it with what is committed and fail on a difference,
// so CI (test/assembly/generated.test.ts) catches a hand edit or a generator
// change that was not re-run.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

export const ROOT = join(import.meta.dir, "..");
export const checkMode = process.argv.includes("--check");

/** Writes text to the repository-relative path, or (check mode) reports whether it differs. Returns false on a difference. */
export function emit(path: string, text: string): boolean {
  const abs = join(ROOT, path);
  if (checkMode) {
    const current = existsSync(abs) ? readFileSync(abs, "utf8") : undefined;
    if (current === text) return true;
    console.error(`${relative(ROOT, abs)} differs from its generator's output; run the generator and commit the result`);
    return false;
  }
  if (!existsSync(abs) || readFileSync(abs, "utf8") !== text) writeFileSync(abs, text);
  return true;
}

/** Exits non-zero when any emit() reported a difference. */
export function finish(results: boolean[], what: string): void {
  if (results.every(Boolean)) {
    console.log(checkMode ? `${what}: up to date` : `${what}: written`);
    return;
  }
  process.exit(1);
}
