// What both stores do inside a group change's transaction, apart from SQL:
// bring this process's cached tree to the stored version, apply the change,
// and say what to write. And the decision a root that is no longer
// acceptable turns a verified group proof into.
import { type GroupTree, type GroupTrees, type Leaf, REMOVED_LEAF } from "../groups/tree";
import type { ChangeGroupResult, Decision, GroupChange, GroupRecord } from "./interface";

export const toLeaf = (row: { leaf_index: number | string; commitment: string }): Leaf => ({ index: Number(row.leaf_index), value: row.commitment });

/**
 * The version the cached tree must replay from (the leaves written after
 * it), or null when it is the stored one. A tree ahead of the store (a
 * change that never committed) is dropped and rebuilt from version 0.
 */
export function replayFrom(trees: GroupTrees, group: GroupRecord): number | null {
  let tree = trees.tree(group.groupId);
  if (tree.version > group.version) {
    trees.forget(group.groupId);
    tree = trees.tree(group.groupId);
  }
  return tree.version === group.version ? null : tree.version;
}

export type PlannedChange = { outcome: "planned"; group: GroupRecord; leaves: Leaf[] } | Exclude<ChangeGroupResult, { outcome: "changed" }>;

/**
 * The change applied to the cached tree (first caught up with `leavesSince`),
 * and the group row it leaves; the tree's version moves only when the caller
 * commits (it forgets the tree otherwise).
 */
export function planGroupChange(trees: GroupTrees, group: GroupRecord, change: GroupChange, leavesSince: (version: number) => Leaf[]): PlannedChange {
  const since = replayFrom(trees, group);
  const tree: GroupTree = trees.tree(group.groupId);
  if (since !== null) tree.replay(leavesSince(since), group.version);
  let leaves: Leaf[];
  if (change.kind === "add") {
    const added = tree.add(change.commitments);
    if (!added.ok) return { outcome: "invalid", index: added.index, problem: added.problem };
    leaves = added.leaves;
  } else {
    const removed = tree.remove(change.commitment);
    if (!removed) return { outcome: "not_member" };
    leaves = [removed];
  }
  const version = group.version + 1;
  tree.version = version;
  const { size, depth, root } = tree.state;
  return {
    outcome: "planned",
    leaves,
    group: {
      ...group,
      version,
      size,
      depth,
      root,
      activeMembers: tree.active,
      removedVersion: change.kind === "remove" ? version : group.removedVersion,
    },
  };
}

export { REMOVED_LEAF };

/** A verified group proof whose root is no longer acceptable (a member was removed since): failed, `not_member`. */
export const refuseRoot = <D extends Decision>(decision: D): D => ({ ...decision, status: "failed", confidence: null, reason: "not_member", receipt: null });
