// The store contract on SQLite (a file and :memory:), plus the races that
// need several handles on one file.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { StoreUnavailableError } from "../../src/store/interface";
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

describe("issue 11: another process holding the write lock", () => {
  test("decide waits on timers, not in SQLite's busy handler: the event loop keeps running; then StoreUnavailableError; then it works again", async () => {
    const path = freshFile();
    const store = openSqlite(path, { lockWaitMs: 400 });
    const key = makeKey();
    await store.createKey(key);
    const challenge = makeChallenge(key.id);
    await store.createChallenge(challenge, { windowStart: T0, limit: 0 });

    // A second connection (as a sqlite3 shell or a backup would) takes the write lock.
    const holder = new Database(path);
    holder.exec("BEGIN IMMEDIATE");
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    const started = performance.now();
    const attempt = store.decideChallenge(challenge.id, { status: "verified", decidedAt: T0 + 1, confidence: 0.99, reason: null });
    await expect(attempt).rejects.toBeInstanceOf(StoreUnavailableError);
    const waited = performance.now() - started;
    clearInterval(ticker);
    expect(waited).toBeGreaterThanOrEqual(390);
    expect(waited).toBeLessThan(2_000);
    // ~40 ticks fit in 400 ms; in SQLite's busy handler there would be none.
    expect(ticks).toBeGreaterThan(10);
    expect((await store.getChallenge(challenge.id))?.status).toBe("pending");

    // Every server write path waits the same way.
    await expect(store.reserveIdempotency(key.id, "i", "fp", T0, T0 - 1)).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(
      store.registerAgent({ keyId: key.id, agentId: "a", identityCommitment: "5", signingKey: null, createdAt: T0, revokedAt: null }),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.createChallenge(makeChallenge(key.id), { windowStart: T0, limit: 0 })).rejects.toBeInstanceOf(StoreUnavailableError);

    // Released within the wait: the decision goes through.
    const retry = store.decideChallenge(challenge.id, { status: "verified", decidedAt: T0 + 2, confidence: 0.99, reason: null });
    setTimeout(() => holder.exec("COMMIT"), 100);
    expect((await retry).decided).toBe(true);
    holder.close();
    await store.close();
  });
});

describe("issue 11: audit_log stays append-only except for the retention purge", () => {
  test("UPDATE and DELETE from any other statement are refused, also of old rows; the gate is closed after a purge", async () => {
    const path = freshFile();
    const store = openSqlite(path);
    const key = makeKey();
    await store.createKey(key);
    await store.createChallenge(makeChallenge(key.id, { createdAt: T0 }), { windowStart: T0, limit: 0 });
    await store.createChallenge(makeChallenge(key.id, { createdAt: T0 + 10 }), { windowStart: T0, limit: 0 });
    const raw = new Database(path);
    expect(() => raw.exec("DELETE FROM audit_log")).toThrow(/append-only/);
    expect(() => raw.exec("UPDATE audit_log SET action = 'x'")).toThrow(/append-only/);
    expect(await store.purgeAudit(T0 + 5)).toBe(1);
    expect(() => raw.exec("DELETE FROM audit_log")).toThrow(/append-only/);
    expect((raw.query("SELECT count(*) AS n FROM audit_log").get() as { n: number }).n).toBe(1);
    raw.close();
    await store.close();
  });
});
