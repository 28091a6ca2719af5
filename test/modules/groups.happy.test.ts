// Groups (issue 24): the routes on both stores, the tree against the stock
// @semaphore-protocol/group, all-or-nothing batches, owner-only changes, the
// members page without a key, and two processes' caches kept honest by the
// stored version.
import { beforeAll, describe, expect, test } from "bun:test";
import { Group } from "@semaphore-protocol/group";
import { GroupTrees } from "../../src/groups/cache";
import { FIELD_ORDER_R } from "../../src/identity/field";
import { createHarness, type Harness } from "../support/harness";
import { storesUnderTest } from "../support/stores";

/**
 * A stock Group from the members page: removed leaves ("0") are added as a
 * placeholder and then removed, as a client must do with Group 4.14.2 (its
 * constructor would hash a 0 right leaf as absent; removeMember hashes it).
 */
export function rebuild(members: string[]): Group {
  const group = new Group(members.map((m) => (m === "0" ? 1n : BigInt(m))));
  members.forEach((m, i) => m === "0" && group.removeMember(i));
  return group;
}

const commitments = (from: number, n: number) => Array.from({ length: n }, (_, i) => String(1000n + BigInt(from + i) * 7919n));

for (const { name, open } of storesUnderTest()) {
  describe(`groups on ${name}`, () => {
    let h: Harness;
    let other: Harness;
    let owner: string;
    let stranger: string;

    beforeAll(async () => {
      const store = await open();
      h = await createHarness(store);
      // A second process on the same database: its own tree cache.
      other = await createHarness(store, { groups: new GroupTrees() });
      owner = await h.newKey("owner");
      stranger = await h.newKey("stranger");
    }, 60_000); // the first PostgreSQL store starts the run's cluster

    test("create, add, read: the root is the stock Semaphore group's", async () => {
      const created = await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "fleet" } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ group_id: "fleet", size: 0, active_members: 0, merkle_tree_root: "0", merkle_tree_depth: 0, mandate: null });
      expect(created.body.anonymity_warning).toContain("0 active members");

      const members = commitments(0, 5);
      const added = await h.call("POST", "/v1/groups/fleet/members", { key: owner, body: { identity_commitments: members } });
      expect(added.status).toBe(201);
      const stock = new Group(members);
      expect(added.body).toEqual({
        group_id: "fleet",
        size: 5,
        active_members: 5,
        merkle_tree_root: stock.root.toString(),
        merkle_tree_depth: stock.depth,
        anonymity_warning: null,
      });
      // Any key reads it.
      const read = await h.call("GET", "/v1/groups/fleet", { key: stranger });
      expect(read.status).toBe(200);
      expect(read.body.merkle_tree_root).toBe(stock.root.toString());
    });

    test("a change on another process replays what its cache missed, and both agree with the stock group", async () => {
      const more = commitments(5, 3);
      const onOther = await other.call("POST", "/v1/groups/fleet/members", { key: owner, body: { identity_commitments: more } });
      expect(onOther.status).toBe(201);
      const removed = await h.call("DELETE", `/v1/groups/fleet/members/${commitments(0, 5)[1]}`, { key: owner });
      expect(removed.status).toBe(200);
      // A third process, its cache empty: it rebuilds from every leaf, the removed one (a right child, 0) included.
      const fresh = await createHarness(h.store, { groups: new GroupTrees() });
      const last = await fresh.call("POST", "/v1/groups/fleet/members", { key: owner, body: { identity_commitments: commitments(8, 1) } });
      const stock = new Group([...commitments(0, 5), ...more, ...commitments(8, 1)]);
      stock.removeMember(1);
      expect(last.body).toMatchObject({ size: 9, active_members: 8, merkle_tree_root: stock.root.toString(), merkle_tree_depth: stock.depth });
      const page = await h.call("GET", "/v1/groups/fleet/members");
      expect(page.status).toBe(200);
      expect(page.body.members).toEqual(stock.members.map(String));
      expect(page.body.members[1]).toBe("0");
      expect(rebuild(page.body.members).root.toString()).toBe(page.body.merkle_tree_root);
    });

    test("concurrent batches from two processes: both applied once, in some order, the tree planned again by the loser", async () => {
      await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "race" } });
      const batches = [commitments(100, 4), commitments(200, 4), commitments(300, 4), commitments(400, 4)];
      const replies = await Promise.all(
        batches.map((batch, i) => (i % 2 ? other : h).call("POST", "/v1/groups/race/members", { key: owner, body: { identity_commitments: batch } })),
      );
      expect(replies.map((r) => r.status)).toEqual([201, 201, 201, 201]);
      const page = (await h.call("GET", "/v1/groups/race/members")).body;
      expect(page.members.length).toBe(16);
      expect(new Set(page.members)).toEqual(new Set(batches.flat()));
      expect(rebuild(page.members).root.toString()).toBe(page.merkle_tree_root);
    });

    test("a batch above the 64 KiB of other routes is taken (up to 1 MiB); above 1 MiB it is a 413 naming the limit", async () => {
      await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "large" } });
      const big = Array.from({ length: 1000 }, (_, i) => (FIELD_ORDER_R - 1n - BigInt(i)).toString());
      expect(JSON.stringify({ identity_commitments: big }).length).toBeGreaterThan(64 * 1024);
      const taken = await h.call("POST", "/v1/groups/large/members", { key: owner, body: { identity_commitments: big } });
      expect(taken.status).toBe(201);
      expect(taken.body.merkle_tree_root).toBe(rebuild(big).root.toString());
      const tooBig = await h.call("POST", "/v1/groups/large/members", { key: owner, body: { identity_commitments: ["1".repeat(1024 * 1024)] } });
      expect(tooBig.status).toBe(413);
      expect(tooBig.body.message).toBe("Request bodies are limited to 1048576 bytes on this route.");
    });

    test("members page with offset and limit, no key", async () => {
      const first = await h.call("GET", "/v1/groups/fleet/members?limit=4");
      expect(first.body).toMatchObject({ offset: 0, next_offset: 4 });
      expect(first.body.members).toHaveLength(4);
      const rest = await h.call("GET", "/v1/groups/fleet/members?offset=8&limit=4");
      expect(rest.body).toMatchObject({ offset: 8, next_offset: null });
      expect(rest.body.members).toHaveLength(1);
      const bad = await h.call("GET", "/v1/groups/fleet/members?limit=0");
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe("Invalid field limit: must be a whole number from 1 to 10000");
      expect((await h.call("GET", "/v1/groups/nope/members")).status).toBe(404);
    });

    test("a bad batch names its first bad commitment and applies nothing", async () => {
      const before = (await h.call("GET", "/v1/groups/fleet", { key: owner })).body;
      const cases: [string[], string][] = [
        [["7", "0"], "Invalid field identity_commitments: [1] must not be 0 (a removed leaf)"],
        [["7", FIELD_ORDER_R.toString()], "Invalid field identity_commitments: [1] must be below the BN254 scalar field order r"],
        [["7", "012"], "Invalid field identity_commitments: [1] must be a decimal integer without sign or leading zeros"],
        [["7", commitments(0, 1)[0]!], "Invalid field identity_commitments: [1] is already a member of the group"],
        [["7", "9", "7"], "Invalid field identity_commitments: [2] is repeated in the batch"],
      ];
      for (const [batch, error] of cases) {
        const response = await h.call("POST", "/v1/groups/fleet/members", { key: owner, body: { identity_commitments: batch } });
        expect(response.status).toBe(400);
        expect(response.body.error).toBe(error);
      }
      expect((await h.call("GET", "/v1/groups/fleet", { key: owner })).body).toEqual(before);
      // The removed member's commitment cannot join again (issue 34), on either process, alone or in a batch; nothing is applied.
      const again = await other.call("POST", "/v1/groups/fleet/members", { key: owner, body: { identity_commitments: [commitments(0, 5)[1]!] } });
      expect(again.status).toBe(409);
      expect(again.body.message).toContain("identity_commitments[0] was removed from this group");
      expect(again.body.message).toContain("enrol a new identity");
      const mixed = await h.call("POST", "/v1/groups/fleet/members", { key: owner, body: { identity_commitments: ["77", commitments(0, 5)[1]!] } });
      expect(mixed.status).toBe(409);
      expect(mixed.body.message).toContain("identity_commitments[1]");
      expect((await h.call("GET", "/v1/groups/fleet", { key: owner })).body).toEqual(before);
    });

    test("only the owner changes a group; ids are unique across keys", async () => {
      expect((await h.call("POST", "/v1/groups/fleet/members", { key: stranger, body: { identity_commitments: ["77"] } })).body.error).toBe(
        "Group owned by another key",
      );
      expect((await h.call("DELETE", `/v1/groups/fleet/members/${commitments(0, 1)[0]}`, { key: stranger })).status).toBe(403);
      expect((await h.call("PUT", "/v1/groups/fleet/mandate", { key: stranger, body: { actions: ["purchase"] } })).status).toBe(403);
      const taken = await h.call("POST", "/v1/groups", { key: stranger, body: { group_id: "fleet" } });
      expect(taken.status).toBe(409);
      expect(taken.body.error).toBe("Group already exists");
      expect((await h.call("DELETE", "/v1/groups/fleet/members/424242", { key: owner })).body.error).toBe("Member not found");
      expect((await h.call("DELETE", "/v1/groups/nope/members/1", { key: owner })).status).toBe(404);
    });

    test("the mandate is set and removed by the owner", async () => {
      const mandate = { limits: [{ action: "purchase", currency: "EUR", max_amount: "50.00", max_total: "60.00", period: "day" }] };
      const set = await h.call("PUT", "/v1/groups/fleet/mandate", { key: owner, body: mandate });
      expect(set.status).toBe(200);
      expect(set.body.mandate).toEqual(mandate);
      const bad = await h.call("PUT", "/v1/groups/fleet/mandate", { key: owner, body: { limits: "x" } });
      expect(bad.status).toBe(400);
      const removed = await h.call("DELETE", "/v1/groups/fleet/mandate", { key: owner });
      expect(removed.body.mandate).toBeNull();
    });
  });
}
