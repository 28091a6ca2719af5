// Groups (issue 24): the group rows, their leaves, internal nodes and root history.
// The types the domain sees and what it asks of this aggregate; sqlite.ts and
// postgres.ts beside this file answer it. Times are Unix milliseconds.
import type { TreeCache } from "../../groups/cache";
import type { Leaf } from "../../groups/tree";

/** A group (issue 24): a Semaphore v4 tree owned by one key. */
export interface GroupRecord {
  groupId: string;
  keyId: string;
  createdAt: number;
  /** Bumped by every change (one transaction each). */
  version: number;
  /** Leaves, removed ones included (Semaphore's size). */
  size: number;
  activeMembers: number;
  depth: number;
  /** Decimal; "0" while empty. */
  root: string;
  /** The version of the last removal (0: none): roots older than it are no longer acceptable. */
  removedVersion: number;
  /** The group mandate (canonical JSON), held by each member separately; null: none. */
  mandate: string | null;
  /** The API key ids that may challenge the group (issue 34); null: any key. */
  challengers: string[] | null;
  /** A budgeted group (issue 40): its leaves come only from enrolments, whose terms the service verified. Fixed at creation. */
  budget: boolean;
}

/** A group as created: version 0, no leaves, root "0". */
export const newGroupRecord = (
  fields: Pick<GroupRecord, "groupId" | "keyId" | "createdAt" | "mandate" | "challengers"> & { budget?: boolean },
): GroupRecord => ({
  ...fields,
  budget: fields.budget ?? false,
  version: 0,
  size: 0,
  activeMembers: 0,
  depth: 0,
  root: "0",
  removedVersion: 0,
});

/**
 * A membership change. `at` and `requestId` go to the audit trail (one entry
 * per commitment added or removed); `maxSize` bounds the leaves the group may
 * reach (GROUP_MAX_MEMBERS; absent: the depth's 2^32).
 */
export type GroupChange = ({ kind: "add"; commitments: string[]; maxSize?: number; enrolment?: boolean } | { kind: "remove"; commitment: string }) & {
  at: number;
  requestId?: string | null;
};

export type ChangeGroupResult =
  | { outcome: "changed"; group: GroupRecord }
  | { outcome: "not_found" | "forbidden" | "not_member" }
  /** An added commitment already a member or repeated: `index` into the batch. Nothing applied. */
  | { outcome: "invalid"; index: number; problem: string }
  /** An added commitment removed from this group before (issue 34): `index` into the batch. Nothing applied. */
  | { outcome: "removed_before"; index: number }
  /** The batch would take the group past `maxSize` leaves. Nothing applied. */
  | { outcome: "full"; size: number; maxSize: number }
  /** Other processes changed the group each time this change was planned, PLAN_ATTEMPTS times (src/store/groups/change.ts). Nothing applied. */
  | { outcome: "contended"; attempts: number }
  /** An enrolment into a group that is not budgeted, or plain additions to one that is (issue 40). Nothing applied. */
  | { outcome: "budget_mismatch"; budget: boolean };

export interface GroupsStore {
  /**
   * Stores a new group (version 0, empty): "exists" when the id exists (for
   * any key), "too_many" when the key already owns `maxPerKey` groups (0: no
   * bound), decided in one transaction with the key's row held.
   */
  createGroup(group: GroupRecord, maxPerKey?: number): Promise<"created" | "exists" | "too_many">;

  getGroup(groupId: string): Promise<GroupRecord | null>;

  /**
   * Applies a change to the group its owner `keyId` asked for: `trees` (this
   * process's cache) is brought to the stored version by replaying the
   * leaves changed since and computes the new root outside any lock; one
   * transaction holding the group row then writes leaves, group row and root
   * history, if the group is still at the version the change was planned on
   * (else it is planned again). A change that does not commit leaves no
   * cache ahead of the store (src/store/groups/change.ts).
   */
  changeGroup(groupId: string, keyId: string, change: GroupChange, trees: TreeCache): Promise<ChangeGroupResult>;

  /** Leaves `offset…` in leaf order, at most `limit` ("0" for removed ones). */
  groupMembers(groupId: string, offset: number, limit: number): Promise<string[]>;

  /**
   * The leaves written after version `since` (added or removed since), in
   * leaf order from leaf index `from` on, at most `limit`: the members
   * route's changes, paged by key (a range read on the primary key).
   */
  groupChanges(groupId: string, since: number, from: number, limit: number): Promise<Leaf[]>;

  /** Sets (null: any key) the keys that may challenge the group, owner only. */
  setGroupChallengers(
    groupId: string,
    keyId: string,
    challengers: string[] | null,
  ): Promise<{ outcome: "set"; group: GroupRecord } | { outcome: "not_found" | "forbidden" }>;

  /** Sets (null: removes) the group's mandate, owner only. */
  setGroupMandate(
    groupId: string,
    keyId: string,
    mandate: string | null,
  ): Promise<{ outcome: "set"; group: GroupRecord } | { outcome: "not_found" | "forbidden" }>;

  /** Whether `root` is acceptable for the group at `now` (ms; src/groups/roots.ts): read from the database, never a cache. */
  acceptableRoot(groupId: string, root: string, now: number): Promise<boolean>;
}
