// Circuit versions on SQLite.
import type { CircuitListing } from "../../circuits/listing";
import type { SqliteDb } from "../connection/sqlite";
import { toCircuit } from "./rows";
import type { ActivateCircuitResult, CircuitRecord, CircuitState, CircuitsStore, CircuitWithArtifacts, RetireCircuitResult } from "./records";

/** Every column but the artifacts' bytes. */
const COLUMNS =
  "id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, transcript_sha256, ceremony, transcript_refused, created_at, activated_at, retired_at";

export function sqliteCircuits({ db, immediate }: SqliteDb): CircuitsStore {
  const q = {
    insertCircuit: db.query(
      `INSERT INTO circuits (id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, transcript_sha256, ceremony, transcript_refused,
                             zkey, wasm, created_at, activated_at, retired_at)
       VALUES ($id, CASE WHEN EXISTS (SELECT 1 FROM circuits WHERE state = 'active') THEN 'accepted' ELSE 'active' END,
               $vk, $vkHash, $zkeySha256, $wasmSha256, $transcript, $transcriptSha256, $ceremony, $refused, $zkey, $wasm, $createdAt,
               CASE WHEN EXISTS (SELECT 1 FROM circuits WHERE state = 'active') THEN NULL ELSE $createdAt END, NULL)
       ON CONFLICT (id) DO NOTHING`,
    ),
    rebuildCircuitListing: db.query(
      `UPDATE circuits SET transcript_original = CASE WHEN transcript <> $transcript THEN transcript END, transcript = $transcript,
              transcript_sha256 = $transcriptSha256, ceremony = $ceremony
       WHERE id = $id AND transcript_sha256 IS NULL AND transcript_refused IS NULL`,
    ),
    refuseCircuitListing: db.query(
      "UPDATE circuits SET transcript_refused = $refused WHERE id = $id AND transcript_sha256 IS NULL AND transcript_refused IS NULL",
    ),
    listCircuits: db.query(`SELECT ${COLUMNS} FROM circuits ORDER BY created_at, id`),
    getCircuit: db.query(`SELECT ${COLUMNS} FROM circuits WHERE id = ?`),
    circuitZkey: db.query("SELECT zkey AS bytes FROM circuits WHERE id = ?"),
    circuitWasm: db.query("SELECT wasm AS bytes FROM circuits WHERE id = ?"),
    demoteActiveCircuit: db.query("UPDATE circuits SET state = 'accepted' WHERE state = 'active' AND id <> ?"),
    activateCircuit: db.query("UPDATE circuits SET state = 'active', activated_at = ? WHERE id = ? AND state = 'accepted'"),
    retireCircuit: db.query("UPDATE circuits SET state = 'retired', retired_at = ? WHERE id = ? AND state = 'accepted'"),
  };

  const addCircuitTx = (c: CircuitWithArtifacts): { added: boolean; state: CircuitState } => {
    const { id, vk, vkHash, zkeySha256, wasmSha256, transcript, transcriptSha256, refused, zkey, wasm, createdAt } = c;
    const ceremony = c.ceremony ? JSON.stringify(c.ceremony) : null;
    const added =
      q.insertCircuit.run({ id, vk, vkHash, zkeySha256, wasmSha256, transcript, transcriptSha256, ceremony, refused, zkey, wasm, createdAt }).changes === 1;
    return { added, state: (q.getCircuit.get(id) as { state: CircuitState }).state };
  };

  const activateCircuitTx = (id: string, at: number): ActivateCircuitResult => {
    const row = q.getCircuit.get(id) as { state: CircuitState } | null;
    if (!row) return "unknown";
    if (row.state === "active") return "already_active";
    if (row.state === "retired") return "retired";
    q.demoteActiveCircuit.run(id);
    q.activateCircuit.run(at, id);
    return "activated";
  };

  return {
    async addCircuit(circuit: CircuitWithArtifacts): Promise<{ added: boolean; state: CircuitState }> {
      return immediate("add circuit", () => addCircuitTx(circuit));
    },

    async rebuildCircuitListing(id: string, outcome: CircuitListing | { refused: string }): Promise<boolean> {
      const changed =
        "refused" in outcome
          ? q.refuseCircuitListing.run({ id, refused: outcome.refused })
          : q.rebuildCircuitListing.run({
              id,
              transcript: outcome.transcript,
              transcriptSha256: outcome.transcriptSha256,
              ceremony: JSON.stringify(outcome.ceremony),
            });
      return changed.changes === 1;
    },

    async listCircuits(): Promise<CircuitRecord[]> {
      return q.listCircuits.all().map(toCircuit);
    },

    async getCircuit(id: string): Promise<CircuitRecord | null> {
      const row = q.getCircuit.get(id);
      return row ? toCircuit(row) : null;
    },

    async circuitArtifact(id: string, artifact: "zkey" | "wasm"): Promise<Uint8Array | null> {
      const row = (artifact === "zkey" ? q.circuitZkey : q.circuitWasm).get(id) as { bytes: Uint8Array } | null;
      return row ? new Uint8Array(row.bytes) : null;
    },

    async activateCircuit(id: string, at: number): Promise<ActivateCircuitResult> {
      return immediate("activate circuit", () => activateCircuitTx(id, at));
    },

    async retireCircuit(id: string, at: number): Promise<RetireCircuitResult> {
      if (q.retireCircuit.run(at, id).changes === 1) return "retired";
      const row = q.getCircuit.get(id) as { state: CircuitState } | null;
      if (!row) return "unknown";
      return row.state === "active" ? "active" : "already_retired";
    },
  };
}
