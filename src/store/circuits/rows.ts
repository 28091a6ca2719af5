// Rows (snake_case columns, as both dialects return them) to records.
import type { CircuitRecord, CircuitState } from "./records";
import { int, intOrNull } from "../connection/columns";

export const toCircuit = (row: any): CircuitRecord => ({
  id: row.id,
  state: row.state as CircuitState,
  vk: row.vk,
  vkHash: row.vk_hash,
  zkeySha256: row.zkey_sha256,
  wasmSha256: row.wasm_sha256,
  transcript: row.transcript,
  transcriptSha256: row.transcript_sha256 ?? null,
  ceremony: row.ceremony ? JSON.parse(row.ceremony) : null,
  refused: row.transcript_refused ?? null,
  createdAt: int(row.created_at),
  activatedAt: intOrNull(row.activated_at),
  retiredAt: intOrNull(row.retired_at),
});
