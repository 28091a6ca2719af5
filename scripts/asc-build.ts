// Builds the AssemblyScript modules with asc (optimised, stub runtime: no
// GC, nothing allocates on the hot path):
//   assembly/index.ts           → build/verifier.wasm       production entry points only
//   assembly/testing.ts         → build/verifier-test.wasm  + test and benchmark operations
//   assembly/prover-index.ts    → build/prover.wasm         the prover's entry points only
//   assembly/prover-testing.ts  → build/prover-test.wasm    + its stages, for tests and the bench
// The generated sources (assembly/constants.ts, fp2mul.ts, layout.ts and
// src/verifier/layout.ts) are committed and not regenerated here: their
// generators run by hand, and test/assembly/generated.test.ts fails when a
// committed file has drifted.
//
//   bun scripts/asc-build.ts                          build all four
//   bun scripts/asc-build.ts --if-stale               build only what is missing or older than an input
//   bun scripts/asc-build.ts --if-stale --production  the same, production modules only (postinstall:
//                                                     what `bun run start` needs; the test builds are
//                                                     made by test/preload.ts when a test run needs them)
//
// Exported for src/verifier/wasm.ts (build on demand) and test/preload.ts.

import { existsSync, readdirSync, readFileSync, statSync, mkdirSync, renameSync } from "node:fs";
import { join, relative } from "node:path";

const root = join(import.meta.dir, "..");
export const WASM_PATH = join(root, "build", "verifier.wasm");
export const TEST_WASM_PATH = join(root, "build", "verifier-test.wasm");
export const PROVER_WASM_PATH = join(root, "build", "prover.wasm");
export const PROVER_TEST_WASM_PATH = join(root, "build", "prover-test.wasm");
/** Every module this script builds. */
export const ALL_WASM_PATHS = [WASM_PATH, TEST_WASM_PATH, PROVER_WASM_PATH, PROVER_TEST_WASM_PATH];
/** The modules the service and the CLI load; the other two are for tests and benchmarks. */
export const PRODUCTION_WASM_PATHS = [WASM_PATH, PROVER_WASM_PATH];
const ENTRY = {
  [WASM_PATH]: "assembly/index.ts",
  [TEST_WASM_PATH]: "assembly/testing.ts",
  [PROVER_WASM_PATH]: "assembly/prover-index.ts",
  [PROVER_TEST_WASM_PATH]: "assembly/prover-testing.ts",
};
/**
 * A module's inputs: its entry and every assembly/ file the entry imports,
 * directly or not (all of them import as `from "./name"`), and the asc-*
 * scripts. Per module, so that editing a prover-only file (msm.ts, ntt.ts,
 * fr.ts, prover*.ts) does not make the verifier stale and rebuild it on the
 * next start from source, nor a verifier-only file the prover.
 */
function inputs(path: string): string[] {
  const files = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    for (const m of readFileSync(file, "utf8").matchAll(/\bfrom\s+"\.\/([\w-]+)(?:\.ts)?"/g)) visit(join(root, "assembly", `${m[1]}.ts`));
  };
  visit(join(root, ENTRY[path]!));
  const scripts = readdirSync(join(root, "scripts"))
    .filter((f) => f.startsWith("asc-"))
    .map((f) => join(root, "scripts", f));
  return [...files, ...scripts];
}

/** True when the module at path (default: the production one) is missing or older than an input. */
export function isStale(path: string = WASM_PATH): boolean {
  if (!existsSync(path)) return true;
  const built = statSync(path).mtimeMs;
  return inputs(path).some((f) => statSync(f).mtimeMs > built);
}

/** Compiles one module (default: the production one), saying so on standard error first: a compile takes seconds to a minute, and a first start would otherwise be silent meanwhile. */
export function buildWasm(path: string = WASM_PATH): void {
  console.error(
    `zkagent: compiling ${relative(root, path)} from ${ENTRY[path]} with asc (once, on a fresh clone or after its sources change; up to a minute)…`,
  );
  mkdirSync(join(root, "build"), { recursive: true });
  // Compile to a private file and rename: concurrent builds (parallel test
  // processes) never expose a half-written module.
  const tmp = `${path}.${process.pid}.tmp`;
  const cmd = [
    join(root, "node_modules", ".bin", "asc"),
    ENTRY[path]!,
    "--outFile",
    tmp,
    "--optimizeLevel",
    "3",
    "--shrinkLevel",
    "0",
    "--converge",
    "--noAssert",
    "--runtime",
    "stub",
    // 128-bit SIMD (standard WebAssembly, in every engine Bun and Node ship):
    // the paired limb products of fp2mul.ts.
    "--enable",
    "simd",
  ];
  const r = Bun.spawnSync(cmd, { cwd: root, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed:\n${r.stdout.toString()}${r.stderr.toString()}`);
  renameSync(tmp, path);
}

if (import.meta.main) {
  const ifStale = process.argv.includes("--if-stale");
  for (const path of process.argv.includes("--production") ? PRODUCTION_WASM_PATHS : ALL_WASM_PATHS) {
    if (ifStale && !isStale(path)) continue;
    const t0 = performance.now();
    buildWasm(path);
    console.error(`zkagent: built ${relative(root, path)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
}
