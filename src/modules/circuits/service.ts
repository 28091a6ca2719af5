// GET /v1/circuits and its artifacts: what agents prove with, and what anyone
// checks the service's trust root with (docs/trust.md). Public data; every
// artifact is immutable (a circuit's id is its key's hash), so each carries
// its own hash as ETag.
import { type CircuitRegistry, setupOf } from "../../circuits/registry";
import { SEMAPHORE_ARTIFACTS_PACKAGE, SemaphoreUnavailableError, semaphoreDepthOf } from "../../circuits/semaphore";
import { ApiError } from "../../errors";
import { sha256Hex as sha256 } from "../../receipts/circuit";
import type { CircuitRecord } from "../../store/interface";
import type { CeremonySummary, CircuitView } from "./model";

export type ArtifactKind = "vk" | "zkey" | "wasm" | "transcript";

/** The Content-Type each artifact is sent with; the OpenAPI document declares the same (index.ts). */
export const ARTIFACT_MEDIA_TYPES: Record<ArtifactKind, string> = {
  vk: "application/json",
  zkey: "application/octet-stream",
  wasm: "application/wasm",
  transcript: "application/json",
};

export interface Artifact {
  body: Uint8Array | string;
  /** The artifact's hash, hex: its strong ETag. */
  hash: string;
  contentType: string;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The contributions and beacon a transcript lists (it verified before the circuit was stored). */
export function ceremonySummary(transcriptText: string): CeremonySummary {
  const transcript = JSON.parse(transcriptText) as {
    ptau?: { name?: string; blake2b512?: string };
    steps?: { step: string; name?: string; hash?: string; beacon?: string; iterations_exp?: number }[];
  };
  const steps = transcript.steps ?? [];
  const beacon = steps.find((s) => s.step === "beacon");
  return {
    contributions: steps.filter((s) => s.step === "contribution").map((s) => ({ name: s.name ?? "", hash: s.hash ?? "" })),
    beacon: beacon ? { value: beacon.beacon ?? "", iterations_exp: beacon.iterations_exp ?? 0, name: beacon.name ?? "", hash: beacon.hash ?? "" } : null,
    ptau: { name: transcript.ptau?.name ?? "", blake2b512: transcript.ptau?.blake2b512 ?? "" },
  };
}

// What the list shows of a transcript, computed once per circuit version and
// kept: a version's transcript never changes once added (its id is its key's
// hash), so no request parses or hashes one again (a large transcript had
// made every GET /v1/circuits slow for everyone).
const described = new Map<string, { transcriptSha256: string; ceremony: CeremonySummary }>();
function describe(c: CircuitRecord): { transcriptSha256: string; ceremony: CeremonySummary } {
  const key = `${c.id}:${c.transcript.length}`;
  let found = described.get(key);
  if (!found) {
    found = { transcriptSha256: sha256(c.transcript), ceremony: ceremonySummary(c.transcript) };
    described.set(key, found);
  }
  return found;
}

export const circuitViewOf = (c: CircuitRecord): CircuitView => {
  const { transcriptSha256, ceremony } = describe(c);
  return {
    id: c.id,
    state: c.state,
    setup: setupOf(c.id),
    vk_hash: c.vkHash,
    zkey_sha256: c.zkeySha256,
    wasm_sha256: c.wasmSha256,
    transcript_sha256: transcriptSha256,
    created_at: iso(c.createdAt)!,
    activated_at: iso(c.activatedAt),
    retired_at: iso(c.retiredAt),
    ceremony,
    ...(semaphoreDepthOf(c.id) === null ? {} : { artifacts_package: SEMAPHORE_ARTIFACTS_PACKAGE }),
  };
};

export async function listCircuits(circuits: CircuitRegistry): Promise<{ active: string; circuits: CircuitView[] }> {
  const [active, all] = await Promise.all([circuits.active(), circuits.list()]);
  return { active: active.id, circuits: all.map(circuitViewOf) };
}

export async function readCircuit(circuits: CircuitRegistry, id: string | null): Promise<CircuitView> {
  const record = id === null ? null : await circuits.get(id);
  if (!record) throw new ApiError("circuit_not_found");
  return circuitViewOf(record);
}

export async function readArtifact(circuits: CircuitRegistry, id: string | null, kind: ArtifactKind): Promise<Artifact> {
  const record = id === null ? null : await circuits.get(id);
  if (!record) throw new ApiError("circuit_not_found");
  switch (kind) {
    case "vk":
      return { body: record.vk, hash: record.vkHash.replace(/^sha256:/, ""), contentType: ARTIFACT_MEDIA_TYPES.vk };
    case "transcript":
      return { body: record.transcript, hash: describe(record).transcriptSha256, contentType: ARTIFACT_MEDIA_TYPES.transcript };
    case "zkey":
    case "wasm": {
      const bytes = await circuits.artifact(record.id, kind).catch((error) => {
        if (!(error instanceof SemaphoreUnavailableError)) throw error;
        const file = `semaphore-${semaphoreDepthOf(record.id)}.${kind}`;
        throw new ApiError("artifact_not_served", {
          message: `This service verifies ${record.id} but does not carry its ${kind}: get ${file} from the npm package ${SEMAPHORE_ARTIFACTS_PACKAGE} and check its SHA-256 against ${kind}_sha256.`,
        });
      });
      if (!bytes) throw new ApiError("circuit_not_found");
      return {
        body: bytes,
        hash: kind === "zkey" ? record.zkeySha256 : record.wasmSha256,
        contentType: ARTIFACT_MEDIA_TYPES[kind],
      };
    }
  }
}
