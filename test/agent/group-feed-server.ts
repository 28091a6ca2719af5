// A stand-in for the service's public members route with its changes feed
// (the wire contract of issue 32, src/agent/group/sync.ts), on a real
// loopback port: the agent's sync is tested against it, and it counts every
// leaf record it serves so a test can say what a sync downloaded.
//
//   GET /v1/groups/{id}/members                 → {group_id, version, size, merkle_tree_root, merkle_tree_depth, offset, members, next_offset} (+ ETag)
//   GET /v1/groups/{id}/members?since=V[&offset=N][&limit=M]
//     → {group_id, version, size, merkle_tree_root, merkle_tree_depth, since, offset, count, changes, next_offset}
import { LeanTree, nodeBytes } from "../../src/groups/lean-tree";

interface Group {
  tree: LeanTree;
  /** The group version at which each leaf last changed. */
  changedAt: number[];
  version: number;
}

export interface FeedServer {
  url: string;
  /** Leaf records served through the feed (and leaves through the plain list) since the last reset. */
  served: { records: number; requests: number };
  add(groupId: string, commitments: readonly bigint[]): void;
  remove(groupId: string, commitment: bigint): void;
  state(groupId: string): { size: number; root: bigint; version: number; depth: number; active: number };
  /** The group's tree itself (the bench writes an agent's cache file from it). */
  tree(groupId: string): LeanTree;
  /** Rewrites the records of every feed answer (a lying service); undefined to stop. */
  lie?: (records: { index: number; value: bigint }[]) => { index: number; value: bigint }[];
  /** Leaves per feed page (default 1,000). */
  pageSize: number;
  stop(): void;
}

export function startFeedServer(): FeedServer {
  const groups = new Map<string, Group>();
  const group = (id: string) => {
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { tree: new LeanTree(), changedAt: [], version: 0 }));
    return g;
  };
  const feed: FeedServer = {
    url: "",
    served: { records: 0, requests: 0 },
    pageSize: 1000,
    add(groupId, commitments) {
      const g = group(groupId);
      g.version++;
      g.tree.apply(commitments.map((value, i) => ({ index: g.tree.size + i, value })));
      for (let i = g.changedAt.length; i < g.tree.size; i++) g.changedAt.push(g.version);
    },
    remove(groupId, commitment) {
      const g = group(groupId);
      const index = g.tree.indexOf(commitment);
      if (index < 0) throw new Error("not a member");
      g.version++;
      g.tree.apply([{ index, value: 0n }]);
      g.changedAt[index] = g.version;
    },
    state(groupId) {
      const g = group(groupId);
      return { size: g.tree.size, root: g.tree.root, version: g.version, depth: Math.max(1, g.tree.depth), active: g.tree.active };
    },
    tree: (groupId) => group(groupId).tree,
    stop: () => server.stop(true),
  };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      const match = /^\/v1\/groups\/([^/]+)\/members$/.exec(url.pathname);
      const g = match ? groups.get(decodeURIComponent(match[1]!)) : undefined;
      if (!match || !g) return Response.json({ error: "Group not found" }, { status: 404 });
      feed.served.requests++;
      const groupId = decodeURIComponent(match[1]!);
      const head = {
        group_id: groupId,
        version: g.version,
        size: g.tree.size,
        merkle_tree_root: g.tree.root.toString(),
        merkle_tree_depth: g.tree.depth,
      };
      const offset = Number(url.searchParams.get("offset") ?? 0);
      const limit = Number(url.searchParams.get("limit") ?? feed.pageSize);
      const since = url.searchParams.get("since");
      if (since === null) {
        const etag = `"${g.version}"`;
        if (request.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers: { etag } });
        const members: string[] = [];
        for (let i = offset; i < Math.min(g.tree.size, offset + limit); i++) members.push(g.tree.leaf(i).toString());
        feed.served.records += members.length;
        const end = offset + members.length;
        return Response.json({ ...head, offset, members, next_offset: end < g.tree.size ? end : null }, { headers: { etag } });
      }
      const from = Number(since);
      if (!Number.isSafeInteger(from) || from < 0 || from > g.version) return Response.json({ error: "Invalid field since" }, { status: 400 });
      const all: { index: number; value: bigint }[] = [];
      for (let i = 0; i < g.tree.size; i++) if (g.changedAt[i]! > from) all.push({ index: i, value: g.tree.leaf(i) });
      const page = all.slice(offset, offset + limit);
      const records = feed.lie ? feed.lie(page) : page;
      const bytes = new Uint8Array(records.length * 36);
      records.forEach((r, k) => {
        new DataView(bytes.buffer).setUint32(k * 36, r.index);
        bytes.set(nodeBytes(r.value), k * 36 + 4);
      });
      feed.served.records += records.length;
      const end = offset + page.length;
      return Response.json({
        ...head,
        since: from,
        offset,
        count: records.length,
        changes: Buffer.from(bytes).toString("base64url"),
        next_offset: end < all.length ? end : null,
      });
    },
  });
  feed.url = `http://127.0.0.1:${server.port}`;
  return feed;
}
