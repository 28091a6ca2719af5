// Loads the prover's WebAssembly (build/prover.wasm, assembly/prover-index.ts).
//
// The module is imported `with { type: "file" }` like the circuit artifacts,
// so one code path serves `bun run` (the file on disk), the compiled binary
// (bun build --compile embeds the file and the import yields its $bunfs
// path) and the SDK bundled for Node (the bundler copies the file beside the
// bundle and the import yields a path relative to it). Running from source
// under Bun, a missing or stale build is rebuilt first (scripts/asc-build.ts),
// as src/verifier/wasm.ts does for the verifier.

import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { instantiate } from "@assemblyscript/loader";
import proverWasmPath from "../../build/prover.wasm" with { type: "file" };

/** The production module's exports (assembly/prover-index.ts). */
export type ProverExports = {
  memory: WebAssembly.Memory;
  io(size: number): number;
  setup(nVars: number, nPublic: number, domainLog: number, nCoef: number): number;
  loadPoints(): number;
  loadIc(): number;
  loadCoefs(): number;
  loadBases(set: number, count: number, window: number, tables: number): number;
  prove(): number;
};

/** The test build's extra exports (assembly/prover-testing.ts). */
export type ProverTestExports = ProverExports & {
  stageWitness(): number;
  stageQuotient(): void;
  stageMsm(set: number): void;
  stageFinish(): number;
  readQuotient(): number;
  readMsm(set: number): number;
  basesWindow(set: number): number;
};

/** Status codes and point-section numbers: the ABI table shared with assembly/ (generated). */
export { BaseSet, ProverStatus } from "./layout.ts";

// A bundle built for Node makes a file import relative to the bundle.
const filePath = (path: string) => (path.startsWith(".") ? fileURLToPath(new URL(path, import.meta.url)) : path);
const underBun = typeof Bun !== "undefined";
const fromSource = underBun && !import.meta.dir.startsWith("/$bunfs") && !import.meta.dir.startsWith("B:\\~BUN");

async function wasmBytes(): Promise<Uint8Array> {
  if (fromSource) {
    const build = await import("../../scripts/asc-build.ts");
    if (build.isStale(build.PROVER_WASM_PATH)) build.buildWasm(build.PROVER_WASM_PATH);
  }
  return new Uint8Array(await readFile(filePath(proverWasmPath)));
}

let modulePromise: Promise<WebAssembly.Module> | undefined;

/** The compiled production module, once per process. */
export function proverModule(): Promise<WebAssembly.Module> {
  modulePromise ??= wasmBytes().then((bytes) => WebAssembly.compile(bytes));
  return modulePromise;
}

/** A fresh instance (own memory): one per loaded zkey. */
export async function instantiateProver(module?: WebAssembly.Module): Promise<ProverExports> {
  const { exports } = await instantiate<ProverExports>(module ?? (await proverModule()), {});
  return exports as unknown as ProverExports;
}
