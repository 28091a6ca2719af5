// The store contract on SQLite (a file and :memory:), plus the races that
// need several handles on one file.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/store/sqlite";
import { makeChallenge, makeKey, storeContract, T0 } from "./contract";

const dir = mkdtempSync(join(tmpdir(), "zkagent-store-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const freshFile = () => join(dir, `store-${++files}`, "zkagent.db");

storeContract("sqlite file", async () => openSqlite(freshFile()));
storeContract("sqlite :memory:", async () => openSqlite(":memory:"));

describe("sqlite specifics", () => {
  test("kind is sqlite", async () => {
    const store = openSqlite(":memory:");
    expect(store.kind).toBe("sqlite");
    await store.close();
  });

  test("a committed write is there after reopening the file", async () => {
    const path = freshFile();
    const first = openSqlite(path, { synchronous: "FULL" });
    const key = makeKey();
    await first.createKey(key);
    await first.close();
    const second = openSqlite(path);
    expect(await second.getKey(key.id)).toEqual(key);
    await second.close();
  });

  test("50 concurrent decisions spread over 4 handles on one file: exactly one decided", async () => {
    const path = freshFile();
    const handles = Array.from({ length: 4 }, () => openSqlite(path));
    const key = makeKey();
    await handles[0]!.createKey(key);
    const challenge = makeChallenge(key.id);
    await handles[0]!.createChallenge(challenge, { windowStart: T0, limit: 0 });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        handles[i % 4]!.decideChallenge(challenge.id, { status: i % 2 ? "failed" : "verified", decidedAt: T0 + i, confidence: null, reason: null }),
      ),
    );
    expect(results.filter((r) => r.decided)).toHaveLength(1);
    const usage = await handles[3]!.usage(key.id);
    expect(usage!.verified + usage!.failed).toBe(1);
    for (const handle of handles) await handle.close();
  });

  test("4 worker threads racing on one file: each challenge is decided exactly once", async () => {
    // bun:sqlite is synchronous, so handles in one thread never truly overlap;
    // worker threads do, and contend through SQLite's file locks.
    const path = freshFile();
    const setup = openSqlite(path);
    const key = makeKey();
    await setup.createKey(key);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const challenge = makeChallenge(key.id);
      await setup.createChallenge(challenge, { windowStart: T0, limit: 0 });
      ids.push(challenge.id);
    }
    const workers = Array.from({ length: 4 }, () => new Worker(new URL("./sqlite-race-worker.ts", import.meta.url)));
    const results = await Promise.all(
      workers.map(
        (worker, index) =>
          new Promise<{ worker: number; won: string[] }>((resolve, reject) => {
            worker.onmessage = (event) => resolve(event.data);
            worker.onerror = (event) => reject(event.error ?? new Error(String(event.message)));
            worker.postMessage({ path, ids, worker: index });
          }),
      ),
    );
    for (const worker of workers) worker.terminate();
    const won = results.flatMap((r) => r.won).sort();
    expect(won).toEqual([...ids].sort());
    expect((await setup.usage(key.id))?.verified).toBe(40);
    await setup.close();
  });
});
