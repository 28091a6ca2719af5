// The Semaphore v4 circuits as circuit versions (docs/trust.md, "Groups").
// Their setup is not this project's: the proving keys come from the
// Semaphore v4 phase-2 ceremony, published in @zk-kit/semaphore-artifacts.
// They are read from that installed package, never stored in the database
// (32 zkeys of 1.5–5.8 MB would be sent to the store at every fresh start),
// and every file's SHA-256 is checked against the pins committed in this
// repository (src/groups/semaphore-pins.ts) before it is used or served.
//
// A circuit of depth D proves membership of any tree of depth ≤ D (its
// merkleProofLength input); a group challenge names the group's depth
// (at least 1), so every depth 1–32 is offered and loaded on first use.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { SEMAPHORE_ARTIFACTS_VERSION, SEMAPHORE_MAX_DEPTH, SEMAPHORE_PINS } from "../groups/semaphore-pins";
import { sha256Hex, vkHash } from "../receipts/circuit";
import type { CircuitRecord } from "../store/interface";

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

/** The Semaphore artifacts are not installed beside this build: group challenges cannot be served. */
export class SemaphoreUnavailableError extends Error {}

const EXTENSIONS: Record<SemaphoreFile, string> = { wasm: "wasm", zkey: "zkey", vk: "json" };

/** A depth's file from the installed package, checked against its pin. */
export async function semaphoreFile(depth: number, file: SemaphoreFile): Promise<Uint8Array> {
  const pin = SEMAPHORE_PINS[depth];
  if (!pin) throw new RangeError(`no Semaphore circuit of depth ${depth} (1–${SEMAPHORE_MAX_DEPTH})`);
  const dir = packageDir();
  if (dir === null) throw new SemaphoreUnavailableError("@zk-kit/semaphore-artifacts is not installed beside this build");
  const path = join(dir, `semaphore-${depth}.${EXTENSIONS[file]}`);
  const bytes = new Uint8Array(await readFile(path));
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
    package: `@zk-kit/semaphore-artifacts@${SEMAPHORE_ARTIFACTS_VERSION}`,
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

/** Every depth's circuit version, one read of each small vk (the zkeys and wasms are read when asked for). */
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

  /** Every depth's circuit; none where the package is not installed (GET /v1/circuits still lists the stored ones). */
  async all(): Promise<CircuitRecord[]> {
    if (packageDir() === null) return [];
    return Promise.all(Array.from({ length: SEMAPHORE_MAX_DEPTH }, (_, i) => this.circuit(i + 1)));
  }

  /** The circuit an id names, or null (another id, or the depth's id with another key hash). */
  async byId(id: string): Promise<CircuitRecord | null> {
    const depth = semaphoreDepthOf(id);
    if (depth === null || packageDir() === null) return null;
    const record = await this.circuit(depth);
    return record.id === id ? record : null;
  }
}
