// Loads the prover's WebAssembly (build/prover.wasm, assembly/prover-index.ts).
//
// The module is imported `with { type: "file" }` like the circuit artifacts,
// so one code path serves `bun run` (the file on disk), the compiled binary
// (bun build --compile embeds the file and the import yields its $bunfs
// path) and the SDK bundled for Node (the bundler copies the file beside the
// bundle and the import yields a path relative to it). Running from source
// under Bun, a missing or stale build is rebuilt first (scripts/asc-build.ts),
// as src/verifier/wasm.ts does for the verifier. Of its two builds
// (build/prover-wide.wasm, build/prover.wasm) the process's own is loaded
// (src/wasm-engine.ts).

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { instantiate } from "@assemblyscript/loader";
import portableWasmPath from "../../build/prover.wasm" with { type: "file" };
import wideWasmPath from "../../build/prover-wide.wasm" with { type: "file" };
import { WASM_BUILD, type WasmBuild } from "../wasm-engine";

const wasmPaths: Record<WasmBuild, string> = { wide: wideWasmPath, portable: portableWasmPath };
const proverWasmPath = wasmPaths[WASM_BUILD];

/** The production module's exports (assembly/prover-index.ts). */
export type ProverExports = {
  memory: WebAssembly.Memory;
  io(size: number): number;
  setup(nVars: number, nPublic: number, domainLog: number, nCoef: number): number;
  loadPoints(): number;
  loadIc(): number;
  loadCoefs(): number;
  loadBases(set: number, count: number, window: number, tables: number): number;
  basesWindow(set: number): number;
  basesTable(set: number): number;
  basesTableBytes(set: number): number;
  prove(): number;
  // One proof across threads (src/prover/threads.ts), in this order: proveWitness,
  // msmScalars (for the other instances' msmRemote), proveQuotient, proveMsmRange for
  // the caller's ranges, msmResultIn for the others' sums, proveEnd.
  proveWitness(): number;
  proveQuotient(): number;
  /** add 0: the range's sum becomes the set's result; 1: it is added to it. */
  proveMsmRange(set: number, lo: number, hi: number, add: number): number;
  proveEnd(): number;
  /** Byte count of the set's scalars now in io. */
  msmScalars(set: number): number;
  /** Byte count of the range's sum now in io; 0 when the range is not loaded. */
  msmRemote(set: number, lo: number, hi: number): number;
  msmResultIn(set: number, add: number): number;
  basesCount(set: number): number;
  // Poseidon over two inputs (assembly/poseidon.ts), for the group trees (src/groups/poseidon.ts).
  /** io: a ‖ b (32-byte little-endian, < r) → H(a, b); 0, or −1 when an input is ≥ r. */
  poseidonHash(): number;
  /** io: n nodes → their ⌈n/2⌉ parents (a lone last node carried up); the parent count, or −1 when a node is ≥ r. */
  poseidonLevel(n: number): number;
};

/** The test build's extra exports (assembly/prover-testing.ts). */
export type ProverTestExports = ProverExports & {
  stageWitness(): number;
  stageQuotient(): void;
  /** One part of stageQuotient, in order: 0 evaluate A_T, B_T, C_T; 1–3 A, B, C to the coset (INTT, shift, NTT); 4 h = a·b − c. */
  stageQuotientPart(part: number): void;
  stageMsm(set: number): void;
  stageFinish(): number;
  stageSelfCheck(): number;
  readQuotient(): number;
  readMsm(set: number): number;
  /** An MSM over caller-chosen points (zkey form) and scalars: the sum's wire form in io, its byte count (0: a point did not decode). */
  msmCustom(g2: number, count: number, window: number, tables: number): number;
};

/** Status codes and point-section numbers: the ABI table shared with assembly/ (generated). */
export { BaseSet, ProverStatus, Tables } from "./layout.ts";

// A bundle built for Node makes a file import relative to the bundle.
const filePath = (path: string) => (path.startsWith(".") ? fileURLToPath(new URL(path, import.meta.url)) : path);
const underBun = typeof Bun !== "undefined";
const fromSource = underBun && !import.meta.dir.startsWith("/$bunfs") && !import.meta.dir.startsWith("B:\\~BUN");

async function wasmBytes(build: WasmBuild): Promise<Uint8Array> {
  if (fromSource) {
    const asc = await import("../../scripts/asc-build.ts");
    if (asc.isStale(asc.PROVER_WASM_PATH)) asc.buildWasm(asc.PROVER_WASM_PATH);
  }
  return new Uint8Array(await readFile(filePath(wasmPaths[build])));
}

const modules = new Map<WasmBuild, { module: Promise<WebAssembly.Module>; digest: Promise<string> }>();

/**
 * The production module compiled synchronously from the file as it stands
 * (no rebuild when stale), for a caller that cannot wait: the group trees'
 * Poseidon (src/groups/poseidon.ts), whose hash function LeanIMT calls
 * synchronously. Each call compiles again; that caller keeps its instance.
 */
export function proverModuleSync(): WebAssembly.Module {
  return new WebAssembly.Module(readFileSync(filePath(proverWasmPath)));
}

/** The production module's bytes, digest and compilation, once per process and build. */
function loaded(build: WasmBuild) {
  let entry = modules.get(build);
  if (!entry) {
    const bytes = wasmBytes(build);
    entry = { module: bytes.then((b) => WebAssembly.compile(b)), digest: bytes.then(sha256Hex) };
    modules.set(build, entry);
  }
  return entry;
}

/** The compiled production module of a build (default: the process's, src/wasm-engine.ts), once per process. */
export function proverModule(build: WasmBuild = WASM_BUILD): Promise<WebAssembly.Module> {
  return loaded(build).module;
}

/** SHA-256 (hex) of the production module's bytes: part of the table cache's key (its tables are in the module's own number form). */
export function proverModuleDigest(build: WasmBuild = WASM_BUILD): Promise<string> {
  return loaded(build).digest;
}

export const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** Copies bytes into an instance's I/O buffer (grown to fit) for its next call. */
export function writeIo(wasm: Pick<ProverExports, "memory" | "io">, bytes: Uint8Array): void {
  const ptr = wasm.io(bytes.length); // first: growing the buffer may grow the memory, which detaches the old ArrayBuffer
  new Uint8Array(wasm.memory.buffer, ptr, bytes.length).set(bytes);
}

/** A copy of the first `size` bytes of an instance's I/O buffer (what its last call wrote there). */
export function readIo(wasm: Pick<ProverExports, "memory" | "io">, size: number): Uint8Array {
  return new Uint8Array(wasm.memory.buffer, wasm.io(0), size).slice();
}

/** A fresh instance (own memory): one per loaded zkey. */
export async function instantiateProver(module?: WebAssembly.Module): Promise<ProverExports> {
  const { exports } = await instantiate<ProverExports>(module ?? (await proverModule()), {});
  return exports as unknown as ProverExports;
}
