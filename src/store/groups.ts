// What both stores do inside a group change's transaction, apart from SQL:
// bring this process's cached tree to the stored version, apply the change,
// and say what to write. And the decision a root that is no longer
// acceptable turns a verified group proof into.
import { GroupTree, type GroupTrees, type Leaf, REMOVED_LEAF, type TreeNode } from "../groups/tree";
import type { ChangeGroupResult, Decision, GroupChange, GroupRecord } from "./interface";

/** A stored internal node. */
export type NodeRow = { level: number | string; idx: number | string; value: string };

/** Stored internal nodes, ordered by level and index, as levels 1…depth. */
export function levelsOf(rows: readonly NodeRow[]): string[][] {
  const levels: string[][] = [];
  for (const row of rows) (levels[Number(row.level) - 1] ??= []).push(row.value);
  return levels;
}

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

export type PlannedChange = { outcome: "planned"; group: GroupRecord; leaves: Leaf[]; nodes: TreeNode[] } | Exclude<ChangeGroupResult, { outcome: "changed" }>;

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
    nodes: tree.nodesAbove(leaves),
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

/** What a store does for changeGroupOptimistically: plain reads, and one write transaction that stores a planned change if the group is still at the version it was planned on. */
export interface GroupChangeIo {
  read(groupId: string): Promise<GroupRecord | null>;
  leavesSince(groupId: string, version: number): Promise<Leaf[]>;
  /** The stored tree in one consistent read: the group's version and root, every leaf, and the internal nodes level by level (1…depth). */
  snapshot(groupId: string): Promise<{ version: number; root: string; leaves: string[]; levels: string[][] } | null>;
  /** In one transaction holding the group row: null when the group is no longer at `planned.group.version - 1` (another process changed it). */
  commit(planned: { group: GroupRecord; leaves: Leaf[]; nodes: TreeNode[] }): Promise<GroupRecord | null>;
}

/** How many times a change is planned again when another process changed the group meanwhile. */
const PLAN_ATTEMPTS = 5;

/**
 * A group change with the tree work outside the write transaction: the
 * Poseidon hashing of a 10,000-member batch takes seconds, and SQLite's
 * write lock (or PostgreSQL's row lock) must not be held meanwhile. The
 * cached tree is brought to the stored version and changed first; the
 * transaction then stores the change only if the group is still at the
 * version it was planned on, else the plan is dropped with the cache and
 * made again. Changes of one group in this process run one at a time.
 */
export function changeGroupOptimistically(
  trees: GroupTrees,
  groupId: string,
  keyId: string,
  change: GroupChange,
  io: GroupChangeIo,
): Promise<ChangeGroupResult> {
  return trees.exclusive(groupId, async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        const group = await io.read(groupId);
        if (!group) return { outcome: "not_found" };
        if (group.keyId !== keyId) return { outcome: "forbidden" };
        let since = replayFrom(trees, group);
        // A process without the tree loads the stored one (leaves and internal nodes) instead of hashing every leaf again.
        if (since === 0 && group.version > 0) {
          const snapshot = await io.snapshot(groupId);
          if (snapshot && snapshot.version <= group.version) {
            const loaded = GroupTree.load(snapshot.leaves, snapshot.levels, snapshot.version);
            if (loaded.state.root === snapshot.root) trees.install(groupId, loaded);
          }
          since = replayFrom(trees, group);
        }
        const missed = since === null ? [] : await io.leavesSince(groupId, since);
        const planned = planGroupChange(trees, group, change, () => missed);
        if (planned.outcome !== "planned") return planned;
        const stored = await io.commit(planned);
        if (stored) return { outcome: "changed", group: stored };
        trees.forget(groupId);
        if (attempt >= PLAN_ATTEMPTS) throw new Error(`group ${groupId}: changed by others ${attempt} times while this change was planned`);
      } catch (error) {
        // Nothing committed: the cached tree may be ahead of the store.
        trees.forget(groupId);
        throw error;
      }
    }
  });
}

/** A verified group proof whose root is no longer acceptable (a member was removed since): failed, `not_member`. */
export const refuseRoot = <D extends Decision>(decision: D): D => ({ ...decision, status: "failed", confidence: null, reason: "not_member", receipt: null });
