// The agent's notes feed sync (src/agent/budget/feed.ts) against a
// stand-in feed: pages followed by next_offset, leaves kept on disk so a
// later process asks only from where it stopped, and a service that rewrites
// a note the agent has seen, shrinks the feed, or names a checkpoint root its
// notes do not give, refused without touching what the agent kept.
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { forgetNotes, syncNotes } from "../../src/agent/budget/feed";
import { NOTES_GENESIS_LEAF } from "../../src/budgets/encoding";
import { LeanTree } from "../../src/groups/lean-tree";

const SERVICE = "https://zk.example";
const GROUP = "grp_feed";
const work = mkdtempSync(join(tmpdir(), "zkagent-budget-feed-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let notes: bigint[];
let pageSize: number;
let asked: number[];
/** What the stand-in serves, changed by a test to lie. */
let served: () => bigint[];
let checkpointRoot: (() => string) | undefined;

let etags: boolean;
let unchanged: number;
const transport = (async (input: string | URL | Request, init?: RequestInit) => {
  const url = new URL(input instanceof Request ? input.url : input.toString());
  const offset = Number(url.searchParams.get("offset"));
  asked.push(offset);
  const all = served();
  // The service's rule: ETag "<size>-<newest checkpoint's sequence>" on every page of one state; If-None-Match with it is 304.
  const etag = `"${all.length}-1"`;
  const ifNoneMatch = new Headers(init?.headers).get("if-none-match");
  if (etags && ifNoneMatch === etag) {
    unchanged++;
    return new Response(null, { status: 304, headers: { etag } });
  }
  const page = all.slice(offset, offset + pageSize);
  const size = all.length;
  const root = checkpointRoot?.() ?? LeanTree.fromLeaves(all).root.toString();
  return Response.json(
    {
      group_id: GROUP,
      size,
      offset,
      notes: page.map(String),
      next_offset: offset + page.length < size ? offset + page.length : null,
      checkpoints: [
        { sequence: 0, size: 1, root: NOTES_GENESIS_LEAF.toString(), at: "2026-11-28T00:00:00Z" },
        { sequence: 1, size, root, at: "2026-11-28T00:00:10Z" },
      ],
    },
    { headers: etags ? { etag } : {} },
  );
}) as typeof fetch;

let dirs = 0;
const options = (dir: string) => ({ fetch: transport, notesCache: dir });

beforeEach(() => {
  forgetNotes();
  notes = [NOTES_GENESIS_LEAF, ...Array.from({ length: 25 }, (_, i) => BigInt(1000 + i))];
  pageSize = 10;
  asked = [];
  served = () => notes;
  checkpointRoot = undefined;
  etags = false;
  unchanged = 0;
});

describe("the notes feed", () => {
  test("every page followed from leaf 1; the tree, the newest checkpoint and each note's index", async () => {
    const feed = await syncNotes(SERVICE, GROUP, options(join(work, `d${dirs++}`)));
    expect(asked).toEqual([1, 11, 21]);
    expect(feed.tree.size).toBe(26);
    expect(feed.newest).toMatchObject({ sequence: 1, size: 26 });
    expect(feed.newest.root).toBe(LeanTree.fromLeaves(notes).root);
    expect(feed.indexOf(1003n)).toBe(4);
    expect(feed.indexOf(NOTES_GENESIS_LEAF)).toBeNull(); // the genesis leaf is nobody's note
    expect(feed.indexOf(7n)).toBeNull();
  });

  test("a later process reads its kept leaves and asks only from where it stopped", async () => {
    const dir = join(work, `d${dirs++}`);
    await syncNotes(SERVICE, GROUP, options(dir));
    forgetNotes();
    notes.push(2000n, 2001n);
    asked = [];
    const feed = await syncNotes(SERVICE, GROUP, options(dir));
    expect(asked).toEqual([26]);
    expect(feed.indexOf(2001n)).toBe(27);
  });

  test("a service that rewrites a note the agent has seen is refused, and the kept leaves stay as they were", async () => {
    const dir = join(work, `d${dirs++}`);
    await syncNotes(SERVICE, GROUP, options(dir));
    forgetNotes();
    const rewritten = [...notes];
    rewritten[3] = 666n;
    served = () => [...rewritten, 3000n];
    await expect(syncNotes(SERVICE, GROUP, options(dir))).rejects.toThrow(/the service rewrote the notes feed; refused/);
    // What it serves honestly again is accepted from what the agent kept.
    forgetNotes();
    served = () => notes;
    expect((await syncNotes(SERVICE, GROUP, options(dir))).tree.size).toBe(26);
  });

  test("fewer notes than the agent has seen, or a checkpoint root its notes do not give: refused, naming it", async () => {
    const dir = join(work, `d${dirs++}`);
    await syncNotes(SERVICE, GROUP, options(dir));
    served = () => notes.slice(0, 20);
    await expect(syncNotes(SERVICE, GROUP, options(dir))).rejects.toThrow(/now serves 20 notes of group grp_feed, this agent has seen 26/);
    forgetNotes();
    served = () => notes;
    checkpointRoot = () => "12345";
    await expect(syncNotes(SERVICE, GROUP, options(join(work, `d${dirs++}`)))).rejects.toThrow(/has root 12345, not the root of the notes this agent read/);
  });

  test("polling an unchanged feed names the state read last (If-None-Match) and takes the 304 for it; a grown feed is read on", async () => {
    etags = true;
    const dir = join(work, `d${dirs++}`);
    const first = await syncNotes(SERVICE, GROUP, options(dir));
    asked = [];
    const again = await syncNotes(SERVICE, GROUP, options(dir));
    expect(unchanged).toBe(1);
    expect(asked).toEqual([26]);
    expect(again.newest).toEqual(first.newest);
    expect(again.tree.root).toBe(first.tree.root);
    notes.push(4000n);
    const grown = await syncNotes(SERVICE, GROUP, options(dir));
    expect(unchanged).toBe(1);
    expect(grown.indexOf(4000n)).toBe(26);
    expect(grown.newest.size).toBe(27);
  });

  test("an http service off this machine is refused before any request", async () => {
    await expect(syncNotes("http://zk.example", GROUP, options(join(work, `d${dirs++}`)))).rejects.toThrow(/must be https/);
    expect(asked).toEqual([]);
  });
});
