// Rows (snake_case columns, as both dialects return them) to records.
import type { IdempotencyState } from "./records";
import { int } from "../connection/columns";

/** The state of an idempotency row another request already holds. */
export function heldIdempotency(row: any, fingerprint: string): IdempotencyState {
  if (row.fingerprint !== fingerprint) return { state: "mismatch" };
  if (row.status === null || row.status === undefined) return { state: "in_progress" };
  return { state: "done", status: int(row.status), body: row.body };
}
