// Circuit versions on PostgreSQL.
import type { SQL } from "bun";
import type { CircuitListing } from "../../circuits/listing";
import { hasNul, mapUnreachable } from "../connection/postgres";
import { toCircuit } from "./rows";
import type { ActivateCircuitResult, CircuitRecord, CircuitState, CircuitsStore, CircuitWithArtifacts, RetireCircuitResult } from "./records";

/** Advisory lock id for "adding or activating a circuit" (arbitrary, fixed). */
const CIRCUIT_LOCK_ID = 7_316_402_919n;

export function postgresCircuits(sql: SQL): CircuitsStore {
  const store: CircuitsStore = {
    async addCircuit(c: CircuitWithArtifacts): Promise<{ added: boolean; state: CircuitState }> {
      return sql.begin(async (tx) => {
        // Serialised with activations: "no circuit is active" must still hold when the row goes in.
        await tx`SELECT pg_advisory_xact_lock(${CIRCUIT_LOCK_ID.toString()}::bigint)`;
        const [active] = await tx`SELECT 1 FROM circuits WHERE state = 'active'`;
        const state: CircuitState = active ? "accepted" : "active";
        const added = await tx`
        INSERT INTO circuits (id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, transcript_sha256, ceremony, transcript_refused,
                              zkey, wasm, created_at, activated_at, retired_at)
        VALUES (${c.id}, ${state}, ${c.vk}, ${c.vkHash}, ${c.zkeySha256}, ${c.wasmSha256}, ${c.transcript}, ${c.transcriptSha256},
                ${c.ceremony ? JSON.stringify(c.ceremony) : null}, ${c.refused}, ${Buffer.from(c.zkey)}, ${Buffer.from(c.wasm)},
                ${c.createdAt}, ${state === "active" ? c.createdAt : null}, NULL)
        ON CONFLICT (id) DO NOTHING RETURNING id`;
        const [row] = await tx`SELECT state FROM circuits WHERE id = ${c.id}`;
        return { added: added.length === 1, state: row.state as CircuitState };
      });
    },

    async rebuildCircuitListing(id: string, outcome: CircuitListing | { refused: string }): Promise<boolean> {
      if (hasNul(id)) return false;
      const changed =
        "refused" in outcome
          ? await sql`
            UPDATE circuits SET transcript_refused = ${outcome.refused}
            WHERE id = ${id} AND transcript_sha256 IS NULL AND transcript_refused IS NULL RETURNING id`
          : await sql`
            UPDATE circuits SET transcript_original = CASE WHEN transcript <> ${outcome.transcript} THEN transcript END,
                   transcript = ${outcome.transcript}, transcript_sha256 = ${outcome.transcriptSha256}, ceremony = ${JSON.stringify(outcome.ceremony)}
            WHERE id = ${id} AND transcript_sha256 IS NULL AND transcript_refused IS NULL RETURNING id`;
      return changed.length === 1;
    },

    async listCircuits(): Promise<CircuitRecord[]> {
      const rows = await sql`
      SELECT id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, transcript_sha256, ceremony, transcript_refused, created_at, activated_at, retired_at FROM circuits ORDER BY created_at, id`;
      return rows.map(toCircuit);
    },

    async getCircuit(id: string): Promise<CircuitRecord | null> {
      if (hasNul(id)) return null;
      const [row] = await sql`
      SELECT id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, transcript_sha256, ceremony, transcript_refused, created_at, activated_at, retired_at FROM circuits WHERE id = ${id}`;
      return row ? toCircuit(row) : null;
    },

    async circuitArtifact(id: string, artifact: "zkey" | "wasm"): Promise<Uint8Array | null> {
      if (hasNul(id)) return null;
      const [row] =
        artifact === "zkey" ? await sql`SELECT zkey AS bytes FROM circuits WHERE id = ${id}` : await sql`SELECT wasm AS bytes FROM circuits WHERE id = ${id}`;
      return row ? new Uint8Array(row.bytes) : null;
    },

    // Activate and retire of a circuit are serialised (the same advisory lock)
    // and conditional (the row is locked and its state re-read, each UPDATE
    // names the state it changes from): a retire racing an activate can never
    // leave the retired circuit active.
    async activateCircuit(id: string, at: number): Promise<ActivateCircuitResult> {
      if (hasNul(id)) return "unknown";
      return sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${CIRCUIT_LOCK_ID.toString()}::bigint)`;
        const [row] = await tx`SELECT state FROM circuits WHERE id = ${id} FOR UPDATE`;
        if (!row) return "unknown";
        if (row.state === "active") return "already_active";
        if (row.state === "retired") return "retired";
        await tx`UPDATE circuits SET state = 'accepted' WHERE state = 'active'`;
        const [activated] = await tx`UPDATE circuits SET state = 'active', activated_at = ${at} WHERE id = ${id} AND state = 'accepted' RETURNING id`;
        if (!activated) throw new Error(`circuit ${id} changed state under its row lock`);
        return "activated";
      });
    },

    async retireCircuit(id: string, at: number): Promise<RetireCircuitResult> {
      if (hasNul(id)) return "unknown";
      return sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${CIRCUIT_LOCK_ID.toString()}::bigint)`;
        const [retired] = await tx`UPDATE circuits SET state = 'retired', retired_at = ${at} WHERE id = ${id} AND state = 'accepted' RETURNING id`;
        if (retired) return "retired";
        const [row] = await tx`SELECT state FROM circuits WHERE id = ${id}`;
        if (!row) return "unknown";
        return row.state === "active" ? "active" : "already_retired";
      });
    },
  };
  return mapUnreachable(store);
}
