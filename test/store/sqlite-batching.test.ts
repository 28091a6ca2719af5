// The SQLite store's group commit (sqlite.ts, createChallenge): creations
// arriving in one event-loop turn share a transaction. These pin down what the
// batching must not change: each caller's own answer, exact rate limits, one
// bad item not sinking the rest, nothing resolved before it is committed, and
// another process's write lock delaying the batch without blocking the loop.
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/store/sqlite";
import { makeChallenge, makeKey, T0 } from "./contract";

const dir = mkdtempSync(join(tmpdir(), "zkagent-batching-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(dir, `b-${++files}.db`);

async function setup(path = freshFile()) {
  const store = openSqlite(path);
  const key = makeKey();
  await store.createKey(key);
  return { store, key, path };
}

describe("sqlite group commit", () => {
  test("concurrent creations each get their own result and their own row", async () => {
    const { store, key } = await setup();
    const challenges = Array.from({ length: 20 }, () => makeChallenge(key.id));
    const results = await Promise.all(challenges.map((c) => store.createChallenge(c, { windowStart: T0, limit: 100 })));
    // One window, counted in order: every caller sees a distinct place in it.
    expect(results.map((r) => r.used).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(results.every((r) => r.created)).toBe(true);
    for (const c of challenges) expect((await store.getChallenge(c.id))?.nonce).toBe(c.nonce);
    expect((await store.usage(key.id))!.challenges).toBe(20);
    await store.close();
  });

  test("a rate limit is exact within one batch: 12 at once under a limit of 5 → 5 created", async () => {
    const { store, key } = await setup();
    const challenges = Array.from({ length: 12 }, () => makeChallenge(key.id));
    const results = await Promise.all(challenges.map((c) => store.createChallenge(c, { windowStart: T0, limit: 5 })));
    expect(results.filter((r) => r.created)).toHaveLength(5);
    expect(
      results
        .filter((r) => !r.created)
        .map((r) => r.used)
        .sort((a, b) => a - b),
    ).toEqual([6, 7, 8, 9, 10, 11, 12]);
    const stored = await Promise.all(challenges.map((c) => store.getChallenge(c.id)));
    // Exactly the callers told "created" have a row.
    results.forEach((r, i) => expect(stored[i] !== null).toBe(r.created));
    expect((await store.usage(key.id))!.challenges).toBe(5);
    await store.close();
  });

  test("an item that throws fails alone; its batch-mates are stored and its window count is undone", async () => {
    const { store, key } = await setup();
    const existing = makeChallenge(key.id);
    await store.createChallenge(existing, { windowStart: T0, limit: 100 });
    const good = Array.from({ length: 9 }, () => makeChallenge(key.id));
    const duplicate = makeChallenge(key.id, { id: existing.id }); // primary key violation
    const batch = [...good.slice(0, 4), duplicate, ...good.slice(4)];
    const settled = await Promise.allSettled(batch.map((c) => store.createChallenge(c, { windowStart: T0, limit: 100 })));
    expect(settled[4]!.status).toBe("rejected");
    expect(settled.filter((s) => s.status === "fulfilled")).toHaveLength(9);
    for (const c of good) expect(await store.getChallenge(c.id)).not.toBeNull();
    expect((await store.usage(key.id))!.challenges).toBe(10);
    // 1 earlier + 9 good: the failed item's count was rolled back with it.
    const next = await store.createChallenge(makeChallenge(key.id), { windowStart: T0, limit: 100 });
    expect(next.used).toBe(11);
    await store.close();
  });

  test("a creation resolves only once committed: another connection already sees it", async () => {
    const { store, key, path } = await setup();
    const other = new Database(path, { readonly: true });
    const challenge = makeChallenge(key.id);
    await store.createChallenge(challenge, { windowStart: T0, limit: 0 });
    expect(other.query("SELECT nonce FROM challenges WHERE id = ?").get(challenge.id)).toEqual({ nonce: challenge.nonce });
    other.close();
    await store.close();
  });

  test("while another process holds the write lock the batch waits without blocking the event loop", async () => {
    const { store, key, path } = await setup();
    const locker = new Database(path);
    locker.exec("BEGIN IMMEDIATE");
    const challenge = makeChallenge(key.id);
    let settled = false;
    const creation = store.createChallenge(challenge, { windowStart: T0, limit: 0 }).then((r) => ((settled = true), r));
    // Timers still fire while the lock is held: the loop is not parked in SQLite's busy handler.
    await Bun.sleep(30);
    expect(settled).toBe(false);
    locker.exec("COMMIT");
    locker.close();
    expect((await creation).created).toBe(true);
    expect(await store.getChallenge(challenge.id)).not.toBeNull();
    await store.close();
  });

  test("close() commits creations already queued", async () => {
    const path = freshFile();
    const { store, key } = await setup(path);
    const challenge = makeChallenge(key.id);
    const creation = store.createChallenge(challenge, { windowStart: T0, limit: 0 });
    await store.close();
    expect((await creation).created).toBe(true);
    const reopened = openSqlite(path);
    expect(await reopened.getChallenge(challenge.id)).not.toBeNull();
    await reopened.close();
  });
});
