// Which roots a group proof may name (docs/protocol.md, "Which roots are
// acceptable"). Every change to a group gives it a new version and records
// the root it leaves; a removal also records its version as the group's
// `removedVersion`. A root is acceptable when the group had it at a version
// no older than the last removal: roots from before a removal may hold the
// removed member, every root from then on holds it as 0. So adding members
// never breaks a proof in flight (the challenge's root stays acceptable),
// and a removal refuses the removed member at once on every node (the store
// answers this inside the deciding transaction, never a per-process cache).

/** One entry of a group's root history. */
export interface RootAt {
  root: string;
  version: number;
}

export const isAcceptableRoot = (root: string, history: readonly RootAt[], removedVersion: number): boolean =>
  root !== "0" && history.some((entry) => entry.root === root && entry.version >= removedVersion);

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
