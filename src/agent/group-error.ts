// The agent's refusals to prove for a group (src/agent/group.ts), each naming what was wrong.

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
  override readonly name = "GroupProofError";
  constructor(
    readonly code: GroupProofErrorCode,
    message: string,
  ) {
    super(message);
  }
}
