// HTTP throughput of `zkagent serve` under wrk, in one run: challenge
// creation, status reads and proof verification, on SQLite and on PostgreSQL,
// against a bare Elysia route as the baseline. Everything binds 127.0.0.1;
// the load generator shares the machine (say so when quoting the figures).
//
//   bun run bench:http [--quick] [--workers N] [--no-postgres] [--json]
//
// --json: stdout carries exactly one JSON object (the figures below, for
// comparing runs); everything else goes to stderr.
//
// Needs wrk (apt-get install -y wrk). PostgreSQL: ZKAGENT_TEST_POSTGRES_URL,
// else a throwaway cluster, as the tests start it (test/support/postgres-cluster.ts).
//
// Verification load: every submission consumes its challenge and a real proof
// takes ≈0.3 s to make, so the challenges of the proof scenario are written
// straight to the store with ONE nonce, and one valid proof of that statement
// answers every one of them: each submission is a full verification (parse,
// field/curve/subgroup checks, MSM, pairings) that ends `verified`, decided by
// its own conditional update. The server cannot tell the copies apart (nothing
// caches a verdict), and a batch of copies costs what a batch of distinct
// proofs costs. A second run sends well-formed proofs for another nonce
// (all `failed`/proof_rejected): the flood of bad proofs the batcher must not
// make worse than one-by-one verification. Then a lone proof on the idle
// server, one request at a time: the latency batching must not change.
import type { Subprocess } from "bun";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createIdentity, prove, type AgentIdentity } from "../src/agent";
import { systemClock } from "../src/clock";
import { newChallengeId } from "../src/modules/challenges/service";
import { createKey } from "../src/modules/keys/service";
import { newNonce, publicSignals } from "../src/identity/encoding";
import { openStore } from "../src/store";
import type { Store } from "../src/store/interface";
import { serviceVerifier } from "../src/verifier/service";
import { createTestDatabase, postgresTestUrl } from "../test/support/postgres";
import { freePort, seedChallenge, waitHealthy } from "./support";

const { values: flags } = parseArgs({
  options: { quick: { type: "boolean" }, workers: { type: "string" }, "no-postgres": { type: "boolean" }, json: { type: "boolean" } },
});
const JSON_OUT = flags.json === true;
/** Human-readable progress: stdout, or stderr when stdout is reserved for --json. */
const say = (...parts: unknown[]) => (JSON_OUT ? console.error : console.log)(...parts);
const QUICK = flags.quick === true;
const WORKERS = flags.workers ? Number(flags.workers) : availableParallelism();
const DURATION_S = QUICK ? 3 : 8;
const WRK_THREADS = 2;
const CONNECTIONS = 64;
const CLI = new URL("../src/cli/index.ts", import.meta.url).pathname;
const BASELINE = new URL("./baseline-server.ts", import.meta.url).pathname;
const LUA = new URL("./wrk/cycle.lua", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "zkagent-bench-"));

interface WrkResult {
  requests: number;
  duration_us: number;
  p50_us: number;
  p99_us: number;
  socket_errors: number;
  wraps: number;
  statuses: Record<string, number>;
}

interface Row {
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  rssMb: number | null;
  note: string;
}

const rows: Row[] = [];

/** One scenario in the --json output (issue 14's shape). */
interface Scenario {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** Non-2xx answers the scenario asks for (a bad proof's 422). */
  non_2xx_expected: number;
  /** Socket errors and answers with any status the scenario did not expect. */
  errors: number;
}
const scenarios: Record<string, Scenario> = {};

/** Files the scenario's statuses into `key` of the JSON output; `expected` are the statuses it asks for. */
function summarise(key: string, result: WrkResult, row: Row, expected: readonly number[]): void {
  let non2xxExpected = 0;
  let unexpected = 0;
  for (const [status, n] of Object.entries(result.statuses)) {
    const code = Number(status);
    if (!expected.includes(code)) unexpected += n;
    else if (code < 200 || code > 299) non2xxExpected += n;
  }
  const round = (x: number) => Math.round(x * 100) / 100;
  scenarios[key] = {
    rps: row.rps,
    p50_ms: round(row.p50),
    p99_ms: round(row.p99),
    non_2xx_expected: non2xxExpected,
    errors: result.socket_errors + unexpected,
  };
}

/** wrk over the lines of `file` ("path\tbody"); `method` for all of them. */
async function wrk(url: string, method: string, file: string, key = ""): Promise<WrkResult> {
  const child = Bun.spawn(["wrk", `-t${WRK_THREADS}`, `-c${CONNECTIONS}`, `-d${DURATION_S}s`, "--latency", "-s", LUA, url], {
    env: { ...process.env, BENCH_METHOD: method, BENCH_FILE: file, BENCH_KEY: key, BENCH_THREADS: String(WRK_THREADS) },
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(child.stdout).text();
  await child.exited;
  const line = out.split("\n").find((l) => l.startsWith("BENCH_JSON "));
  if (!line) throw new Error(`wrk printed no figures:\n${out}`);
  return JSON.parse(line.slice("BENCH_JSON ".length));
}

/** Peak resident memory (VmHWM) of the server's processes: the primary's children, or itself. */
function peakRssMb(pid: number): number {
  let pids = [pid];
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    if (children) pids = children.split(/\s+/).map(Number);
  } catch {}
  let max = 0;
  for (const p of pids) {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, "utf8"));
    if (match) max = Math.max(max, Number(match[1]) / 1024);
  }
  return Math.round(max);
}

function record(scenario: string, result: WrkResult, rssMb: number | null, note = ""): Row {
  const row = { scenario, rps: Math.round(result.requests / (result.duration_us / 1e6)), p50: result.p50_us / 1000, p99: result.p99_us / 1000, rssMb, note };
  const statuses = Object.entries(result.statuses)
    .map(([s, n]) => `${s}×${n}`)
    .join(" ");
  row.note = [note, statuses, result.socket_errors ? `${result.socket_errors} socket errors` : ""].filter(Boolean).join("; ");
  rows.push(row);
  say(
    `  ${scenario}: ${row.rps} req/s, p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms${rssMb === null ? "" : `, peak RSS ${rssMb} MB/worker`} (${row.note})`,
  );
  return row;
}

function spawnCluster(command: string[], env: Record<string, string>): Subprocess {
  return Bun.spawn(command, { env: { ...process.env, ...env }, stdin: "ignore", stdout: "ignore", stderr: "inherit" });
}

async function stop(child: Subprocess): Promise<void> {
  if (child.exitCode === null) child.kill("SIGTERM");
  await child.exited;
}

async function baseline(): Promise<Row> {
  say(`baseline: bare Elysia route, ${WORKERS} process(es) with reusePort`);
  const port = freePort();
  const children = Array.from({ length: WORKERS }, () => spawnCluster([process.execPath, BASELINE], { PORT: String(port), REUSE_PORT: "1" }));
  try {
    await waitHealthy(`http://127.0.0.1:${port}/`, children[0]!);
    const file = join(dir, "baseline.txt");
    writeFileSync(file, "/\t\n");
    const result = await wrk(`http://127.0.0.1:${port}`, "GET", file);
    const row = record("baseline GET / (bare Elysia)", result, Math.max(...children.map((c) => peakRssMb(c.pid))));
    summarise("baseline", result, row, [200]);
    return row;
  } finally {
    await Promise.all(children.map(stop));
  }
}

interface Fixture {
  store: Store;
  key: string;
  keyId: string;
  agent: AgentIdentity;
}

async function fixture(databaseUrl: string): Promise<Fixture> {
  const store = await openStore(databaseUrl);
  // Unlimited rate: the bench measures the service, not the limiter's refusals.
  const { key, record } = await createKey(store, systemClock, "bench", 0);
  const agent = await createIdentity();
  await store.registerAgent({
    keyId: record.id,
    agentId: "bench-agent",
    identityCommitment: agent.identity_commitment,
    signingKey: null,
    createdAt: Date.now(),
    revokedAt: null,
  });
  return { store, key, keyId: record.id, agent };
}

/** Challenges written straight to the store (setup, not measured); all with `nonce` when given. */
async function preCreate(f: Fixture, count: number, action = "purchase", nonce?: string): Promise<{ id: string; nonce: string }[]> {
  const now = Date.now();
  const made = Array.from({ length: count }, () => ({ id: newChallengeId(), nonce: nonce ?? newNonce() }));
  for (let i = 0; i < made.length; i += 500) {
    await Promise.all(
      made.slice(i, i + 500).map(({ id, nonce }) => seedChallenge(f.store, { id, keyId: f.keyId, agentId: "bench-agent", action, nonce }, now)),
    );
  }
  return made;
}

/** One submission at a time on an otherwise idle server: the latency of a lone proof. */
async function loneProofLatency(url: string, key: string, bodies: string[]): Promise<{ p50: number; p99: number; statuses: Record<number, number> }> {
  const statuses: Record<number, number> = {};
  const times: number[] = [];
  for (const body of bodies) {
    const start = performance.now();
    const response = await fetch(`${url}/v1/verify/proof`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body });
    await response.arrayBuffer();
    times.push(performance.now() - start);
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)]!;
  return { p50: at(0.5), p99: at(0.99), statuses };
}

/** The verifier's batch-size histogram of every worker, told apart by process start time; null when not exposed. */
async function batchSizes(url: string): Promise<{ runs: number; proofs: number; buckets: Map<string, number> } | null> {
  const seen = new Map<string, string>();
  for (let i = 0; i < 40 && seen.size < WORKERS; i++) {
    // A fresh connection each time, so SO_REUSEPORT can hand it to another worker.
    const text = await fetch(`${url}/metrics`, { headers: { connection: "close" } }).then((r) => r.text());
    const started = /^process_start_time_seconds (\S+)$/m.exec(text)?.[1];
    if (started && !seen.has(started)) seen.set(started, text);
  }
  const buckets = new Map<string, number>();
  let runs = 0;
  let proofs = 0;
  for (const text of seen.values()) {
    if (!text.includes("# HELP zkagent_verification_batch_size ")) return null;
    // No series yet (nothing verified): zero.
    runs += Number(/^zkagent_verification_batch_size_count (\S+)$/m.exec(text)?.[1] ?? 0);
    proofs += Number(/^zkagent_verification_batch_size_sum (\S+)$/m.exec(text)?.[1] ?? 0);
    for (const m of text.matchAll(/^zkagent_verification_batch_size_bucket\{le="([^"]+)"\} (\S+)$/gm))
      buckets.set(m[1]!, (buckets.get(m[1]!) ?? 0) + Number(m[2]));
  }
  return seen.size === 0 ? null : { runs, proofs, buckets };
}

function describeBatches(before: Awaited<ReturnType<typeof batchSizes>>, after: Awaited<ReturnType<typeof batchSizes>>): string {
  if (!before || !after) return "batch sizes: not exposed by this server";
  const runs = after.runs - before.runs;
  const proofs = after.proofs - before.proofs;
  if (runs === 0) return "batch sizes: no verifier runs";
  // Cumulative buckets → runs per size class.
  const classes: string[] = [];
  let below = 0;
  for (const [le, n] of after.buckets) {
    const inClass = n - (before.buckets.get(le) ?? 0) - below;
    below += inClass;
    if (inClass > 0) classes.push(`≤${le}: ${inClass}`);
  }
  return `batch sizes: ${proofs} proofs in ${runs} verifier runs, mean ${(proofs / runs).toFixed(1)} (runs by size ${classes.join(", ")})`;
}

async function service(kind: "sqlite" | "postgres", databaseUrl: string, singleVerifyMs: number) {
  say(`${kind}: zkagent serve --workers ${WORKERS}`);
  const f = await fixture(databaseUrl);
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  // MAX_PENDING_PER_KEY=0: the bench key holds far more pending challenges than the abuse cap allows.
  const server = spawnCluster([process.execPath, CLI, "serve", "--workers", String(WORKERS)], {
    PORT: String(port),
    HOST: "127.0.0.1",
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: "warn",
    MAX_PENDING_PER_KEY: "0",
  });
  try {
    await waitHealthy(`${url}/health`, server);

    const createFile = join(dir, `${kind}-create.txt`);
    writeFileSync(
      createFile,
      `/v1/verify/challenge\t${JSON.stringify({ agent_id: "bench-agent", action: "purchase", context: { amount: 20, currency: "EUR", merchant: "shop-a" } })}\n`,
    );
    const created = await wrk(url, "POST", createFile, f.key);
    summarise(`${kind}_challenge`, created, record(`${kind}: POST /v1/verify/challenge`, created, peakRssMb(server.pid)), [200]);

    const reads = await preCreate(f, 1000);
    const statusFile = join(dir, `${kind}-status.txt`);
    writeFileSync(statusFile, reads.map((c) => `/v1/verify/status/${c.id}\t\n`).join(""));
    const status = await wrk(url, "GET", statusFile, f.key);
    summarise(`${kind}_status`, status, record(`${kind}: GET /v1/verify/status/:id`, status, peakRssMb(server.pid)), [200]);

    // Enough one-time challenges that wrk never wraps: twice what 3× the
    // single-verification rate would use (batching beats that rate).
    const ideal = WORKERS * (1000 / singleVerifyMs);
    const count = Math.ceil(ideal * 3 * DURATION_S * 2) + 500;
    const nonce = newNonce();
    const proof = await prove({ secret: f.agent.secret, nonce, action: "purchase" });
    const targets = await preCreate(f, count, "purchase", nonce);
    const proofFile = join(dir, `${kind}-proof.txt`);
    writeFileSync(proofFile, targets.map((c) => `/v1/verify/proof\t${JSON.stringify({ challenge_id: c.id, proof })}\n`).join(""));
    const before = (await f.store.usage(f.keyId))!;
    const batchesBefore = await batchSizes(url);
    const verified = await wrk(url, "POST", proofFile, f.key);
    const batchesAfter = await batchSizes(url);
    const after = (await f.store.usage(f.keyId))!;
    const row = record(`${kind}: POST /v1/verify/proof (valid proofs)`, verified, peakRssMb(server.pid));
    summarise(`${kind}_proof`, verified, row, [200]);
    row.note += `; ${after.verified - before.verified} verified, ${after.failed - before.failed} failed in the store; ${(row.rps / ideal).toFixed(2)} × (${WORKERS} × single-verify rate = ${ideal.toFixed(0)}/s); ${describeBatches(batchesBefore, batchesAfter)}${verified.wraps ? `; WRAPPED ${verified.wraps}×` : ""}`;
    say(`    ${row.note}`);

    // A flood of well-formed proofs that all fail the pairing check.
    const foreign = await prove({ secret: f.agent.secret, nonce: newNonce(), action: "purchase" });
    const victims = await preCreate(f, count);
    const floodFile = join(dir, `${kind}-flood.txt`);
    writeFileSync(floodFile, victims.map((c) => `/v1/verify/proof\t${JSON.stringify({ challenge_id: c.id, proof: foreign })}\n`).join(""));
    const floodBefore = await batchSizes(url);
    const flood = await wrk(url, "POST", floodFile, f.key);
    const floodRow = record(`${kind}: POST /v1/verify/proof (invalid proofs)`, flood, peakRssMb(server.pid));
    floodRow.note += `; ${(floodRow.rps / ideal).toFixed(2)} × single-verify rate; ${describeBatches(floodBefore, await batchSizes(url))}${flood.wraps ? `; WRAPPED ${flood.wraps}×` : ""}`;
    say(`    ${floodRow.note}`);

    // A lone proof at a time on the idle server (the flood has drained by now).
    const n = QUICK ? 30 : 100;
    const lone = await preCreate(f, n, "purchase", nonce);
    const idle = await loneProofLatency(
      url,
      f.key,
      lone.map((c) => JSON.stringify({ challenge_id: c.id, proof })),
    );
    const line = `lone proof on the idle server, ${n} one after another: p50 ${idle.p50.toFixed(2)} ms, p99 ${idle.p99.toFixed(2)} ms (${JSON.stringify(idle.statuses)})`;
    say(`    ${line}`);
    rows.push({
      scenario: `${kind}: lone proof, idle server (${n} sequential)`,
      rps: Math.round(1000 / idle.p50),
      p50: idle.p50,
      p99: idle.p99,
      rssMb: null,
      note: line,
    });
  } finally {
    await stop(server);
    await f.store.close();
  }
}

async function main(): Promise<number> {
  if (Bun.which("wrk") === null) {
    console.error(
      "bench:http needs wrk (the HTTP load generator, https://github.com/wg/wrk), and it is not on PATH.\n" +
        "Install it, e.g. on Debian/Ubuntu: apt-get install -y wrk — then run this again.",
    );
    return 2;
  }
  say(
    `machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}; wrk -t${WRK_THREADS} -c${CONNECTIONS} -d${DURATION_S}s on the same machine; ${WORKERS} server workers`,
  );

  // The single-verification rate of the verifier the service uses, in this process.
  const verifier = await serviceVerifier();
  const agent = await createIdentity();
  const sample = { nonce: newNonce(), action: "purchase" };
  const signals = publicSignals({ identityCommitment: BigInt(agent.identity_commitment), ...sample });
  const proof = await prove({ secret: agent.secret, ...sample });
  for (let i = 0; i < 5; i++) await verifier.verify(proof, signals);
  const reps = QUICK ? 20 : 60;
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) await verifier.verify(proof, signals);
  const singleVerifyMs = (performance.now() - t0) / reps;
  say(`single verification (in-process, one core): ${singleVerifyMs.toFixed(2)} ms`);

  const base = await baseline();
  const sqliteUrl = join(dir, "bench.db");
  await service("sqlite", sqliteUrl, singleVerifyMs);
  if (!flags["no-postgres"]) {
    const database = await createTestDatabase(await postgresTestUrl());
    try {
      await service("postgres", database.url, singleVerifyMs);
    } finally {
      await database.drop();
    }
  }

  say("\n| scenario | req/s | × baseline | p50 ms | p99 ms | peak RSS/worker MB |");
  say("|---|---:|---:|---:|---:|---:|");
  for (const row of rows) {
    if (row.scenario.includes("lone proof")) continue;
    say(`| ${row.scenario} | ${row.rps} | ${(row.rps / base.rps).toFixed(3)} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.rssMb ?? ""} |`);
  }
  say("");
  for (const row of rows) if (row.note) say(`- ${row.scenario}: ${row.note}`);
  const ratio = (a?: Scenario, b?: Scenario, scale = 1) => (a && b ? (a.rps / (b.rps * scale)).toFixed(2) : "n/a");
  const idealRps = { rps: (WORKERS * 1000) / singleVerifyMs } as Scenario;
  say(
    `\nratios: sqlite proof / (${WORKERS} × single-verify) ${ratio(scenarios.sqlite_proof, idealRps)}; ` +
      `postgres/sqlite challenge ${ratio(scenarios.postgres_challenge, scenarios.sqlite_challenge)}; ` +
      `postgres/sqlite proof ${ratio(scenarios.postgres_proof, scenarios.sqlite_proof)}; ` +
      `sqlite challenge / baseline ${ratio(scenarios.sqlite_challenge, scenarios.baseline)}`,
  );
  if (JSON_OUT) console.log(JSON.stringify({ single_verify_per_s: Math.round((1000 / singleVerifyMs) * 10) / 10, scenarios }));
  return 0;
}

let code = 1;
try {
  code = await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(code);
