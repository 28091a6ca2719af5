// Groups at scale and their owners' rules (issues 32, 34), on both stores:
// the members route's version, ETag/304 and changes since a version (decoded
// and applied, they give the page's root); the bounds (groups per key, leaves
// per group, additions in flight per key) each refused with a message naming
// the setting; a removed commitment never added back; challengers; an audit
// entry per membership change; the challenge's size; the tree cache's LRU
// drop and reload with the same root; the tree thread gives the same roots.
import { beforeAll, describe, expect, test } from "bun:test";
import { Group } from "@semaphore-protocol/group";
import { GroupTrees, TREE_BYTES_PER_LEAF } from "../../src/groups/cache";
import { ThreadTreeCache } from "../../src/groups/thread";
import { semaphoreTree } from "../support/lean-imt";
import { authenticate } from "../../src/modules/keys/service";
import { decodeChanges } from "../../src/modules/groups/model";
import { ReaderWindows, readerOf } from "../../src/modules/groups/service";
import { createHarness, type Harness } from "../support/harness";
import { storesUnderTest } from "../support/stores";

const commitments = (from: number, n: number) => Array.from({ length: n }, (_, i) => String(5000n + BigInt(from + i) * 104_729n));

/** A stock group of these leaves ("0": removed), as a client rebuilds it. */
function stock(leaves: string[]): Group {
  const group = new Group(leaves.map((m) => (m === "0" ? 1n : BigInt(m))));
  leaves.forEach((m, i) => m === "0" && group.removeMember(i));
  return group;
}

for (const { name, open } of storesUnderTest()) {
  describe(`groups at scale on ${name}`, () => {
    let h: Harness;
    let owner: string;
    let platform: string;
    let stranger: string;
    let platformId: string;
    let ownerId: string;

    beforeAll(async () => {
      const store = await open();
      h = await createHarness(store, { limits: { groupMaxPerKey: 3, groupMaxMembers: 40, groupAdditionsInFlight: 1, membersReadsPerMinute: 0 } });
      owner = await h.newKey("owner");
      platform = await h.newKey("platform");
      stranger = await h.newKey("stranger");
      platformId = (await authenticate(h.store, platform)).id;
      ownerId = (await authenticate(h.store, owner)).id;
    }, 60_000);

    test("members: version and ETag on every page; If-None-Match answers 304 without a body until the group changes", async () => {
      expect((await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "sync" } })).status).toBe(201);
      await h.call("POST", "/v1/groups/sync/members", { key: owner, body: { identity_commitments: commitments(0, 6) } });
      const page = await h.call("GET", "/v1/groups/sync/members");
      expect(page.status).toBe(200);
      expect(page.body.version).toBe(1);
      const etag = page.headers.get("etag")!;
      expect(etag).toBe(`"1-${page.body.merkle_tree_root}"`);
      expect(page.headers.get("cache-control")).toBe("no-cache");
      // Read again (from the page cache): the same answer and tag.
      const twice = await h.call("GET", "/v1/groups/sync/members");
      expect(twice.body).toEqual(page.body);
      expect(twice.headers.get("etag")).toBe(etag);
      const again = await h.call("GET", "/v1/groups/sync/members?offset=2", { headers: { "if-none-match": etag } });
      expect(again.status).toBe(304);
      expect(again.body).toBe("");
      expect(again.headers.get("etag")).toBe(etag);
      expect((await h.call("GET", "/v1/groups/sync/members", { headers: { "if-none-match": `"0-0", ${etag}` } })).status).toBe(304);
      expect((await h.call("GET", "/v1/groups/sync/members", { headers: { "if-none-match": "*" } })).status).toBe(304);
      expect((await h.call("GET", "/v1/groups/sync/members", { headers: { "if-none-match": '"0-0"' } })).status).toBe(200);
      await h.call("DELETE", `/v1/groups/sync/members/${commitments(0, 6)[2]}`, { key: owner });
      const changed = await h.call("GET", "/v1/groups/sync/members", { headers: { "if-none-match": etag } });
      expect(changed.status).toBe(200);
      expect(changed.body.version).toBe(2);
      expect(changed.headers.get("etag")).not.toBe(etag);
    });

    test("changes since a version: the records added and removed since, which applied to the tree at that version give the root", async () => {
      const first = commitments(0, 6);
      const all = await h.call("GET", "/v1/groups/sync/members?since=0");
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ group_id: "sync", version: 2, since: 0, offset: 0, count: 6, next_offset: null });
      const leaves = first.map((v, i) => (i === 2 ? "0" : v));
      expect(decodeChanges(all.body.changes)).toEqual(leaves.map((value, index) => ({ index, value })));
      // 36 bytes a record, base64url without padding.
      expect(all.body.changes).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.from(all.body.changes, "base64url").length).toBe(6 * 36);

      // A client at version 1 (the six added) learns only the removal; then an addition and a removal later.
      const since1 = await h.call("GET", "/v1/groups/sync/members?since=1");
      expect(decodeChanges(since1.body.changes)).toEqual([{ index: 2, value: "0" }]);
      await h.call("POST", "/v1/groups/sync/members", { key: owner, body: { identity_commitments: commitments(6, 3) } });
      await h.call("DELETE", `/v1/groups/sync/members/${first[0]}`, { key: owner });
      const since2 = await h.call("GET", "/v1/groups/sync/members?since=2");
      expect(since2.body).toMatchObject({ version: 4, size: 9, since: 2, count: 4, next_offset: null });
      const tree = semaphoreTree(leaves.map(BigInt));
      for (const { index, value } of decodeChanges(since2.body.changes)) {
        if (index >= tree.size) tree.insert(BigInt(value));
        else tree.update(index, BigInt(value));
      }
      expect(tree.root.toString()).toBe(since2.body.merkle_tree_root);
      expect(tree.root.toString()).toBe(stock(["0", ...leaves.slice(1), ...commitments(6, 3)]).root.toString());

      // Paged by records.
      const p1 = await h.call("GET", "/v1/groups/sync/members?since=0&limit=4");
      expect(p1.body).toMatchObject({ count: 4, next_offset: 4 });
      const p2 = await h.call("GET", "/v1/groups/sync/members?since=0&offset=4&limit=4");
      expect(p2.body).toMatchObject({ count: 4, next_offset: 8 });
      const p3 = await h.call("GET", "/v1/groups/sync/members?since=0&offset=8&limit=4");
      expect(p3.body).toMatchObject({ count: 1, next_offset: null });
      expect(decodeChanges(p2.body.changes).map((leaf) => leaf.index)).toEqual([4, 5, 6, 7]);

      // The version one holds must exist; limits are bounded.
      const ahead = await h.call("GET", "/v1/groups/sync/members?since=5");
      expect(ahead.status).toBe(400);
      expect(ahead.body.error).toBe("Invalid field since: must not be above the group's version 4");
      expect((await h.call("GET", "/v1/groups/sync/members?since=-1")).body.error).toStartWith("Invalid field since");
      expect((await h.call("GET", "/v1/groups/sync/members?since=0&limit=10001")).body.error).toBe(
        "Invalid field limit: must be a whole number from 1 to 10000",
      );
    });

    test("changes since a version are paged by key: offset is a leaf index, next_offset the leaf after a page's last record", async () => {
      expect((await h.call("POST", "/v1/groups", { key: stranger, body: { group_id: "keyset" } })).status).toBe(201);
      const leaves = commitments(400, 10);
      await h.call("POST", "/v1/groups/keyset/members", { key: stranger, body: { identity_commitments: leaves } });
      for (const i of [1, 5, 8]) expect((await h.call("DELETE", `/v1/groups/keyset/members/${leaves[i]}`, { key: stranger })).status).toBe(200);
      const first = await h.call("GET", "/v1/groups/keyset/members?since=1&limit=2");
      expect(first.body).toMatchObject({ version: 4, since: 1, offset: 0, count: 2, next_offset: 6 });
      expect(decodeChanges(first.body.changes)).toEqual([
        { index: 1, value: "0" },
        { index: 5, value: "0" },
      ]);
      const next = await h.call("GET", `/v1/groups/keyset/members?since=1&offset=${first.body.next_offset}&limit=2`);
      expect(next.body).toMatchObject({ offset: 6, count: 1, next_offset: null });
      expect(decodeChanges(next.body.changes)).toEqual([{ index: 8, value: "0" }]);
      // Any leaf index may start a page: the changes of leaves from it on.
      const from2 = await h.call("GET", "/v1/groups/keyset/members?since=1&offset=2");
      expect(decodeChanges(from2.body.changes).map((leaf) => leaf.index)).toEqual([5, 8]);
      // A full page may be followed by an empty one (the key cannot tell that no change follows), which ends the read.
      const since3 = await h.call("GET", "/v1/groups/keyset/members?since=3&limit=1");
      expect(since3.body).toMatchObject({ count: 1, next_offset: 9 });
      expect((await h.call("GET", "/v1/groups/keyset/members?since=3&limit=1&offset=9")).body).toMatchObject({ count: 0, next_offset: null });
    });

    test("a removed commitment is never added back; every change is in the audit trail with key, group, commitment and request id", async () => {
      const removed = commitments(0, 1)[0]!;
      const refused = await h.call("POST", "/v1/groups/sync/members", {
        key: owner,
        body: { identity_commitments: [commitments(20, 1)[0], removed] },
        headers: { "x-request-id": "readd-1" },
      });
      expect(refused.status).toBe(409);
      expect(refused.body).toEqual({
        error: "Commitment removed before",
        message: "identity_commitments[1] was removed from this group and cannot be added back to it: enrol a new identity (a new commitment).",
      });
      // The members route still shows 0 for it, never the commitment.
      const page = await h.call("GET", "/v1/groups/sync/members");
      expect(page.body.members[0]).toBe("0");
      expect(JSON.stringify(page.body)).not.toContain(removed);

      const entries = (await h.store.listAudit({ keyId: ownerId, limit: 1000 })).filter((e) => e.groupId === "sync");
      // 6 + 3 added, 2 removed; nothing of the refused batch.
      expect(entries.filter((e) => e.event === "group.member_added").map((e) => e.commitment)).toEqual([...commitments(0, 6), ...commitments(6, 3)]);
      expect(entries.filter((e) => e.event === "group.member_removed").map((e) => e.commitment)).toEqual([commitments(0, 6)[2], removed]);
      for (const entry of entries) {
        expect(entry).toMatchObject({ keyId: ownerId, sessionId: "", agentId: "", action: "", reason: null, at: h.clock.now() });
        expect(entry.result).toBe(entry.event === "group.member_added" ? "added" : "removed");
        expect(typeof entry.requestId).toBe("string");
      }
      await h.call("DELETE", `/v1/groups/sync/members/${commitments(6, 1)[0]}`, { key: owner, headers: { "x-request-id": "remove-7" } });
      const last = (await h.store.listAudit({ keyId: ownerId, limit: 1000 })).at(-1)!;
      expect(last).toMatchObject({ event: "group.member_removed", groupId: "sync", commitment: commitments(6, 1)[0], requestId: "remove-7" });
    });

    test("challengers: only the keys the owner named may challenge; the owner sets and clears the list; others do not see it", async () => {
      const created = await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "closed", challengers: [platformId, platformId] } });
      expect(created.status).toBe(201);
      expect(created.body.challengers).toEqual([platformId]);
      await h.call("POST", "/v1/groups/closed/members", { key: owner, body: { identity_commitments: commitments(30, 3) } });
      const ask = (key: string) => h.call("POST", "/v1/verify/challenge", { key, body: { group_id: "closed", action: "purchase" } });
      const allowed = await ask(platform);
      expect(allowed.status).toBe(200);
      // The challenge says the group's size when it was made.
      expect(allowed.body.size).toBe(3);
      const refused = await ask(stranger);
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({
        error: "Key may not challenge this group",
        message: "The group's owner restricts which API keys may challenge it (challengers).",
      });
      expect((await h.call("GET", "/v1/groups/closed", { key: stranger })).body.challengers).toBeUndefined();
      expect((await h.call("PATCH", "/v1/groups/closed", { key: stranger, body: { challengers: null } })).status).toBe(403);
      const opened = await h.call("PATCH", "/v1/groups/closed", { key: owner, body: { challengers: null } });
      expect(opened.status).toBe(200);
      expect(opened.body.challengers).toBeNull();
      expect((await ask(stranger)).status).toBe(200);
      expect((await h.call("PATCH", "/v1/groups/closed", { key: owner, body: { challengers: "all" } })).status).toBe(400);
      expect((await h.call("PATCH", "/v1/groups/nope", { key: owner, body: { challengers: [] } })).status).toBe(404);
      // An empty list: nobody may.
      await h.call("PATCH", "/v1/groups/closed", { key: owner, body: { challengers: [] } });
      expect((await ask(platform)).status).toBe(403);
      // A key named again may.
      expect((await h.call("PATCH", "/v1/groups/closed", { key: owner, body: { challengers: [platformId] } })).body.challengers).toEqual([platformId]);
      expect((await ask(platform)).status).toBe(200);
    });

    test("bounds: groups per key, leaves per group, each refused with a message naming its setting", async () => {
      // The owner has "sync" and "closed"; GROUP_MAX_PER_KEY = 3.
      expect((await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "third" } })).status).toBe(201);
      const fourth = await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "fourth" } });
      expect(fourth.status).toBe(409);
      expect(fourth.body).toEqual({ error: "Too many groups", message: "This key owns 3 groups, the most one key may own (GROUP_MAX_PER_KEY = 3)." });
      // Another key is not affected.
      expect((await h.call("POST", "/v1/groups", { key: stranger, body: { group_id: "fourth" } })).status).toBe(201);
      // GROUP_MAX_MEMBERS = 40 leaves.
      expect((await h.call("POST", "/v1/groups/third/members", { key: owner, body: { identity_commitments: commitments(100, 38) } })).status).toBe(201);
      const full = await h.call("POST", "/v1/groups/third/members", { key: owner, body: { identity_commitments: commitments(200, 3) } });
      expect(full.status).toBe(409);
      expect(full.body).toEqual({ error: "Group full", message: "The group holds 38 leaves; this batch would take it past GROUP_MAX_MEMBERS = 40." });
      expect((await h.call("POST", "/v1/groups/third/members", { key: owner, body: { identity_commitments: commitments(200, 2) } })).body.size).toBe(40);
    });

    test("additions in flight per key: past GROUP_ADDITIONS_IN_FLIGHT a 429 with Retry-After naming it; another key is not refused", async () => {
      // The tree work of every change waits for the gate: the first batch stays in flight while the others arrive.
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const trees = new GroupTrees();
      const plan = trees.plan.bind(trees);
      trees.plan = async (...args) => (await gate, plan(...args));
      const g = await createHarness(h.store, { groups: trees, limits: { groupAdditionsInFlight: 1 } });
      await g.call("POST", "/v1/groups", { key: stranger, body: { group_id: "busy" } });
      const first = g.call("POST", "/v1/groups/busy/members", { key: stranger, body: { identity_commitments: commitments(1000, 10) } });
      const other = g.call("POST", "/v1/groups/sync/members", { key: owner, body: { identity_commitments: commitments(500, 2) } });
      await Bun.sleep(50);
      const second = await g.call("POST", "/v1/groups/busy/members", { key: stranger, body: { identity_commitments: commitments(1010, 10) } });
      expect(second.status).toBe(429);
      expect(second.headers.get("retry-after")).toBe("2");
      expect(second.body).toEqual({
        error: "Too many additions in flight",
        message: "This key has 1 member additions running or queued, the most one key may have (GROUP_ADDITIONS_IN_FLIGHT = 1); retry after one finishes.",
      });
      open();
      expect((await first).status).toBe(201);
      expect((await other).status).toBe(201);
      // Once it finished, the key adds again.
      expect((await g.call("POST", "/v1/groups/busy/members", { key: stranger, body: { identity_commitments: commitments(1010, 10) } })).status).toBe(201);
    });
  });
}

describe("the tree cache", () => {
  test("a budget drops the least recently used tree; the store reloads it from its nodes with the same root, without replaying", async () => {
    // Room for one tree of 20 leaves, not two.
    const trees = new GroupTrees(30 * TREE_BYTES_PER_LEAF);
    const h = await createHarness(undefined, { groups: trees });
    const owner = await h.newKey("owner");
    for (const id of ["a", "b"]) {
      await h.call("POST", "/v1/groups", { key: owner, body: { group_id: id } });
      await h.call("POST", `/v1/groups/${id}/members`, { key: owner, body: { identity_commitments: commitments(id === "a" ? 0 : 100, 20) } });
    }
    expect(trees.has("a")).toBe(false);
    expect(trees.has("b")).toBe(true);
    expect(trees.bytes).toBeLessThanOrEqual(30 * TREE_BYTES_PER_LEAF);
    const before = (await h.call("GET", "/v1/groups/a", { key: owner })).body.merkle_tree_root;
    // Its next change loads it (from the stored nodes), and the root after is the stock group's.
    const loads: number[] = [];
    const load = trees.load.bind(trees);
    trees.load = async (groupId, snapshot) => {
      loads.push(snapshot.leaves.length);
      const loaded = await load(groupId, snapshot);
      expect(loaded).toBe(true);
      return loaded;
    };
    const after = await h.call("POST", "/v1/groups/a/members", { key: owner, body: { identity_commitments: commitments(50, 1) } });
    expect(loads).toEqual([20]);
    expect(after.body.merkle_tree_root).toBe(stock([...commitments(0, 20), ...commitments(50, 1)]).root.toString());
    expect(before).toBe(stock(commitments(0, 20)).root.toString());
    expect(trees.has("a")).toBe(true);
    expect(trees.has("b")).toBe(false);
  });

  test("a tree over the budget on its own is dropped alone after its change (the others stay) and reloaded the next time", async () => {
    const trees = new GroupTrees(5 * TREE_BYTES_PER_LEAF);
    const h = await createHarness(undefined, { groups: trees });
    const owner = await h.newKey("owner");
    // A small group cached first: the oversized one goes alone, the small one stays.
    await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "small" } });
    await h.call("POST", "/v1/groups/small/members", { key: owner, body: { identity_commitments: commitments(100, 3) } });
    expect(trees.has("small")).toBe(true);
    await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "big" } });
    await h.call("POST", "/v1/groups/big/members", { key: owner, body: { identity_commitments: commitments(0, 8) } });
    expect(trees.has("big")).toBe(false);
    expect(trees.has("small")).toBe(true);
    const more = await h.call("POST", "/v1/groups/big/members", { key: owner, body: { identity_commitments: commitments(8, 1) } });
    expect(more.body.merkle_tree_root).toBe(stock(commitments(0, 9)).root.toString());
  });

  test("on a worker thread: the same roots as the stock group, across processes and removals", async () => {
    const threaded = await ThreadTreeCache.start(0);
    try {
      const h = await createHarness(undefined, { groups: threaded });
      const other = await createHarness(h.store, { groups: new GroupTrees() });
      const owner = await h.newKey("owner");
      await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "t" } });
      await h.call("POST", "/v1/groups/t/members", { key: owner, body: { identity_commitments: commitments(0, 7) } });
      await other.call("POST", "/v1/groups/t/members", { key: owner, body: { identity_commitments: commitments(7, 2) } });
      await h.call("DELETE", `/v1/groups/t/members/${commitments(0, 9)[3]}`, { key: owner });
      const last = await h.call("POST", "/v1/groups/t/members", { key: owner, body: { identity_commitments: commitments(9, 1) } });
      const leaves = commitments(0, 10).map((v, i) => (i === 3 ? "0" : v));
      expect(last.body).toMatchObject({ size: 10, active_members: 9, merkle_tree_root: stock(leaves).root.toString() });
      // A refusal from the thread (a repeated commitment) is the same 400.
      const repeated = await h.call("POST", "/v1/groups/t/members", { key: owner, body: { identity_commitments: [commitments(1, 1)[0]] } });
      expect(repeated.body.error).toBe("Invalid field identity_commitments: [0] is already a member of the group");
    } finally {
      threaded.close();
    }
  });
});

test("members reads per client over a sliding minute: no second burst right after a minute boundary; Retry-After says when one more fits", () => {
  // 10:59: the limit (2) is used up in the minute's last second.
  let now = 60_000 * 10 + 59_000;
  const readers = new ReaderWindows(2, () => now);
  const refusal = (address: string): any => {
    try {
      readers.admit(address);
      return null;
    } catch (error) {
      return error;
    }
  };
  readers.admit("10.0.0.1");
  readers.admit("10.0.0.1");
  readers.admit("10.0.0.2");
  expect(refusal("10.0.0.1")?.kind).toBe("members_rate_limited");
  // Half a second into the next minute, fixed windows admitted 2 more (4 in 1.5 s); the sliding minute still holds the 3 counted.
  now = 60_000 * 11 + 500;
  const refused = refusal("10.0.0.1");
  expect(refused?.kind).toBe("members_rate_limited");
  expect(refused.body.message).toContain("GROUP_MEMBERS_READS_PER_MINUTE = 2");
  // The last minute's 3 and this one: one more fits once 1 + 1 + round(3 · (1 − e)) ≤ 2, after 11:50.
  expect(refused.details.retryAfterSeconds).toBe(50);
  now += 39_000;
  expect(refusal("10.0.0.1")?.kind).toBe("members_rate_limited");
  // The refused attempts count too: a client that keeps asking waits on.
  now = 60_000 * 12 + 40_001;
  expect(refusal("10.0.0.1")).toBeNull();
  // Another client was never refused.
  expect(refusal("10.0.0.2")).toBeNull();
});

test("members reads are counted per IPv6 /64 (a host picks any address of its /64 at will), per IPv4 address, and an IPv4-mapped address as its IPv4", () => {
  expect(readerOf("2001:DB8::1")).toBe("2001:db8:0:0::/64");
  expect(readerOf("2001:db8:0:0:ffff:1:2:3")).toBe("2001:db8:0:0::/64");
  expect(readerOf("2001:db8:0:1::1")).toBe("2001:db8:0:1::/64");
  expect(readerOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
  expect(readerOf("::1")).toBe("0:0:0:0::/64");
  expect(readerOf("::ffff:192.0.2.7")).toBe("192.0.2.7");
  expect(readerOf("192.0.2.7")).toBe("192.0.2.7");
  const readers = new ReaderWindows(2, () => 60_000 * 10);
  readers.admit("2001:db8::1");
  readers.admit("2001:db8::2");
  expect(() => readers.admit("2001:db8::3")).toThrow("members_rate_limited");
  readers.admit("2001:db8:0:1::1");
  readers.admit("::ffff:192.0.2.7");
  readers.admit("192.0.2.7");
  expect(() => readers.admit("192.0.2.7")).toThrow("members_rate_limited");
});

test("the members route counts a request before it reads anything: 304s and 404s use the reader's budget too", async () => {
  const h = await createHarness(undefined, { limits: { membersReadsPerMinute: 3 } });
  const owner = await h.newKey("owner");
  await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "counted" } });
  await h.call("POST", "/v1/groups/counted/members", { key: owner, body: { identity_commitments: commitments(0, 3) } });
  const page = await h.call("GET", "/v1/groups/counted/members");
  expect(page.status).toBe(200);
  const etag = page.headers.get("etag")!;
  expect((await h.call("GET", "/v1/groups/counted/members", { headers: { "if-none-match": etag } })).status).toBe(304);
  expect((await h.call("GET", "/v1/groups/nope/members")).status).toBe(404);
  const refused = await h.call("GET", "/v1/groups/counted/members", { headers: { "if-none-match": etag } });
  expect(refused.status).toBe(429);
  expect(refused.body.error).toBe("Too many reads of group members");
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
});
