// GET /v1/circuits and its artifacts: what agents prove with, and what anyone
// checks the service's trust root with (docs/trust.md). Public data; every
// artifact is immutable (a circuit's id is its key's hash), so each carries
// its own hash as ETag.
import { type CircuitRegistry, setupOf } from "../../circuits/registry";
import { BudgetArtifactUnavailableError } from "../../circuits/budget";
import { SEMAPHORE_ARTIFACTS_PACKAGE, SemaphoreUnavailableError, semaphoreDepthOf } from "../../circuits/semaphore";
import { ApiError } from "../../errors";
import type { CircuitRecord } from "../../store/circuits/records";
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

/** Whether the circuit's listing is stored (computed when it was added, or rebuilt on a first start): only then is it served. */
const served = (c: CircuitRecord): c is CircuitRecord & { transcriptSha256: string; ceremony: CeremonySummary } =>
  c.transcriptSha256 !== null && c.ceremony !== null && c.refused === null;

/** The circuit as listed: every field as stored, nothing parsed or hashed here. Null for a circuit that is not served. */
export const circuitViewOf = (c: CircuitRecord): CircuitView | null =>
  served(c)
    ? {
        id: c.id,
        state: c.state,
        setup: setupOf(c.id),
        vk_hash: c.vkHash,
        zkey_sha256: c.zkeySha256,
        wasm_sha256: c.wasmSha256,
        transcript_sha256: c.transcriptSha256,
        created_at: iso(c.createdAt)!,
        activated_at: iso(c.activatedAt),
        retired_at: iso(c.retiredAt),
        ceremony: c.ceremony,
        ...(semaphoreDepthOf(c.id) === null ? {} : { artifacts_package: SEMAPHORE_ARTIFACTS_PACKAGE }),
      }
    : null;

/** A circuit the routes serve: circuit_not_found when there is none, circuit_not_served when its stored transcript was refused (or not rebuilt yet). */
async function servedCircuit(circuits: CircuitRegistry, id: string | null): Promise<CircuitRecord & { transcriptSha256: string; ceremony: CeremonySummary }> {
  const record = id === null ? null : await circuits.get(id);
  if (!record) throw new ApiError("circuit_not_found");
  if (!served(record)) throw new ApiError("circuit_not_served");
  return record;
}

export async function listCircuits(circuits: CircuitRegistry): Promise<{ active: string; circuits: CircuitView[] }> {
  const [active, all] = await Promise.all([circuits.active(), circuits.list()]);
  return { active: active.id, circuits: all.map(circuitViewOf).filter((view) => view !== null) };
}

export async function readCircuit(circuits: CircuitRegistry, id: string | null): Promise<CircuitView> {
  return circuitViewOf(await servedCircuit(circuits, id))!;
}

export async function readArtifact(circuits: CircuitRegistry, id: string | null, kind: ArtifactKind): Promise<Artifact> {
  const record = await servedCircuit(circuits, id);
  switch (kind) {
    case "vk":
      return { body: record.vk, hash: record.vkHash.replace(/^sha256:/, ""), contentType: ARTIFACT_MEDIA_TYPES.vk };
    case "transcript":
      return { body: record.transcript, hash: record.transcriptSha256, contentType: ARTIFACT_MEDIA_TYPES.transcript };
    case "zkey":
    case "wasm": {
      const bytes = await circuits.artifact(record.id, kind).catch((error) => {
        if (error instanceof BudgetArtifactUnavailableError)
          throw new ApiError("artifact_not_served", {
            message: `This service verifies ${record.id} but does not carry its ${kind}: it is circuits/artifacts/budget_spend/budget_spend.${kind} in the zkagent repository; check its SHA-256 against ${kind}_sha256.`,
          });
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
