// Groups on PostgreSQL: the group rows, leaves, internal nodes and root
// history; a change is planned outside the row lock (change.ts) and stored here.
import type { SQL } from "bun";
import type { TreeCache } from "../../groups/cache";
import type { Leaf } from "../../groups/tree";
import { hasNul, mapUnreachable } from "../connection/postgres";
import { toGroup } from "./rows";
import { changeGroupOptimistically, levelsOf, toLeaf } from "./change";
import type { ChangeGroupResult, GroupChange, GroupRecord, GroupsStore } from "./records";

/** `rootDurationMs`: how long a replaced root stays acceptable (src/groups/roots.ts). */
export function postgresGroups(sql: SQL, rootDurationMs: number): GroupsStore {
  const store: GroupsStore = {
    async createGroup(group: GroupRecord, maxPerKey = 0): Promise<"created" | "exists" | "too_many"> {
      if (hasNul(group.groupId)) return "exists";
      const challengers = group.challengers === null ? null : JSON.stringify(group.challengers);
      return sql.begin(async (tx): Promise<"created" | "exists" | "too_many"> => {
        // The key's row, locked: creations of one key are serialised, so the count and the bound stay exact across nodes.
        await tx`SELECT 1 FROM api_keys WHERE id = ${group.keyId} FOR UPDATE`;
        const [exists] = await tx`SELECT 1 FROM groups WHERE group_id = ${group.groupId}`;
        if (exists) return "exists";
        if (maxPerKey > 0) {
          const [row] = await tx`SELECT count(*)::int AS n FROM groups WHERE key_id = ${group.keyId}`;
          if (Number(row.n) >= maxPerKey) return "too_many";
        }
        const rows = await tx`
        INSERT INTO groups (group_id, key_id, created_at, version, size, active_members, depth, root, removed_version, mandate, challengers, budget)
        VALUES (${group.groupId}, ${group.keyId}, ${group.createdAt}, 0, 0, 0, 0, '0', 0, ${group.mandate}, ${challengers}, ${group.budget})
        ON CONFLICT (group_id) DO NOTHING RETURNING 1`;
        return rows.length === 1 ? "created" : "exists";
      });
    },

    async getGroup(groupId: string): Promise<GroupRecord | null> {
      if (hasNul(groupId)) return null;
      const [row] = await sql`SELECT * FROM groups WHERE group_id = ${groupId}`;
      return row ? toGroup(row) : null;
    },

    async changeGroup(groupId: string, keyId: string, change: GroupChange, trees: TreeCache): Promise<ChangeGroupResult> {
      if (hasNul(groupId)) return { outcome: "not_found" };
      return changeGroupOptimistically(trees, groupId, keyId, change, {
        read: (id) => store.getGroup(id),
        leavesSince: async (id, version) =>
          (await sql`SELECT leaf_index, commitment FROM group_members WHERE group_id = ${id} AND version > ${version} ORDER BY leaf_index`).map(toLeaf),
        // REPEATABLE READ: the group row, the leaves and the nodes as of one commit.
        snapshot: (id) =>
          sql.begin(async (tx) => {
            await tx`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`;
            const [row] = await tx`SELECT version, root FROM groups WHERE group_id = ${id}`;
            if (!row) return null;
            const leaves = (await tx`SELECT commitment FROM group_members WHERE group_id = ${id} ORDER BY leaf_index`).map(
              (r: { commitment: string }) => r.commitment,
            );
            const nodes = await tx`SELECT level, idx, value FROM group_nodes WHERE group_id = ${id} ORDER BY level, idx`;
            return { version: Number(row.version), root: row.root as string, leaves, levels: levelsOf(nodes) };
          }),
        removedBefore: async (id, commitments) => {
          const [row] = await sql`
          SELECT commitment FROM group_removed WHERE group_id = ${id} AND commitment = ANY(${`{${commitments.join(",")}}`}::text[]) LIMIT 1`;
          return row ? commitments.indexOf(row.commitment) : -1;
        },
        commit: ({ group, leaves, nodes, at, requestId }) =>
          sql.begin(async (tx): Promise<GroupRecord | null> => {
            // The row lock orders every change of this group, on every node; the version says whether the plan still fits.
            const [row] = await tx`SELECT version FROM groups WHERE group_id = ${groupId} FOR UPDATE`;
            if (!row || Number(row.version) !== group.version - 1) return null;
            const { version, size, activeMembers, depth, root, removedVersion } = group;
            // The group row first: the audit trigger on the leaves reads its changed_at and request id.
            const [updated] = await tx`
            UPDATE groups SET version = ${version}, size = ${size}, active_members = ${activeMembers}, depth = ${depth}, root = ${root},
              removed_version = ${removedVersion}, changed_at = ${at}, changed_request_id = ${requestId}
            WHERE group_id = ${groupId} RETURNING *`;
            // One statement for the batch (up to 10,000 leaves), as arrays.
            await tx`
            INSERT INTO group_members (group_id, leaf_index, commitment, version)
            SELECT ${groupId}, i, c, ${version} FROM unnest(${`{${leaves.map((l) => l.index).join(",")}}`}::bigint[],
                                                            ${`{${leaves.map((l) => l.value).join(",")}}`}::text[]) AS t(i, c)
            ON CONFLICT (group_id, leaf_index) DO UPDATE SET commitment = excluded.commitment, version = excluded.version`;
            if (nodes.length > 0)
              await tx`
              INSERT INTO group_nodes (group_id, level, idx, value)
              SELECT ${groupId}, l, i, v FROM unnest(${`{${nodes.map((n) => n.level).join(",")}}`}::bigint[], ${`{${nodes.map((n) => n.index).join(",")}}`}::bigint[],
                                                      ${`{${nodes.map((n) => n.value).join(",")}}`}::text[]) AS t(l, i, v)
              ON CONFLICT (group_id, level, idx) DO UPDATE SET value = excluded.value`;
            await tx`INSERT INTO group_roots (group_id, version, root, made_at) VALUES (${groupId}, ${version}, ${root}, ${at})`;
            return toGroup(updated);
          }),
      });
    },

    async groupMembers(groupId: string, offset: number, limit: number): Promise<string[]> {
      if (hasNul(groupId)) return [];
      const rows = await sql`
      SELECT commitment FROM group_members WHERE group_id = ${groupId} AND leaf_index >= ${offset} ORDER BY leaf_index LIMIT ${limit}`;
      return rows.map((r: { commitment: string }) => r.commitment);
    },

    async groupChanges(groupId: string, since: number, from: number, limit: number): Promise<Leaf[]> {
      if (hasNul(groupId)) return [];
      // Keyset (issue 37): a page starts at a leaf index, a primary-key range; since version 0 every leaf is a change.
      const rows = await sql`
        SELECT leaf_index, commitment FROM group_members WHERE group_id = ${groupId} AND version > ${since} AND leaf_index >= ${from}
        ORDER BY leaf_index LIMIT ${limit}`;
      return rows.map(toLeaf);
    },

    async setGroupChallengers(groupId: string, keyId: string, challengers: string[] | null) {
      if (hasNul(groupId)) return { outcome: "not_found" as const };
      const stored = challengers === null ? null : JSON.stringify(challengers);
      const [row] = await sql`UPDATE groups SET challengers = ${stored} WHERE group_id = ${groupId} AND key_id = ${keyId} RETURNING *`;
      if (row) return { outcome: "set" as const, group: toGroup(row) };
      const [other] = await sql`SELECT 1 FROM groups WHERE group_id = ${groupId}`;
      return { outcome: other ? ("forbidden" as const) : ("not_found" as const) };
    },

    async setGroupMandate(groupId: string, keyId: string, mandate: string | null) {
      if (hasNul(groupId)) return { outcome: "not_found" as const };
      const [row] = await sql`UPDATE groups SET mandate = ${mandate} WHERE group_id = ${groupId} AND key_id = ${keyId} RETURNING *`;
      if (row) return { outcome: "set" as const, group: toGroup(row) };
      const [other] = await sql`SELECT 1 FROM groups WHERE group_id = ${groupId}`;
      return { outcome: other ? ("forbidden" as const) : ("not_found" as const) };
    },

    async acceptableRoot(groupId: string, root: string, now: number): Promise<boolean> {
      if (hasNul(groupId, root)) return false;
      const rows = await sql`
      SELECT 1 FROM group_roots r JOIN groups g ON g.group_id = r.group_id
      WHERE r.group_id = ${groupId} AND r.root = ${root} AND r.version >= g.removed_version AND r.root <> '0'
        AND (r.version = g.version OR EXISTS (SELECT 1 FROM group_roots n WHERE n.group_id = r.group_id AND n.version = r.version + 1
                                               AND n.made_at > ${now - rootDurationMs}))
      LIMIT 1`;
      return rows.length > 0;
    },
  };
  return mapUnreachable(store);
}
