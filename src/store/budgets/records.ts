// Budget spends (docs/protocol.md, "Budgets across merchants"): each group's
// nullifier set and its append-only notes. The types the domain sees and what
// it asks of this aggregate; sqlite.ts and postgres.ts beside this file
// answer it. Values are decimal field elements as the proof carries them.
//
// Indices are leaf indices in the group's notes tree, whose leaf 0 is the
// fixed first leaf (NOTES_GENESIS_LEAF, src/budgets/encoding.ts: no
// acceptable root is ever 0); it is never stored, so the first note is 1.

/** A spend recorded (its new note's index in the group's notes), or refused because its nullifier was seen. */
export type SpendRecord = { recorded: true; index: number } | { recorded: false; reason: "already_spent" };

/** A notes checkpoint (docs/protocol.md, "Roots"): the notes tree's root at a size, numbered per group. */
export interface Checkpoint {
  sequence: number;
  /** Leaves, the genesis leaf included. */
  size: number;
  root: string;
  at: number;
}

/** A budgeted group whose notes grew past its newest checkpoint (sequence −1 and size 0: it has none). */
export interface GrownGroup {
  groupId: string;
  size: number;
  sequence: number;
  checkpointSize: number;
}

export interface BudgetNote {
  index: number;
  commitment: string;
}

/** A member's enrolment in a budgeted group (issue 40): kept by the service, never published (the leaf is). */
export interface EnrolmentRecord {
  /** τ, decimal: one enrolment per mandate, service-wide. */
  mandate: string;
  groupId: string;
  identityCommitment: string;
  leaf: string;
  enrolledAt: number;
}

export interface BudgetsStore {
  /**
   * Claims τ service-wide and the identity in its group, ever: "mandate"
   * when τ was enrolled before (anywhere), "identity" when the identity was
   * enrolled in this group before (removed or not). The leaf is appended to
   * the group afterwards; a claim whose leaf could not be appended is
   * released (releaseEnrolment).
   */
  claimEnrolment(enrolment: EnrolmentRecord): Promise<"claimed" | "mandate" | "identity">;

  /** Drops a claim whose leaf was never appended (the group refused it). */
  releaseEnrolment(mandate: string): Promise<void>;

  /**
   * Records a spend in one transaction: the nullifier, if the group has never
   * seen it, and the new note at the group's next index (dense, in commit
   * order). Of any number of concurrent calls with one nullifier, on any
   * node, exactly one records; the others are already_spent.
   */
  recordBudgetSpend(groupId: string, nullifier: string, commitment: string, at: number): Promise<SpendRecord>;

  /** The group's notes from index `from`, in index order, at most `limit`. */
  budgetNotes(groupId: string, from: number, limit: number): Promise<BudgetNote[]>;

  /** The group's notes tree size (the genesis leaf included: 1 before any spend). */
  notesSize(groupId: string): Promise<number>;

  /** Records a checkpoint under the group's unique (group, sequence) key: false when that sequence exists (another node took it). */
  recordCheckpoint(groupId: string, checkpoint: Checkpoint): Promise<boolean>;

  /** The group's newest `limit` checkpoints, oldest first. */
  checkpoints(groupId: string, limit: number): Promise<Checkpoint[]>;

  /** The budgeted groups whose notes grew since their newest checkpoint, or that have none. */
  grownGroups(): Promise<GrownGroup[]>;

  /**
   * Deletes checkpoints recorded before `before` that are not among their
   * group's newest `keep`: a spend can name only those, and the newest one
   * always stays, so sequences keep counting up. Returns how many.
   */
  purgeCheckpoints(before: number, keep: number): Promise<number>;
}
