// Which roots a group proof may name (docs/protocol.md, "Which roots are
// acceptable"). Every change to a group gives it a new version and records
// the root it leaves, and when; a removal also records its version as the
// group's `removedVersion`. A root is acceptable when the group had it at a
// version no older than the last removal (roots from before a removal may
// hold the removed member, every root from then on holds it as 0), and it is
// the current root or was replaced less than the root duration ago
// (GROUP_ROOT_DURATION_S, default one hour: the bounded history Semaphore's
// contracts keep with their merkleTreeDuration). So a member proves against
// the current root it synced (src/agent/group/proof.ts), and additions made
// while its proof is in flight break nothing for an hour; a removal refuses
// the removed member at once on every node (the store answers this inside
// the deciding transaction, never a per-process cache).

/** One entry of a group's root history. */
export interface RootAt {
  root: string;
  version: number;
}

/** How long a replaced root stays acceptable by default: Semaphore's contracts' merkleTreeDuration default. */
export const DEFAULT_ROOT_DURATION_MS = 3_600_000;

/**
 * The rule as a function of the history (the stores say it in SQL): `history`
 * in version order, each with when it was made (`at`, ms; null: before this
 * was recorded, i.e. long ago); `now` and `durationMs` bound how long a
 * replaced root is accepted.
 */
export function isAcceptableRoot(
  root: string,
  history: readonly (RootAt & { at?: number | null })[],
  removedVersion: number,
  bound?: { now: number; durationMs: number },
): boolean {
  if (root === "0") return false;
  const current = history.reduce((top, entry) => Math.max(top, entry.version), -1);
  return history.some((entry) => {
    if (entry.root !== root || entry.version < removedVersion) return false;
    if (bound === undefined || entry.version === current) return true;
    const replacedAt = history.find((next) => next.version === entry.version + 1)?.at ?? null;
    return replacedAt !== null && replacedAt > bound.now - bound.durationMs;
  });
}

/** Fewer active members than this and a proof narrows its member down to one or two: the API warns. */
export const ANONYMITY_MINIMUM = 3;

/** What a proof among `activeMembers` says of its member, by the real count (0 and 1 included). */
export const anonymityOf = (activeMembers: number): string =>
  activeMembers === 0
    ? "no member could make a proof"
    : activeMembers === 1
      ? "a proof names its one member"
      : `a proof narrows its member down to one of ${activeMembers}`;

export const anonymityWarning = (activeMembers: number): string | null =>
  activeMembers >= ANONYMITY_MINIMUM
    ? null
    : `This group has ${activeMembers} active member${activeMembers === 1 ? "" : "s"}: ${anonymityOf(activeMembers)}; it is not anonymous below ${ANONYMITY_MINIMUM}.`;
