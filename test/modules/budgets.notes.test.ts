// The notes feed and checkpoints of budgeted groups (issue 40, docs/api.md
// "Budget spends"): a group has its genesis checkpoint from creation; a
// node's checkpointer records the notes tree's root each time the notes
// grew, the root recomputed here with @zk-kit/lean-imt (independent of the
// project's tree); two nodes racing for one sequence agree on one row; the
// keyless feed pages the notes and lists the newest checkpoints. Both stores.
import { beforeAll, describe, expect, test } from "bun:test";
import { NOTES_GENESIS_LEAF } from "../../src/budgets/encoding";
import { NotesCheckpointer } from "../../src/budgets/checkpoints";
import { ManualClock } from "../../src/clock";
import { createHarness, type Harness } from "../support/harness";
import { semaphoreTree } from "../support/lean-imt";
import { storesUnderTest } from "../support/stores";

const NOW = Date.UTC(2026, 10, 28, 9);

for (const { name, open } of storesUnderTest()) {
  describe(`notes feed and checkpoints on ${name}`, () => {
    let h: Harness;
    let owner: string;
    const notes = Array.from({ length: 1_203 }, (_, i) => BigInt(1_000_000 + i * 7));

    beforeAll(async () => {
      h = await createHarness(await open(), { clock: new ManualClock(NOW), limits: { budgetCheckpointWindow: 3 } });
      owner = await h.newKey("owner");
      expect((await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "wallet", budget: true } })).status).toBe(201);
      expect((await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "plain" } })).status).toBe(201);
    }, 60_000);

    test("a budgeted group's first checkpoint exists from creation: sequence 0, size 1, the genesis leaf's root", async () => {
      const feed = await h.call("GET", "/v1/groups/wallet/notes");
      expect(feed.status).toBe(200);
      expect(feed.body).toEqual({
        group_id: "wallet",
        size: 1,
        offset: 1,
        notes: [],
        next_offset: null,
        checkpoints: [{ sequence: 0, size: 1, root: semaphoreTree([NOTES_GENESIS_LEAF]).root.toString(), at: new Date(NOW).toISOString() }],
      });
    });

    test("checkpoints follow the notes; two nodes racing for a sequence keep one; the feed pages 1,000 notes and lists the newest W", async () => {
      const nodeA = new NotesCheckpointer(h.store, () => NOW + 10_000);
      const nodeB = new NotesCheckpointer(h.store, () => NOW + 10_000);
      expect(await nodeA.tick()).toBe(0); // nothing grew
      for (const [i, cm] of notes.slice(0, 3).entries()) {
        const spent = await h.store.recordBudgetSpend("wallet", `nf${i}`, cm.toString(), NOW);
        expect(spent).toEqual({ recorded: true, index: i + 1 });
      }
      const [a, b] = await Promise.all([nodeA.tick(), nodeB.tick()]);
      expect(a + b).toBe(1);
      let expected = semaphoreTree([NOTES_GENESIS_LEAF, ...notes.slice(0, 3)]);
      expect(await h.store.checkpoints("wallet", 10)).toEqual([
        { sequence: 0, size: 1, root: NOTES_GENESIS_LEAF.toString(), at: NOW },
        { sequence: 1, size: 4, root: expected.root.toString(), at: NOW + 10_000 },
      ]);
      // A replayed nullifier appends nothing.
      expect(await h.store.recordBudgetSpend("wallet", "nf0", "1", NOW)).toEqual({ recorded: false, reason: "already_spent" });
      for (const [i, cm] of notes.slice(3).entries()) await h.store.recordBudgetSpend("wallet", `nf${i + 3}`, cm.toString(), NOW);
      // B's tree was never built: it reads all notes; A grows its own by the new ones. Both agree on the root.
      expect(await nodeB.tick()).toBe(1);
      expect(await nodeA.tick()).toBe(0);
      expected = semaphoreTree([NOTES_GENESIS_LEAF, ...notes]);
      expect((await nodeA.treeAt("wallet", 1_204)).root).toBe(expected.root);
      for (let i = 0; i < 3; i++) {
        await h.store.recordBudgetSpend("wallet", `more${i}`, String(5_000_000 + i), NOW);
        expect(await nodeA.tick()).toBe(1);
      }
      const first = await h.call("GET", "/v1/groups/wallet/notes");
      expect(first.body.size).toBe(1_207);
      expect(first.body.notes).toHaveLength(1_000);
      expect(first.body.notes[0]).toBe(notes[0]!.toString());
      expect(first.body.next_offset).toBe(1_001);
      // The window (3 here): the newest three, oldest first.
      expect(first.body.checkpoints.map((c: { sequence: number }) => c.sequence)).toEqual([3, 4, 5]);
      const second = await h.call("GET", "/v1/groups/wallet/notes?offset=1001");
      expect(second.body.notes).toEqual([...notes.slice(1_000), 5_000_000n, 5_000_001n, 5_000_002n].map(String));
      expect(second.body.next_offset).toBeNull();
      expect((await h.call("GET", "/v1/groups/wallet/notes?offset=5000")).body.notes).toEqual([]);
      // One validator per (size, newest checkpoint), whatever the page: an unchanged feed is 304 without a body; a new note changes it.
      const etag = first.headers.get("etag")!;
      expect(etag).toBe('"1207-5"');
      expect(second.headers.get("etag")).toBe(etag);
      const unchanged = await h.call("GET", "/v1/groups/wallet/notes?offset=1001", { headers: { "if-none-match": etag } });
      expect(unchanged.status).toBe(304);
      expect(unchanged.body).toBe("");
      await h.store.recordBudgetSpend("wallet", "one-more", "7000000", NOW);
      const changed = await h.call("GET", "/v1/groups/wallet/notes?offset=1207", { headers: { "if-none-match": etag } });
      expect(changed.status).toBe(200);
      expect(changed.body.notes).toEqual(["7000000"]);
      expect(changed.headers.get("etag")).toBe('"1208-5"');
    });

    test("purging keeps each group's newest W checkpoints and any younger than the cutoff; sequences go on after it", async () => {
      // wallet holds sequences 0…5 (the test above), at NOW and NOW + 10 s.
      expect(await h.store.purgeCheckpoints(NOW + 1, 3)).toBe(1); // only sequence 0 is both older than the cutoff and out of the newest 3
      expect((await h.store.checkpoints("wallet", 100)).map((c) => c.sequence)).toEqual([1, 2, 3, 4, 5]);
      expect(await h.store.purgeCheckpoints(NOW + 20_000, 3)).toBe(2);
      expect((await h.store.checkpoints("wallet", 100)).map((c) => c.sequence)).toEqual([3, 4, 5]);
      expect(await h.store.purgeCheckpoints(NOW + 20_000, 0)).toBe(2); // the newest always stays
      await h.store.recordBudgetSpend("wallet", "after-purge", "6000000", NOW);
      expect(await new NotesCheckpointer(h.store, () => NOW + 30_000).tick()).toBe(1);
      expect((await h.store.checkpoints("wallet", 100)).map((c) => c.sequence)).toEqual([5, 6]);
    });

    test("refusals: unknown group 404, plain group 409, offset 0 or not a number 400", async () => {
      expect((await h.call("GET", "/v1/groups/nope/notes")).body.error).toBe("Group not found");
      const plain = await h.call("GET", "/v1/groups/plain/notes");
      expect(plain.status).toBe(409);
      expect(plain.body.error).toBe("Group not budgeted");
      for (const offset of ["0", "-1", "x", "1.5"]) {
        const res = await h.call("GET", `/v1/groups/wallet/notes?offset=${offset}`);
        expect(res.status).toBe(400);
        expect(res.body.error).toStartWith("Invalid field offset");
      }
    });
  });
}
