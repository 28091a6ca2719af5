// Circuit versions and their artifacts (issue 17).
// The types the domain sees and what it asks of this aggregate; sqlite.ts and
// postgres.ts beside this file answer it. Times are Unix milliseconds.
import type { CeremonySummary, CircuitListing } from "../../circuits/listing";

/**
 * A circuit version (issue 17, docs/trust.md). `active`: new challenges use
 * it (exactly one at a time once seeded); `accepted`: verifies the challenges
 * that name it, issued to none; `retired`: verifies nothing.
 */
export type CircuitState = "active" | "accepted" | "retired";

export interface CircuitRecord {
  /** `agent_identity-` + the first 16 hex digits of the vk hash: the same ceremony output has the same id everywhere. */
  id: string;
  state: CircuitState;
  /** The snarkjs verification key, JSON text. */
  vk: string;
  /** "sha256:<hex>" of its canonical JSON: what receipts name. */
  vkHash: string;
  zkeySha256: string;
  wasmSha256: string;
  /** The ceremony's transcript.json text, rebuilt from its known fields (src/circuits/listing.ts). */
  transcript: string;
  /**
   * SHA-256 of `transcript` and its summary, computed when the circuit was
   * added: what GET /v1/circuits serves. Null on a row stored before they
   * were (rebuilt once by the first start that finds it) or whose stored
   * transcript failed that rebuild's checks (`refused` says why).
   */
  transcriptSha256: string | null;
  ceremony: CeremonySummary | null;
  /** Why the rebuild refused this row's stored transcript: the circuit is then not served. Null when it was not refused. */
  refused: string | null;
  createdAt: number;
  activatedAt: number | null;
  retiredAt: number | null;
}

/** A circuit with the artifacts agents prove with, as `circuits add` stores it. */
export interface CircuitWithArtifacts extends CircuitRecord {
  zkey: Uint8Array;
  wasm: Uint8Array;
}

export type ActivateCircuitResult = "activated" | "already_active" | "retired" | "unknown";

export type RetireCircuitResult = "retired" | "already_retired" | "active" | "unknown";

export interface CircuitsStore {
  /**
   * Stores a circuit unless one with its id exists (then nothing changes:
   * a retired circuit stays retired). It is stored `active` when no circuit
   * is active (the first start's seed), else `accepted` (whatever
   * `circuit.state` says). One transaction; returns the stored state.
   */
  addCircuit(circuit: CircuitWithArtifacts): Promise<{ added: boolean; state: CircuitState }>;

  /**
   * Records what a row stored before listings were (transcriptSha256 null)
   * lists: its rebuilt transcript (the stored one is kept aside, never served)
   * or why it is refused. Only a row not rebuilt yet changes; false otherwise.
   */
  rebuildCircuitListing(id: string, outcome: CircuitListing | { refused: string }): Promise<boolean>;

  /** Every circuit, oldest first, without the artifact bytes. */
  listCircuits(): Promise<CircuitRecord[]>;

  getCircuit(id: string): Promise<CircuitRecord | null>;

  /** One artifact's bytes, or null when there is no such circuit. */
  circuitArtifact(id: string, artifact: "zkey" | "wasm"): Promise<Uint8Array | null>;

  /** Makes the circuit active; the active one becomes `accepted`. A retired circuit is not revived. One transaction. */
  activateCircuit(id: string, at: number): Promise<ActivateCircuitResult>;

  /** Retires an `accepted` circuit; the active one cannot be retired (activate another first). */
  retireCircuit(id: string, at: number): Promise<RetireCircuitResult>;
}
