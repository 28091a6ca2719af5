// The Semaphore v4 circuits as circuit versions (docs/trust.md, "Groups").
// Their setup is not this project's: the proving keys come from the
// Semaphore v4 phase-2 ceremony, published in @zk-kit/semaphore-artifacts.
// Every file's SHA-256 is checked against the pins committed in this
// repository (src/groups/semaphore-pins.ts) before it is used or served.
//
// The verification keys (4 KB each) are part of this build
// (src/groups/semaphore-vks.json, written with the pins by
// scripts/semaphore-pins.ts): group proofs verify wherever the service runs,
// the compiled binary included. The zkeys and witness generators (1.5–5.8 MB
// each) are read from the installed package, never stored in the database
// (32 zkeys would be sent to the store at every fresh start) nor embedded in
// the binary: where the package is absent, GET /v1/circuits/{id}/zkey and
// /wasm answer 404 `Artifact not served here`, naming the package.
//
// A circuit of depth D proves membership of any tree of depth ≤ D (its
// merkleProofLength input); a group challenge names the group's depth
// (at least 1), so every depth 1–32 is offered and loaded on first use.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { SEMAPHORE_ARTIFACTS_VERSION, SEMAPHORE_MAX_DEPTH, SEMAPHORE_PINS } from "../groups/semaphore-pins";
import SEMAPHORE_VKS from "../groups/semaphore-vks.json";
import { sha256Hex, vkHash } from "../receipts/circuit";
import type { CircuitRecord } from "../store/circuits/records";

export const SEMAPHORE_CIRCUIT_PREFIX = "semaphore_v4_d";
const ID = /^semaphore_v4_d([1-9]|[12][0-9]|3[0-2])-[0-9a-f]{16}$/;

export type SemaphoreFile = "wasm" | "zkey" | "vk";

/** A pinned file whose bytes are not the pinned ones: the installed package was altered. Never served, never used. */
export class PinMismatchError extends Error {}

/** The installed package's directory, or null where it is not installed (the compiled binary does not embed its 32 zkeys). */
function packageDir(): string | null {
  try {
    return dirname(createRequire(import.meta.url).resolve("@zk-kit/semaphore-artifacts/package.json"));
  } catch {
    return null;
  }
}

/** Where the zkeys and witness generators are published: what a service without the package tells those who ask for them. */
export const SEMAPHORE_ARTIFACTS_PACKAGE = `@zk-kit/semaphore-artifacts@${SEMAPHORE_ARTIFACTS_VERSION}`;

/** The package is not installed beside this build (the compiled binary): its zkeys and witness generators cannot be read. */
export class SemaphoreUnavailableError extends Error {}

const EXTENSIONS: Record<SemaphoreFile, string> = { wasm: "wasm", zkey: "zkey", vk: "json" };

/** A depth's file, checked against its pin: the vk from this build, the wasm and zkey from the installed package. */
export async function semaphoreFile(depth: number, file: SemaphoreFile): Promise<Uint8Array> {
  const pin = SEMAPHORE_PINS[depth];
  if (!pin) throw new RangeError(`no Semaphore circuit of depth ${depth} (1–${SEMAPHORE_MAX_DEPTH})`);
  let path: string;
  let bytes: Uint8Array;
  if (file === "vk") {
    path = `src/groups/semaphore-vks.json (depth ${depth})`;
    bytes = new TextEncoder().encode((SEMAPHORE_VKS as Record<string, string>)[String(depth)]!);
  } else {
    const dir = packageDir();
    if (dir === null) throw new SemaphoreUnavailableError(`${SEMAPHORE_ARTIFACTS_PACKAGE} is not installed beside this build`);
    path = join(dir, `semaphore-${depth}.${EXTENSIONS[file]}`);
    bytes = new Uint8Array(await readFile(path));
  }
  const actual = sha256Hex(bytes);
  if (actual !== pin[file]) throw new PinMismatchError(`${path}: SHA-256 ${actual}, pinned ${pin[file]}`);
  return bytes;
}

/** The depth a Semaphore circuit id names, or null when it is not one. */
export function semaphoreDepthOf(id: string): number | null {
  const match = ID.exec(id);
  return match ? Number(match[1]) : null;
}

/** What the transcript of a Semaphore circuit says: where its files come from; `contributions` as read from the zkey by `zkagent ceremony semaphore`. */
export const semaphoreTranscript = (depth: number): string =>
  JSON.stringify({
    setup: "semaphore",
    package: SEMAPHORE_ARTIFACTS_PACKAGE,
    depth,
    ptau: { name: "", blake2b512: "" },
    steps: [],
  });

/** A depth's circuit version (state `accepted`: it verifies the challenges that name it; agent challenges never use it). */
export async function semaphoreCircuit(depth: number): Promise<CircuitRecord> {
  const vk = JSON.parse(new TextDecoder().decode(await semaphoreFile(depth, "vk")));
  const hash = vkHash(vk);
  const pin = SEMAPHORE_PINS[depth]!;
  const transcript = semaphoreTranscript(depth);
  return {
    id: `${SEMAPHORE_CIRCUIT_PREFIX}${depth}-${hash.replace(/^sha256:/, "").slice(0, 16)}`,
    state: "accepted",
    vk: JSON.stringify(vk),
    vkHash: hash,
    zkeySha256: pin.zkey,
    wasmSha256: pin.wasm,
    transcript,
    transcriptSha256: sha256Hex(transcript),
    // Its ceremony is Semaphore's public one: no zkagent transcript lists its contributions.
    ceremony: { contributions: [], beacon: null, ptau: { name: "", blake2b512: "" } },
    refused: null,
    createdAt: 0,
    activatedAt: null,
    retiredAt: null,
  };
}

/** Every depth's circuit version, from its embedded vk (the zkeys and wasms are read from the package when asked for). */
export class SemaphoreCircuits {
  private readonly byDepth = new Map<number, Promise<CircuitRecord>>();

  circuit(depth: number): Promise<CircuitRecord> {
    let record = this.byDepth.get(depth);
    if (!record) {
      record = semaphoreCircuit(depth);
      record.catch(() => this.byDepth.delete(depth));
      this.byDepth.set(depth, record);
    }
    return record;
  }

  /** Every depth's circuit, with or without the package installed. */
  async all(): Promise<CircuitRecord[]> {
    return Promise.all(Array.from({ length: SEMAPHORE_MAX_DEPTH }, (_, i) => this.circuit(i + 1)));
  }

  /** The circuit an id names, or null (another id, or the depth's id with another key hash). */
  async byId(id: string): Promise<CircuitRecord | null> {
    const depth = semaphoreDepthOf(id);
    if (depth === null) return null;
    const record = await this.circuit(depth);
    return record.id === id ? record : null;
  }
}
