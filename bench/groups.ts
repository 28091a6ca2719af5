// bench:groups — what a group costs at scale (issue 24): the time and memory
// to add N members in batches of 10,000 (the API's maximum per call) and to
// remove one, on SQLite and PostgreSQL, through the store as the routes call
// it (Store.changeGroup with this process's tree cache).
//
// Three figures per size: adding (the writing process keeps its tree warm
// between batches, as a node that takes a group's changes does), removing one
// member warm, and removing one member cold (a process whose cache is empty
// replays every leaf once: what a node pays for its first change of a group
// another node built). Memory: the JS heap after a full GC, with the group's
// tree held, minus the heap before; and the process RSS growth.
//
//   bun bench/groups.ts [--sizes 10000,100000,1000000] [--batch 10000] [--stores sqlite,postgres] [--json]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { GroupTrees } from "../src/groups/tree";
import type { GroupRecord, Store } from "../src/store/interface";
import { openPostgres } from "../src/store/postgres";
import { openSqlite } from "../src/store/sqlite";
import { createTestDatabase, postgresTestUrl } from "../test/support/postgres";

const { values } = parseArgs({
  options: { sizes: { type: "string" }, batch: { type: "string" }, stores: { type: "string" }, json: { type: "boolean" } },
});
const STORES = (values.stores ?? "sqlite,postgres").split(",");
const SIZES = (values.sizes ?? "10000,100000,1000000").split(",").map(Number);
const BATCH = Number(values.batch ?? 10_000);

interface Row {
  store: string;
  members: number;
  addSeconds: number;
  batchMsMedian: number;
  heapMB: number;
  rssMB: number;
  removeWarmMs: number;
  removeColdMs: number;
  coldHeapMB: number;
}

const mb = (bytes: number) => bytes / 1024 / 1024;
function heap(): number {
  Bun.gc(true);
  return process.memoryUsage().heapUsed;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Distinct commitments below r: an LCG over 2^250 keeps them apart and looks nothing like a counter. */
function commitment(i: number): string {
  return ((BigInt(i + 1) * 0x2545f4914f6cdd1dn * 0x9e3779b97f4a7c15n) % (1n << 250n)).toString();
}

function group(groupId: string): GroupRecord {
  return { groupId, keyId: "bench", createdAt: Date.now(), version: 0, size: 0, activeMembers: 0, depth: 0, root: "0", removedVersion: 0, mandate: null };
}

async function measure(name: string, store: Store, members: number): Promise<Row> {
  const groupId = `bench-${members}`;
  await store.createGroup(group(groupId));
  const trees = new GroupTrees();
  const heapBefore = heap();
  const rssBefore = process.memoryUsage().rss;
  const batches: number[] = [];
  const started = performance.now();
  for (let from = 0; from < members; from += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, members - from) }, (_, i) => commitment(from + i));
    const t = performance.now();
    const result = await store.changeGroup(groupId, "bench", { kind: "add", commitments: batch }, trees);
    if (result.outcome !== "changed") throw new Error(`add: ${result.outcome}`);
    batches.push(performance.now() - t);
  }
  const addSeconds = (performance.now() - started) / 1000;
  const heapMB = mb(heap() - heapBefore);
  const rssMB = mb(process.memoryUsage().rss - rssBefore);

  let t = performance.now();
  const warm = await store.changeGroup(groupId, "bench", { kind: "remove", commitment: commitment(Math.floor(members / 2)) }, trees);
  const removeWarmMs = performance.now() - t;
  if (warm.outcome !== "changed") throw new Error(`remove: ${warm.outcome}`);
  trees.forget(groupId);

  // Another process's first change: its cache is empty.
  const cold = new GroupTrees();
  const coldBefore = heap();
  t = performance.now();
  const removed = await store.changeGroup(groupId, "bench", { kind: "remove", commitment: commitment(1) }, cold);
  const removeColdMs = performance.now() - t;
  if (removed.outcome !== "changed") throw new Error(`cold remove: ${removed.outcome}`);
  const coldHeapMB = mb(heap() - coldBefore);
  cold.forget(groupId);
  return { store: name, members, addSeconds, batchMsMedian: median(batches), heapMB, rssMB, removeWarmMs, removeColdMs, coldHeapMB };
}

const rows: Row[] = [];
const print = (r: Row) =>
  values.json ||
  console.log(
    `${r.store.padEnd(9)} ${String(r.members).padStart(8)} members: add ${r.addSeconds.toFixed(1)} s (batch of ${BATCH}: median ${r.batchMsMedian.toFixed(0)} ms), ` +
      `tree heap ${r.heapMB.toFixed(0)} MB, RSS +${r.rssMB.toFixed(0)} MB; remove one: warm ${r.removeWarmMs.toFixed(1)} ms, cold ${r.removeColdMs.toFixed(0)} ms (rebuild heap ${r.coldHeapMB.toFixed(0)} MB)`,
  );

const dir = mkdtempSync(join(tmpdir(), "zkagent-bench-groups-"));
if (STORES.includes("sqlite"))
  try {
    const sqlite = openSqlite(join(dir, "bench.db"));
    for (const size of SIZES) {
      const row = await measure("sqlite", sqlite, size);
      rows.push(row);
      print(row);
    }
    await sqlite.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
if (STORES.includes("postgres")) {
  const db = await createTestDatabase(await postgresTestUrl());
  try {
    const pg = await openPostgres(db.url);
    for (const size of SIZES) {
      const row = await measure("postgres", pg, size);
      rows.push(row);
      print(row);
    }
    await pg.close();
  } finally {
    await db.drop();
  }
}
if (values.json) console.log(JSON.stringify(rows));
process.exit(0);
