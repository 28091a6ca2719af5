// What the service accepts as an identifier it stores and binds (agent_id,
// action), beyond length: the same answer on every store and through every
// client (issue 11).
//
// - U+0000: PostgreSQL TEXT cannot hold it, SQLite can; refusing it on both
//   keeps them alike (it has no business in an identifier either).
// - "." and "..": a URL-normalising client turns /v1/agents/.. into another
//   path, so such an agent could be registered but never read or revoked.

export type IdentifierKind = "agent_id" | "action";

/** Why `value` cannot be this kind of identifier, or null when it can. */
export function identifierProblem(kind: IdentifierKind, value: string): string | null {
  if (value.includes("\u0000")) return "must not contain U+0000 (NUL)";
  if (kind === "agent_id" && (value === "." || value === "..")) return 'must not be "." or ".." (URL dot segments: the agent could not be addressed in a path)';
  return null;
}
