// What both stores do for a group change, apart from SQL: bring the cached
// tree (src/groups/cache.ts, on this thread or a worker) to the stored
// version, apply the change there, and store it in one transaction if the
// group is still at the version it was planned on. And the decision a root
// that is no longer acceptable turns a verified group proof into.
import type { TreeCache, TreeSnapshot } from "../../groups/cache";
import type { Leaf, TreeNode } from "../../groups/tree";
import type { Decision } from "../decisions/records";
import type { ChangeGroupResult, GroupChange, GroupRecord } from "./records";

/** A stored internal node. */
export type NodeRow = { level: number | string; idx: number | string; value: string };

/** Stored internal nodes, ordered by level and index, as levels 1…depth. */
export function levelsOf(rows: readonly NodeRow[]): string[][] {
  const levels: string[][] = [];
  for (const row of rows) (levels[Number(row.level) - 1] ??= []).push(row.value);
  return levels;
}

export const toLeaf = (row: { leaf_index: number | string; commitment: string }): Leaf => ({ index: Number(row.leaf_index), value: row.commitment });

/** A planned change as the store writes it: the group row it leaves, the leaves and internal nodes, and who and when for the audit trail. */
export interface PlannedWrite {
  group: GroupRecord;
  leaves: Leaf[];
  nodes: TreeNode[];
  at: number;
  requestId: string | null;
}

/** What a store does for changeGroupOptimistically: plain reads, and one write transaction that stores a planned change if the group is still at the version it was planned on. */
export interface GroupChangeIo {
  read(groupId: string): Promise<GroupRecord | null>;
  leavesSince(groupId: string, version: number): Promise<Leaf[]>;
  /** The stored tree in one consistent read: the group's version and root, every leaf, and the internal nodes level by level (1…depth). */
  snapshot(groupId: string): Promise<TreeSnapshot | null>;
  /** Which of `commitments` were removed from the group before (group_removed); the first such index, or -1. */
  removedBefore(groupId: string, commitments: string[]): Promise<number>;
  /**
   * In one transaction holding the group row: the group row first (its
   * changed_at and request id are what the audit triggers on the leaves
   * read), then leaves, nodes and root history; null when the group is no
   * longer at `planned.group.version - 1` (another process changed it).
   */
  commit(planned: PlannedWrite): Promise<GroupRecord | null>;
}

/** How many times a change is planned when other processes keep changing the group meanwhile; then "contended" (503 with Retry-After). */
const PLAN_ATTEMPTS = 6;

/**
 * The pause before planning again after losing to another process: random
 * (so that two processes that lost to each other do not meet again in step),
 * growing with the attempts, 10–40 ms after the first loss up to 0.3–1.2 s.
 */
export const replanPause = (attempt: number, random: () => number = Math.random): number => 10 * 2 ** (attempt - 1) * (1 + 3 * random());

/** The depth's bound: a Semaphore tree holds at most 2^32 leaves. */
const MAX_LEAVES = 2 ** 32;

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
  trees: TreeCache,
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
        if (change.kind === "add") {
          // The flag is fixed at creation, so this read decides it for the commit too.
          if ((change.enrolment === true) !== group.budget) return { outcome: "budget_mismatch", budget: group.budget };
          const maxSize = Math.min(change.maxSize ?? MAX_LEAVES, MAX_LEAVES);
          if (group.size + change.commitments.length > maxSize) return { outcome: "full", size: group.size, maxSize };
          // Read after the group row: a removal committed before it is in group_removed; one after it fails the commit's version check.
          // A group that never lost a member has none to look up (a lookup of 10,000 is a synchronous read on SQLite).
          const removed = group.removedVersion === 0 ? -1 : await io.removedBefore(groupId, change.commitments);
          if (removed >= 0) return { outcome: "removed_before", index: removed };
        }
        let since = await trees.replayFrom(groupId, group.version);
        // A process without the tree loads the stored one (leaves and internal nodes) instead of hashing every leaf again.
        if (since === 0 && group.version > 0) {
          const snapshot = await io.snapshot(groupId);
          if (snapshot && snapshot.version <= group.version && (await trees.load(groupId, snapshot))) since = await trees.replayFrom(groupId, group.version);
        }
        const missed = since === null ? [] : await io.leavesSince(groupId, since);
        const treeChange =
          change.kind === "add" ? { kind: "add" as const, commitments: change.commitments } : { kind: "remove" as const, commitment: change.commitment };
        const plan = await trees.plan(groupId, group.version, missed, treeChange);
        if (plan.outcome !== "planned") return plan;
        const version = group.version + 1;
        const stored = await io.commit({
          group: {
            ...group,
            version,
            size: plan.state.size,
            depth: plan.state.depth,
            root: plan.state.root,
            activeMembers: plan.active,
            removedVersion: change.kind === "remove" ? version : group.removedVersion,
          },
          leaves: plan.leaves,
          nodes: plan.nodes,
          at: change.at,
          requestId: change.requestId ?? null,
        });
        if (stored) return { outcome: "changed", group: stored };
        trees.forget(groupId);
        if (attempt >= PLAN_ATTEMPTS) return { outcome: "contended", attempts: attempt };
        await Bun.sleep(replanPause(attempt));
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
