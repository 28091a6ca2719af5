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
// The server rows (issue 32, --server; the only rows with --server-only):
// a real `zkagent serve --workers 1` on 127.0.0.1 per store, as a platform
// meets it. Another key's challenge p50/p99 idle, while one key sends two
// concurrent POSTs of 10,000 members (three rounds), and while 4 anonymous
// clients loop on the members route of a 200,000-member group (the
// per-address read limit off: many addresses; --reads-per-minute N sets it);
// the additions rate (the
// 200k group, batches of 10,000 one after another); the server's RSS after
// 600,000 members in 6 groups.
//
// Issue 37: the flood's bodies are built (and serialised) before it starts,
// so the prober measures the server, not the client sharing its event loop;
// p50/p99/max are printed (the max shows the stalls a sparse p99 misses).
// --flood-only stops the server rows after the flood.
//
// Issue 42: both WebAssembly builds (src/wasm-engine.ts) in one run. The
// hashing runs on the process's build, so the bench runs itself once per
// build, each in a new process with ZKAGENT_WASM set (the server it starts
// inherits it), and prints the builds' rows side by side with the ratio.
// --builds wide,portable (the default where the engine runs the wide build)
// or --builds portable for one. --additions-only keeps of the server rows
// only the additions rate (--additions N members into one group, default
// 200,000): the row of the field-engine table.
//
//   bun bench/groups.ts [--sizes 10000,100000,1000000] [--batch 10000] [--stores sqlite,postgres] [--server | --server-only] [--flood-only]
//                       [--additions-only] [--additions 200000] [--builds wide,portable] [--json]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { readFileSync } from "node:fs";
import { systemClock } from "../src/clock";
import { GroupTrees } from "../src/groups/cache";
import { createKey } from "../src/modules/keys/service";
import { openStore } from "../src/store";
import { poseidonBackend } from "../src/groups/poseidon";
import { WASM_BUILD, type WasmBuild } from "../src/wasm-engine";
import { argsOf, benchBuilds, freePort, runOnBuild, waitHealthy } from "./support";
import { type GroupRecord, newGroupRecord, type Store } from "../src/store/interface";
import { openPostgres } from "../src/store/postgres";
import { openSqlite } from "../src/store/sqlite";
import { createTestDatabase, postgresTestUrl } from "../test/support/postgres";

const { values } = parseArgs({
  options: {
    sizes: { type: "string" },
    batch: { type: "string" },
    stores: { type: "string" },
    json: { type: "boolean" },
    server: { type: "boolean" },
    "server-only": { type: "boolean" },
    "reads-per-minute": { type: "string" },
    "flood-only": { type: "boolean" },
    "additions-only": { type: "boolean" },
    additions: { type: "string" },
    builds: { type: "string" },
  },
});
const BUILDS = benchBuilds(values.builds);
const ADDITIONS = Number(values.additions ?? 200_000);
const ADDITIONS_ONLY = values["additions-only"] === true;
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
  return newGroupRecord({ groupId, keyId: "bench", createdAt: Date.now(), mandate: null, challengers: null });
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
    const result = await store.changeGroup(groupId, "bench", { kind: "add", commitments: batch, at: Date.now() }, trees);
    if (result.outcome !== "changed") throw new Error(`add: ${result.outcome}`);
    batches.push(performance.now() - t);
  }
  const addSeconds = (performance.now() - started) / 1000;
  const heapMB = mb(heap() - heapBefore);
  const rssMB = mb(process.memoryUsage().rss - rssBefore);

  let t = performance.now();
  const warm = await store.changeGroup(groupId, "bench", { kind: "remove", commitment: commitment(Math.floor(members / 2)), at: Date.now() }, trees);
  const removeWarmMs = performance.now() - t;
  if (warm.outcome !== "changed") throw new Error(`remove: ${warm.outcome}`);
  trees.forget(groupId);

  // Another process's first change: its cache is empty.
  const cold = new GroupTrees();
  const coldBefore = heap();
  t = performance.now();
  const removed = await store.changeGroup(groupId, "bench", { kind: "remove", commitment: commitment(1), at: Date.now() }, cold);
  const removeColdMs = performance.now() - t;
  if (removed.outcome !== "changed") throw new Error(`cold remove: ${removed.outcome}`);
  const coldHeapMB = mb(heap() - coldBefore);
  cold.forget(groupId);
  return { store: name, members, addSeconds, batchMsMedian: median(batches), heapMB, rssMB, removeWarmMs, removeColdMs, coldHeapMB };
}

const CLI = new URL("../src/cli/index.ts", import.meta.url).pathname;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const pct = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1]!, n: xs.length };
};
type Pct = ReturnType<typeof pct>;

interface ServerRow {
  store: string;
  idle?: Pct;
  flood?: Pct;
  readers?: Pct & { pages: number; megabytes: number };
  additions?: { members: number; seconds: number; perSecond: number };
  rssMiB?: { start: number; after600k: number };
}

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

async function serverRows(kind: string, databaseUrl: string): Promise<ServerRow> {
  const store = await openStore(databaseUrl);
  const a = await createKey(store, systemClock, "flooder", 0);
  const b = await createKey(store, systemClock, "quiet", 0);
  await store.close();
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = Bun.spawn([process.execPath, CLI, "serve", "--workers", "1"], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: "error",
      MAX_PENDING_PER_KEY: "0",
      GROUP_MEMBERS_READS_PER_MINUTE: values["reads-per-minute"] ?? "0",
      GROUP_MAX_PER_KEY: "0",
    },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "inherit",
  });
  const call = (key: string | null, method: string, path: string, body?: unknown) =>
    fetch(url + path, {
      method,
      headers: { ...(key ? { "x-api-key": key } : {}), "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const ok = async (response: Promise<Response>) => {
    const r = await response;
    if (r.status >= 300) throw new Error(`${r.status} ${await r.text()}`);
    return r.json() as Promise<any>;
  };
  /** B's challenges one after another until `done` (at least `min`). */
  const challenges = async (done: () => boolean, min: number) => {
    const times: number[] = [];
    while (times.length < min || !done()) {
      const t = performance.now();
      const r = await call(b.key, "POST", "/v1/verify/challenge", { group_id: "quiet", action: "purchase" });
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`challenge: ${r.status}`);
      times.push(performance.now() - t);
      await Bun.sleep(5);
    }
    return times;
  };
  let next = 0;
  const fresh = (n: number) => Array.from({ length: n }, () => commitment(next++));
  /** `count` members into a new group, batches of 10,000 one after another: members a second. */
  const additions = async (groupId: string, count: number) => {
    await ok(call(a.key, "POST", "/v1/groups", { group_id: groupId }));
    const started = performance.now();
    for (let from = 0; from < count; from += 10_000)
      await ok(call(a.key, "POST", `/v1/groups/${groupId}/members`, { identity_commitments: fresh(Math.min(10_000, count - from)) }));
    const seconds = (performance.now() - started) / 1000;
    return { members: count, seconds, perSecond: count / seconds };
  };
  try {
    await waitHealthy(`${url}/health`, server);
    if (ADDITIONS_ONLY) return { store: kind, additions: await additions("big", ADDITIONS) };
    const rssStart = rssOf(server.pid);
    await ok(call(b.key, "POST", "/v1/groups", { group_id: "quiet" }));
    await ok(call(b.key, "POST", "/v1/groups/quiet/members", { identity_commitments: fresh(3) }));
    await challenges(() => true, 20);
    const idle = await challenges(() => true, 200);

    // The flood: 3 rounds of two concurrent POSTs of 10,000 into one group, their bodies serialised beforehand.
    await ok(call(a.key, "POST", "/v1/groups", { group_id: "flood" }));
    const bodies = Array.from({ length: 6 }, () => JSON.stringify({ identity_commitments: fresh(10_000) }));
    const post = (body: string) =>
      ok(fetch(`${url}/v1/groups/flood/members`, { method: "POST", headers: { "x-api-key": a.key, "content-type": "application/json" }, body }));
    let flooding = true;
    const flood = (async () => {
      try {
        for (let round = 0; round < 3; round++) await Promise.all([0, 1].map((i) => post(bodies[round * 2 + i]!)));
      } finally {
        flooding = false;
      }
    })();
    const duringFlood = await challenges(() => !flooding, 20);
    await flood;
    if (values["flood-only"]) return { store: kind, idle: pct(idle), flood: pct(duringFlood) };

    // The additions rate: a 200,000-member group, batches one after another; then 5 groups of 80,000 (600k in 6 groups).
    const added = await additions("big", 200_000);
    for (let g = 0; g < 5; g++) {
      await ok(call(a.key, "POST", "/v1/groups", { group_id: `g${g}` }));
      for (let i = 0; i < 8; i++) await ok(call(a.key, "POST", `/v1/groups/g${g}/members`, { identity_commitments: fresh(10_000) }));
    }
    Bun.gc(true);
    const after600k = rssOf(server.pid);

    // Four anonymous readers of the 200k group, each paging through it again and again.
    let reading = true;
    let pages = 0;
    let bytes = 0;
    const readers = Array.from({ length: 4 }, async () => {
      while (reading)
        for (let offset = 0; offset < 200_000 && reading; offset += 10_000) {
          const r = await call(null, "GET", `/v1/groups/big/members?offset=${offset}`);
          const size = (await r.arrayBuffer()).byteLength;
          // Refused past the per-address limit (--reads-per-minute): wait as Retry-After says.
          if (r.status === 429) await Bun.sleep(Number(r.headers.get("retry-after") ?? 1) * 1000);
          else {
            bytes += size;
            pages++;
          }
        }
    });
    const t0 = Date.now();
    let duringReads: number[];
    try {
      duringReads = await challenges(() => Date.now() - t0 > 10_000, 50);
    } finally {
      reading = false;
      await Promise.all(readers);
    }
    return {
      store: kind,
      idle: pct(idle),
      flood: pct(duringFlood),
      readers: { ...pct(duringReads), pages, megabytes: bytes / 1e6 },
      additions: added,
      rssMiB: { start: rssStart, after600k },
    };
  } finally {
    if (server.exitCode === null) server.kill("SIGTERM");
    await server.exited;
  }
}

const ms = (p: Pct) => `${p.p50.toFixed(1)}/${p.p99.toFixed(1)}/${p.max.toFixed(1)} ms (${p.n})`;
const rate = (a: NonNullable<ServerRow["additions"]>) =>
  `additions ${a.perSecond.toFixed(0)}/s (${a.members / 1000}k in ${a.seconds.toFixed(1)} s, 1M ≈ ${(1e6 / a.perSecond).toFixed(0)} s)`;
const serverLine = (r: ServerRow, build: string) =>
  `${r.store} server (${build} build): ` +
  [
    r.idle && r.flood && `another key's challenge p50/p99/max idle ${ms(r.idle)}; during 3 × 2 × 10,000 additions ${ms(r.flood)}`,
    r.readers && `during 4 readers of 200k ${ms(r.readers)} (${r.readers.pages} pages, ${r.readers.megabytes.toFixed(0)} MB out in 10 s)`,
    r.additions && rate(r.additions),
    r.rssMiB && `RSS ${r.rssMiB.start.toFixed(0)} → ${r.rssMiB.after600k.toFixed(0)} MiB after 600k members in 6 groups`,
  ]
    .filter(Boolean)
    .join("; ");
const storeLine = (r: Row, build: string) =>
  `${r.store.padEnd(9)} ${String(r.members).padStart(8)} members (${build.padEnd(8)}): add ${r.addSeconds.toFixed(1)} s (batch of ${BATCH}: median ${r.batchMsMedian.toFixed(0)} ms), ` +
  `tree heap ${r.heapMB.toFixed(0)} MB, RSS +${r.rssMB.toFixed(0)} MB; remove one: warm ${r.removeWarmMs.toFixed(1)} ms, cold ${r.removeColdMs.toFixed(0)} ms (rebuild heap ${r.coldHeapMB.toFixed(0)} MB)`;

/** One process's output: the build it ran and the hash backend it used (poseidon-lite only when the module could not load). */
interface RunResult {
  build: WasmBuild;
  backend: ReturnType<typeof poseidonBackend>;
  rows: Row[];
  server: ServerRow[];
}

// Several builds, or another one than this process's: one new process per build, side by side.
if (BUILDS.length > 1 || BUILDS[0] !== WASM_BUILD) {
  const runs: RunResult[] = [];
  for (const build of BUILDS) {
    if (!values.json) console.log(`… the ${build} build, in a new process (ZKAGENT_WASM=${build})`);
    const run = await runOnBuild<RunResult>(import.meta.path, [...argsOf(values, ["builds", "json"]), "--builds", build, "--json"], build);
    if (run.build !== build || run.backend !== "wasm") throw new Error(`the ${build} run loaded the ${run.build} build, hashing with ${run.backend}`);
    runs.push(run);
    if (!values.json) {
      for (const r of run.server) console.log(serverLine(r, build));
      for (const r of run.rows) console.log(storeLine(r, build));
    }
  }
  const [first, second] = runs;
  if (first && second && !values.json) {
    console.log(`${first.build} against ${second.build}, same run:`);
    for (const r of first.server) {
      const o = second.server.find((x) => x.store === r.store);
      if (r.additions && o?.additions)
        console.log(
          `  ${r.store} server additions: ${r.additions.perSecond.toFixed(0)}/s against ${o.additions.perSecond.toFixed(0)}/s (${(r.additions.perSecond / o.additions.perSecond).toFixed(2)}×)`,
        );
    }
    for (const r of first.rows) {
      const o = second.rows.find((x) => x.store === r.store && x.members === r.members);
      if (o)
        console.log(
          `  ${r.store} ${r.members} members: add ${r.addSeconds.toFixed(1)} s against ${o.addSeconds.toFixed(1)} s (${(o.addSeconds / r.addSeconds).toFixed(2)}×, ` +
            `${(r.members / r.addSeconds).toFixed(0)}/s against ${(o.members / o.addSeconds).toFixed(0)}/s)`,
        );
    }
  }
  if (values.json) console.log(JSON.stringify({ runs }));
  process.exit(0);
}

const rows: Row[] = [];
const print = (r: Row) => values.json || console.log(storeLine(r, WASM_BUILD));
const printServer = (r: ServerRow) => values.json || console.log(serverLine(r, WASM_BUILD));

const serverRowsOut: ServerRow[] = [];
const dir = mkdtempSync(join(tmpdir(), "zkagent-bench-groups-"));
const SERVER = values.server === true || values["server-only"] === true || ADDITIONS_ONLY;
const STORE_ROWS = values["server-only"] !== true && !ADDITIONS_ONLY;
if (SERVER && STORES.includes("sqlite")) {
  const row = await serverRows("sqlite", join(dir, "server.db"));
  serverRowsOut.push(row);
  printServer(row);
}
if (SERVER && STORES.includes("postgres")) {
  const db = await createTestDatabase(await postgresTestUrl());
  try {
    const row = await serverRows("postgres", db.url);
    serverRowsOut.push(row);
    printServer(row);
  } finally {
    await db.drop();
  }
}
if (STORE_ROWS && STORES.includes("sqlite"))
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
if (STORE_ROWS && STORES.includes("postgres")) {
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
if (values.json) console.log(JSON.stringify({ build: WASM_BUILD, backend: poseidonBackend(), rows, server: serverRowsOut } satisfies RunResult));
rmSync(dir, { recursive: true, force: true });
process.exit(0);
