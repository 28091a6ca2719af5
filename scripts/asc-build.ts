// Builds the AssemblyScript verifier: compiles assembly/index.ts to
// build/verifier.wasm with asc (optimised, stub runtime: no GC, nothing
// allocates on the hot path). The generated sources (assembly/constants.ts,
// fp2mul.ts, layout.ts and src/verifier/layout.ts) are committed and not
// regenerated here: their generators run by hand, and
// test/assembly/generated.test.ts fails when a committed file has drifted.
//
//   bun scripts/asc-build.ts            build
//   bun scripts/asc-build.ts --if-stale build only when an input is newer than the output
//
// Exported for src/verifier/wasm.ts (build on demand) and test/preload.ts.

import { existsSync, readdirSync, statSync, mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
export const WASM_PATH = join(root, "build", "verifier.wasm");
const inputs = () => [
  ...readdirSync(join(root, "assembly")).map((f) => join(root, "assembly", f)),
  ...readdirSync(join(root, "scripts"))
    .filter((f) => f.startsWith("asc-"))
    .map((f) => join(root, "scripts", f)),
];

export function isStale(): boolean {
  if (!existsSync(WASM_PATH)) return true;
  const built = statSync(WASM_PATH).mtimeMs;
  return inputs().some((f) => statSync(f).mtimeMs > built);
}

export function buildWasm(): void {
  const run = (cmd: string[]) => {
    const r = Bun.spawnSync(cmd, { cwd: root, stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) {
      throw new Error(`${cmd.join(" ")} failed:\n${r.stdout.toString()}${r.stderr.toString()}`);
    }
  };
  mkdirSync(join(root, "build"), { recursive: true });
  // Compile to a private file and rename: concurrent builds (parallel test
  // processes) never expose a half-written module.
  const tmp = join(root, "build", `verifier.${process.pid}.wasm`);
  run([
    join(root, "node_modules", ".bin", "asc"),
    "assembly/index.ts",
    "--outFile", tmp,
    "--optimizeLevel", "3",
    "--shrinkLevel", "0",
    "--converge",
    "--noAssert",
    "--runtime", "stub",
  ]);
  renameSync(tmp, WASM_PATH);
}

if (import.meta.main) {
  const ifStale = process.argv.includes("--if-stale");
  if (ifStale && !isStale()) process.exit(0);
  const t0 = performance.now();
  buildWasm();
  console.log(`built ${WASM_PATH} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
