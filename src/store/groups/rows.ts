// Rows (snake_case columns, as both dialects return them) to records.
import type { GroupRecord } from "./records";
import { int } from "../connection/columns";

export const toGroup = (row: any): GroupRecord => ({
  groupId: row.group_id,
  keyId: row.key_id,
  createdAt: int(row.created_at),
  version: int(row.version),
  size: int(row.size),
  activeMembers: int(row.active_members),
  depth: int(row.depth),
  root: row.root,
  removedVersion: int(row.removed_version),
  mandate: row.mandate ?? null,
  challengers: row.challengers ? (JSON.parse(row.challengers) as string[]) : null,
  // SQLite answers 0/1, PostgreSQL a boolean.
  budget: row.budget === true || row.budget === 1,
});
