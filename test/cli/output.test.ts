// What a --json command prints reaches a pipe whole before the process exits.
// A pipe holds 64 KiB; the rest of a larger write was lost when the process
// exited before the reader took it (issue: `ceremony semaphore --depth D
// --json` and any long list). The reader here starts late on purpose, so the
// writer must wait for it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/store/sqlite";

let dir: string;
let db: string;
const KEYS = 250;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "zkagent-cli-output-"));
  db = join(dir, "zkagent.db");
  const store = openSqlite(db);
  for (let i = 0; i < KEYS; i++) {
    await store.createKey({
      id: `k${String(i).padStart(5, "0")}`,
      name: `key ${i} ${"n".repeat(2000)}`,
      hash: "0".repeat(64),
      rateLimit: 0,
      createdAt: 0,
      revokedAt: null,
    });
  }
  await store.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("keys list --json of more than 64 KiB, read through a pipe by a late reader, is one whole JSON object (three runs)", async () => {
  // Before the fix the cut depended on timing (seen in about half the runs): three runs make a pass by chance unlikely.
  for (let run = 0; run < 3; run++) {
    // A shell pipeline: the reader sleeps before it reads anything.
    const proc = Bun.spawn(["sh", "-c", `"${process.execPath}" src/cli/index.ts keys list --json | (sleep 0.5; cat)`], {
      env: { ...process.env, DATABASE_URL: db, LOG_LEVEL: "silent" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    expect(stdout.length).toBeGreaterThan(256 * 1024);
    const { keys } = JSON.parse(stdout);
    expect(keys).toHaveLength(KEYS);
    expect(keys.at(-1).name).toStartWith(`key ${KEYS - 1} `);
  }
}, 30_000);
