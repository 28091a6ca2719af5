// Rows (snake_case columns, as both dialects return them) to records.
import type { ApiKeyRecord, Usage } from "./records";
import { int, intOrNull } from "../connection/columns";

export const toKey = (row: any): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  hash: row.hash,
  rateLimit: int(row.rate_limit),
  // Absent rather than null when unset, so records built without it compare equal.
  ...(row.agent_rate_limit === null || row.agent_rate_limit === undefined ? {} : { agentRateLimit: int(row.agent_rate_limit) }),
  createdAt: int(row.created_at),
  revokedAt: intOrNull(row.revoked_at),
  ...(row.origins ? { origins: JSON.parse(row.origins) as string[] } : {}),
});

/** The origins column: a JSON array, or NULL when the key has none. */
export const originsText = (origins: readonly string[]): string | null => (origins.length === 0 ? null : JSON.stringify(origins));

export const toUsage = (row: any): Usage => ({
  challenges: int(row.challenges),
  verified: int(row.verified),
  failed: int(row.failed),
});
