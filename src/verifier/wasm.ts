// Loads the AssemblyScript verifier (build/verifier.wasm) from bytes.
//
// The bytes come from `import(…/verifier.wasm, { with: { type: "file" } })`
// (dynamic, so that a missing build is made before it is imported):
// under `bun run` that is the file on disk, `bun build --compile` embeds the
// file in the binary and resolves the same import to its embedded copy
// ($bunfs), and a bundle built for Node (the @zkagent/agent package, whose
// `zkagent verify` runs under Node) gets a path relative to the bundle, as
// src/prover/wasm.ts does.
// Running from source, a missing or stale build is rebuilt on demand
// (scripts/asc-build.ts, ≈5 s) so that `bun test` and `bun run` never see an
// outdated module; inside a compiled binary there is nothing to rebuild.
//
// Two builds of the module exist (src/wasm-engine.ts): build/verifier-wide.wasm
// where the engine runs wide arithmetic, build/verifier.wasm elsewhere or
// when ZKAGENT_WASM=portable; the choice is made once per process.
//
// The compiled WebAssembly.Module is cached; each verifier instantiates its
// own instance (own memory, own key), which is cheap.

import { readFile } from "node:fs/promises";
import { bundledFilePath } from "../bundled-file";
import { instantiate, instantiateSync } from "@assemblyscript/loader";
import { WASM_BUILD, type WasmBuild } from "../wasm-engine";

/** The production module's exports (see assembly/index.ts for the ABI). */
export type VerifierExports = {
  memory: WebAssembly.Memory;
  io(size: number): number;
  loadKey(n: number): number;
  nPublic(): number;
  verify(): number;
  maxBatch(): number;
  batchPrepare(count: number): number;
  batchCheck(k: number): number;
};

/** Status codes returned by the module: the ABI table shared with assembly/ (generated). */
export { Status } from "./layout.ts";

const underBun = typeof Bun !== "undefined";
const fromSource = underBun && !import.meta.dir.startsWith("/$bunfs") && !import.meta.dir.startsWith("B:\\~BUN");

async function wasmBytes(build: WasmBuild): Promise<Uint8Array> {
  if (fromSource) {
    const builder = await import("../../scripts/asc-build.ts");
    if (builder.isStale()) builder.buildWasm();
  }
  const name = build === "wide" ? "build/verifier-wide.wasm" : "build/verifier.wasm";
  try {
    // Two literal imports, so that a bundler carries both files.
    const path = (build === "wide"
      ? (await import("../../build/verifier-wide.wasm", { with: { type: "file" } })).default
      : (await import("../../build/verifier.wasm", { with: { type: "file" } })).default) as unknown as string;
    return new Uint8Array(await readFile(bundledFilePath(path, import.meta.url)));
  } catch (e) {
    throw new Error(`zkagent verifier: ${name} is missing; run \`bun scripts/asc-build.ts\` (package script build:wasm). Cause: ${e}`);
  }
}

const modules = new Map<WasmBuild, Promise<WebAssembly.Module>>();
const compiled = new Map<WasmBuild, WebAssembly.Module>();

/** The compiled module of a build (default: this process's, src/wasm-engine.ts), built and compiled once per process. */
export function verifierModule(build: WasmBuild = WASM_BUILD): Promise<WebAssembly.Module> {
  let module = modules.get(build);
  if (!module) {
    module = wasmBytes(build)
      .then((bytes) => WebAssembly.compile(bytes))
      .then((m) => {
        compiled.set(build, m);
        return m;
      });
    modules.set(build, module);
  }
  return module;
}

/** A fresh instance, synchronously; only after verifierModule(build) has resolved once. */
export function instantiateVerifierSync(build: WasmBuild = WASM_BUILD): VerifierExports {
  const module = compiled.get(build);
  if (!module) throw new Error("zkagent verifier: module not compiled yet");
  return instantiateSync<VerifierExports>(module, {}).exports as unknown as VerifierExports;
}

/** A fresh instance of the verifier module (default: this process's build). */
export async function instantiateVerifier(build: WasmBuild = WASM_BUILD): Promise<VerifierExports> {
  const module = await verifierModule(build);
  const { exports } = await instantiate<VerifierExports>(module, {});
  return exports as unknown as VerifierExports;
}

/** Copies bytes into the module's I/O buffer (growing it) and returns its address. */
export function writeIo(wasm: VerifierExports, bytes: Uint8Array, extra = 0): number {
  const ptr = wasm.io(bytes.length + extra);
  new Uint8Array(wasm.memory.buffer, ptr, bytes.length).set(bytes);
  return ptr;
}

/** A view of the I/O buffer (re-read after any call that may grow memory). */
export function readIo(wasm: VerifierExports, offset: number, length: number): Uint8Array {
  const ptr = wasm.io(0);
  return new Uint8Array(wasm.memory.buffer, ptr + offset, length).slice();
}
