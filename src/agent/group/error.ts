// The agent's refusals to prove for a group (src/agent/group/), each naming
// what was wrong. Hides nothing and reveals nothing: a refusal is the same
// for every member of the group (src/agent/group/proof.ts), except
// not_member, which only a non-member meets.

export type GroupProofErrorCode =
  /** The challenge lacks a field or has one of the wrong form. */
  | "challenge"
  /** The identity's private key is not what Identity.export() writes, or does not match its commitment. */
  | "identity"
  /** The member list or change set could not be read, or is not field elements in leaf order. */
  | "members"
  /** The tree the agent holds has another root than the service serves, and no tree the agent can rebuild has the challenge's. */
  | "root_mismatch"
  /** The identity's commitment is not a leaf of the tree. */
  | "not_member"
  /** The tree is deeper than the challenge's merkle_tree_depth. */
  | "depth"
  /** Fewer active members than the agent's floor (minAnonymity, --min-anonymity): a proof would narrow its member down too far. */
  | "anonymity"
  /** The prover's public signals are not the statement computed here: nothing is returned. */
  | "statement";

/** A refusal to prove, naming what was wrong. */
export class GroupProofError extends Error {
  // The class's own name too, not only the instances': a bundler that splits code renames a class it sees twice
  // (GroupProofError2), and that is what Bun and Node print for an uncaught error.
  static {
    Object.defineProperty(GroupProofError, "name", { value: "GroupProofError" });
  }
  override readonly name = "GroupProofError";
  constructor(
    readonly code: GroupProofErrorCode,
    message: string,
  ) {
    super(message);
  }
}
