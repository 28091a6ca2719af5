// What the service accepts as an identifier it stores and binds (agent_id,
// action), beyond length: the same answer on every store and through every
// client (issue 11). The NUL rule holds for every string the service stores,
// at any depth of a context or a mandate, member names included (issue 18):
// see storedTextProblem.
//
// - U+0000: PostgreSQL TEXT cannot hold it, SQLite can; refusing it on both
//   keeps them alike (it has no business in an identifier either).
// - "." and "..": a URL-normalising client turns /v1/agents/.. into another
//   path, so such an agent could be registered but never read or revoked.

import { memberPath } from "./ijson";

const NUL_RULE = "must not contain U+0000 (NUL)";

export type IdentifierKind = "agent_id" | "action";

/** Why `value` cannot be this kind of identifier, or null when it can. */
export function identifierProblem(kind: IdentifierKind, value: string): string | null {
  if (value.includes("\u0000")) return NUL_RULE;
  if (kind === "agent_id" && (value === "." || value === "..")) return 'must not be "." or ".." (URL dot segments: the agent could not be addressed in a path)';
  return null;
}

/**
 * Where a JSON value holds U+0000, in a string or a member name, as a path
 * below it (`limits[0].action`, `items[2]["a\u0000"]`; "" for the value
 * itself), or null. PostgreSQL TEXT cannot hold NUL: a mandate stored as
 * canonical JSON keeps it escaped, but the strings taken out of it (a limit's
 * action as a column value) then fail — after the write committed (issue 18).
 * Iterative: depth is bounded elsewhere, but this walk does not rely on it.
 */
export function nulPath(value: unknown): { path: string; name: boolean } | null {
  const stack: { value: unknown; path: string }[] = [{ value, path: "" }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === "string") {
      if (current.includes("\u0000")) return { path, name: false };
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], path: `${path}[${i}]` });
    } else if (typeof current === "object" && current !== null) {
      const names = Object.keys(current);
      for (const name of names) if (name.includes("\u0000")) return { path: memberPath(path, name), name: true };
      for (let i = names.length - 1; i >= 0; i--) stack.push({ value: (current as Record<string, unknown>)[names[i]!], path: memberPath(path, names[i]!) });
    }
  }
  return null;
}

/** Why a JSON value the service stores (a context, a mandate) cannot be stored as it is, or null: the NUL rule at any depth. */
export function storedTextProblem(value: unknown): string | null {
  const found = nulPath(value);
  if (!found) return null;
  if (found.name) return `member name ${found.path} ${NUL_RULE}`;
  return found.path === "" ? NUL_RULE : `${found.path} ${NUL_RULE}`;
}
