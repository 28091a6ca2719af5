// Groups on SQLite: the group rows, leaves, internal nodes and root history;
// a change is planned outside the write lock (change.ts) and stored here.
import type { TreeCache } from "../../groups/cache";
import type { Leaf } from "../../groups/tree";
import type { SqliteDb } from "../connection/sqlite";
import { toGroup } from "./rows";
import { changeGroupOptimistically, levelsOf, type NodeRow, toLeaf } from "./change";
import type { ChangeGroupResult, GroupChange, GroupRecord, GroupsStore } from "./records";

/** `rootDurationMs`: how long a replaced root stays acceptable (src/groups/roots.ts). */
export function sqliteGroups({ db, immediate }: SqliteDb, rootDurationMs: number): GroupsStore {
  const q = {
    insertGroup: db.query(
      `INSERT INTO groups (group_id, key_id, created_at, version, size, active_members, depth, root, removed_version, mandate, challengers, budget)
       VALUES ($groupId, $keyId, $createdAt, 0, 0, 0, 0, '0', 0, $mandate, $challengers, $budget) ON CONFLICT (group_id) DO NOTHING`,
    ),
    getGroup: db.query("SELECT * FROM groups WHERE group_id = ?"),
    leavesSince: db.query("SELECT leaf_index, commitment FROM group_members WHERE group_id = ? AND version > ? ORDER BY leaf_index"),
    // A change's leaves and nodes in one statement each, from JSON arrays of [index, value] and [level, index, value]: row by
    // row, 10,000 leaves with their audit trigger held the write lock (and the event loop) for 350–520 ms; this way ≈ 35 ms.
    putLeaves: db.query(
      `INSERT INTO group_members (group_id, leaf_index, commitment, version)
       SELECT $groupId, value ->> 0, value ->> 1, $version FROM json_each($leaves) WHERE true
       ON CONFLICT (group_id, leaf_index) DO UPDATE SET commitment = excluded.commitment, version = excluded.version`,
    ),
    updateGroup: db.query(
      `UPDATE groups SET version = $version, size = $size, active_members = $active, depth = $depth, root = $root, removed_version = $removedVersion,
         changed_at = $at, changed_request_id = $requestId
       WHERE group_id = $groupId RETURNING *`,
    ),
    insertRoot: db.query("INSERT INTO group_roots (group_id, version, root, made_at) VALUES (?, ?, ?, ?)"),
    putNodes: db.query(
      `INSERT INTO group_nodes (group_id, level, idx, value)
       SELECT $groupId, value ->> 0, value ->> 1, value ->> 2 FROM json_each($nodes) WHERE true
       ON CONFLICT (group_id, level, idx) DO UPDATE SET value = excluded.value`,
    ),
    allLeaves: db.query("SELECT commitment FROM group_members WHERE group_id = ? ORDER BY leaf_index"),
    allNodes: db.query("SELECT level, idx, value FROM group_nodes WHERE group_id = ? ORDER BY level, idx"),
    members: db.query("SELECT commitment FROM group_members WHERE group_id = ? AND leaf_index >= ? ORDER BY leaf_index LIMIT ?"),
    setGroupMandate: db.query("UPDATE groups SET mandate = ? WHERE group_id = ? RETURNING *"),
    setGroupChallengers: db.query("UPDATE groups SET challengers = ? WHERE group_id = ? RETURNING *"),
    countGroups: db.query("SELECT count(*) AS n FROM groups WHERE key_id = ?"),
    groupExists: db.query("SELECT 1 AS ok FROM groups WHERE group_id = ?"),
    removedAmong: db.query("SELECT commitment FROM group_removed WHERE group_id = ? AND commitment IN (SELECT value FROM json_each(?)) LIMIT 1"),
    // Keyset (issue 37): a page starts at a leaf index, read on the primary key; the pages of one read scan the group once.
    changes: db.query("SELECT leaf_index, commitment FROM group_members WHERE group_id = ? AND version > ? AND leaf_index >= ? ORDER BY leaf_index LIMIT ?"),
    // Since version 0 every leaf is a change, and the n-th change is leaf n: a primary-key range, not an OFFSET scan.
    leavesFrom: db.query("SELECT leaf_index, commitment FROM group_members WHERE group_id = ? AND leaf_index >= ? ORDER BY leaf_index LIMIT ?"),
    acceptableRoot: db.query(
      // src/groups/roots.ts: since the last removal, and current or replaced (its successor made) after the cutoff.
      `SELECT 1 AS ok FROM group_roots r JOIN groups g ON g.group_id = r.group_id
       WHERE r.group_id = ? AND r.root = ? AND r.version >= g.removed_version AND r.root <> '0'
         AND (r.version = g.version OR EXISTS (SELECT 1 FROM group_roots n WHERE n.group_id = r.group_id AND n.version = r.version + 1 AND n.made_at > ?))
       LIMIT 1`,
    ),
  };

  const getGroup = async (groupId: string): Promise<GroupRecord | null> => {
    const row = q.getGroup.get(groupId);
    return row ? toGroup(row) : null;
  };

  return {
    async createGroup(group: GroupRecord, maxPerKey = 0): Promise<"created" | "exists" | "too_many"> {
      return immediate("create group", () => {
        if (q.groupExists.get(group.groupId)) return "exists";
        if (maxPerKey > 0 && (q.countGroups.get(group.keyId) as { n: number }).n >= maxPerKey) return "too_many";
        const challengers = group.challengers === null ? null : JSON.stringify(group.challengers);
        const inserted = q.insertGroup.run({
          groupId: group.groupId,
          keyId: group.keyId,
          createdAt: group.createdAt,
          mandate: group.mandate,
          challengers,
          budget: group.budget ? 1 : 0,
        });
        return inserted.changes === 1 ? "created" : "exists";
      });
    },

    getGroup,

    async changeGroup(groupId: string, keyId: string, change: GroupChange, trees: TreeCache): Promise<ChangeGroupResult> {
      return changeGroupOptimistically(trees, groupId, keyId, change, {
        read: async (id) => getGroup(id),
        leavesSince: async (id, version) => (q.leavesSince.all(id, version) as { leaf_index: number; commitment: string }[]).map(toLeaf),
        // One read transaction: in WAL mode it sees one commit's state throughout.
        snapshot: async (id) =>
          db.transaction(() => {
            const row = q.getGroup.get(id);
            if (!row) return null;
            const { version, root } = toGroup(row);
            const leaves = (q.allLeaves.all(id) as { commitment: string }[]).map((r) => r.commitment);
            return { version, root, leaves, levels: levelsOf(q.allNodes.all(id) as NodeRow[]) };
          })(),
        removedBefore: async (id, commitments) => {
          const row = q.removedAmong.get(id, JSON.stringify(commitments)) as { commitment: string } | null;
          return row ? commitments.indexOf(row.commitment) : -1;
        },
        commit: ({ group, leaves, nodes, at, requestId }) =>
          immediate("change group", (): GroupRecord | null => {
            const current = q.getGroup.get(groupId) as { version: number } | null;
            if (!current || current.version !== group.version - 1) return null;
            const { version, size, activeMembers: active, depth, root, removedVersion } = group;
            // The group row first: the audit triggers on the leaves read its changed_at and request id.
            const updated = toGroup(q.updateGroup.get({ groupId, version, size, active, depth, root, removedVersion, at, requestId }));
            q.putLeaves.run({ groupId, version, leaves: JSON.stringify(leaves.map((leaf) => [leaf.index, leaf.value])) });
            if (nodes.length > 0) q.putNodes.run({ groupId, nodes: JSON.stringify(nodes.map((node) => [node.level, node.index, node.value])) });
            q.insertRoot.run(groupId, version, root, at);
            return updated;
          }),
      });
    },

    async groupMembers(groupId: string, offset: number, limit: number): Promise<string[]> {
      return (q.members.all(groupId, offset, limit) as { commitment: string }[]).map((r) => r.commitment);
    },

    async groupChanges(groupId: string, since: number, from: number, limit: number): Promise<Leaf[]> {
      const rows = since === 0 ? q.leavesFrom.all(groupId, from, limit) : q.changes.all(groupId, since, from, limit);
      return (rows as { leaf_index: number; commitment: string }[]).map(toLeaf);
    },

    async setGroupChallengers(groupId: string, keyId: string, challengers: string[] | null) {
      return immediate("set group challengers", () => {
        const row = q.getGroup.get(groupId) as { key_id: string } | null;
        if (!row) return { outcome: "not_found" as const };
        if (row.key_id !== keyId) return { outcome: "forbidden" as const };
        const stored = challengers === null ? null : JSON.stringify(challengers);
        return { outcome: "set" as const, group: toGroup(q.setGroupChallengers.get(stored, groupId)) };
      });
    },

    async setGroupMandate(groupId: string, keyId: string, mandate: string | null) {
      return immediate("set group mandate", () => {
        const row = q.getGroup.get(groupId) as { key_id: string } | null;
        if (!row) return { outcome: "not_found" as const };
        if (row.key_id !== keyId) return { outcome: "forbidden" as const };
        return { outcome: "set" as const, group: toGroup(q.setGroupMandate.get(mandate, groupId)) };
      });
    },

    async acceptableRoot(groupId: string, root: string, now: number): Promise<boolean> {
      return q.acceptableRoot.get(groupId, root, now - rootDurationMs) !== null;
    },
  };
}
