// HTTP throughput of `zkagent serve` under wrk, in one run: challenge
// creation, status reads and proof verification, on SQLite and on PostgreSQL,
// against a bare Elysia route as the baseline. Everything binds 127.0.0.1;
// the load generator shares the machine (say so when quoting the figures).
//
//   bun run bench:http [--quick] [--workers N] [--no-postgres]
//
// Needs wrk (apt-get install -y wrk). PostgreSQL: ZKAGENT_TEST_POSTGRES_URL,
// else a throwaway cluster, as the tests start it (test/support/postgres-cluster.ts).
//
// Verification load: every submission consumes its challenge and a real proof
// takes ≈0.3 s to make, so each pre-created challenge gets a well-formed proof
// made by the registered agent for ANOTHER nonce. The server runs the full
// verification (parse, field/curve/subgroup checks, MSM, pairings) and decides
// `failed`/proof_rejected — the same CPU work as a valid proof, which fails only
// at the final pairing comparison. A smaller batch of genuinely valid proofs is
// then timed against the same number of foreign ones to show the paths cost the same.
import type { Subprocess } from "bun";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createIdentity, prove, type AgentIdentity } from "../src/agent";
import { systemClock } from "../src/clock";
import { CHALLENGE_LIFETIME_MS } from "../src/modules/challenges/lifecycle";
import { newChallengeId } from "../src/modules/challenges/service";
import { createKey } from "../src/modules/keys/service";
import { newNonce, publicSignals } from "../src/identity/encoding";
import { openStore } from "../src/store";
import type { Store } from "../src/store/interface";
import { serviceVerifier } from "../src/verifier/service";
import { createTestDatabase, postgresTestUrl } from "../test/support/postgres";

const { values: flags } = parseArgs({
  options: { quick: { type: "boolean" }, workers: { type: "string" }, "no-postgres": { type: "boolean" } },
});
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

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

async function waitHealthy(url: string, child: Subprocess): Promise<void> {
  const deadline = Date.now() + 30_000;
  let ok = 0;
  while (ok < 5) {
    if (child.exitCode !== null) throw new Error(`server for ${url} exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`${url} not healthy in time`);
    const healthy = await fetch(url).then((r) => r.ok, () => false);
    ok = healthy ? ok + 1 : 0;
    if (!healthy) await Bun.sleep(50);
  }
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
  const statuses = Object.entries(result.statuses).map(([s, n]) => `${s}×${n}`).join(" ");
  row.note = [note, statuses, result.socket_errors ? `${result.socket_errors} socket errors` : ""].filter(Boolean).join("; ");
  rows.push(row);
  console.log(`  ${scenario}: ${row.rps} req/s, p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms${rssMb === null ? "" : `, peak RSS ${rssMb} MB/worker`} (${row.note})`);
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
  console.log(`baseline: bare Elysia route, ${WORKERS} process(es) with reusePort`);
  const port = freePort();
  const children = Array.from({ length: WORKERS }, () => spawnCluster([process.execPath, BASELINE], { PORT: String(port), REUSE_PORT: "1" }));
  try {
    await waitHealthy(`http://127.0.0.1:${port}/`, children[0]!);
    const file = join(dir, "baseline.txt");
    writeFileSync(file, "/\t\n");
    const result = await wrk(`http://127.0.0.1:${port}`, "GET", file);
    return record("baseline GET / (bare Elysia)", result, Math.max(...children.map((c) => peakRssMb(c.pid))));
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
  await store.registerAgent({ keyId: record.id, agentId: "bench-agent", identityCommitment: agent.identity_commitment, signingKey: null, createdAt: Date.now(), revokedAt: null });
  return { store, key, keyId: record.id, agent };
}

/** Challenges written straight to the store (setup, not measured). */
async function preCreate(f: Fixture, count: number, action = "purchase"): Promise<{ id: string; nonce: string }[]> {
  const now = Date.now();
  const made = Array.from({ length: count }, () => ({ id: newChallengeId(), nonce: newNonce() }));
  for (let i = 0; i < made.length; i += 500) {
    await Promise.all(
      made.slice(i, i + 500).map(({ id, nonce }) =>
        f.store.createChallenge(
          { id, keyId: f.keyId, agentId: "bench-agent", action, context: null, nonce, createdAt: now, expiresAt: now + CHALLENGE_LIFETIME_MS, status: "pending", decidedAt: null, confidence: null, reason: null },
          { windowStart: now - (now % 60_000), limit: 0 },
        ),
      ),
    );
  }
  return made;
}

async function timeSubmissions(url: string, key: string, bodies: string[], concurrency: number): Promise<{ ms: number; statuses: Record<number, number> }> {
  const statuses: Record<number, number> = {};
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!;
        const response = await fetch(`${url}/v1/verify/proof`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body });
        await response.arrayBuffer();
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      }
    }),
  );
  return { ms: performance.now() - start, statuses };
}

async function service(kind: "sqlite" | "postgres", databaseUrl: string, singleVerifyMs: number) {
  console.log(`${kind}: zkagent serve --workers ${WORKERS}`);
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
    writeFileSync(createFile, `/v1/verify/challenge\t${JSON.stringify({ agent_id: "bench-agent", action: "purchase", context: { amount: 20, currency: "EUR", merchant: "shop-a" } })}\n`);
    record(`${kind}: POST /v1/verify/challenge`, await wrk(url, "POST", createFile, f.key), peakRssMb(server.pid));

    const reads = await preCreate(f, 1000);
    const statusFile = join(dir, `${kind}-status.txt`);
    writeFileSync(statusFile, reads.map((c) => `/v1/verify/status/${c.id}\t\n`).join(""));
    record(`${kind}: GET /v1/verify/status/:id`, await wrk(url, "GET", statusFile, f.key), peakRssMb(server.pid));

    // Enough one-time challenges that wrk never wraps: expected rate × duration, doubled.
    const expected = (WORKERS * 1000) / singleVerifyMs;
    const count = Math.ceil(expected * DURATION_S * 2) + 500;
    // Well-formed, by the registered agent, for a nonce no challenge has.
    const proof = await prove({ secret: f.agent.secret, nonce: newNonce(), action: "purchase" });
    const targets = await preCreate(f, count);
    const proofFile = join(dir, `${kind}-proof.txt`);
    writeFileSync(proofFile, targets.map((c) => `/v1/verify/proof\t${JSON.stringify({ challenge_id: c.id, proof })}\n`).join(""));
    const before = (await f.store.usage(f.keyId))!;
    const verified = await wrk(url, "POST", proofFile, f.key);
    const after = (await f.store.usage(f.keyId))!;
    const decided = after.failed - before.failed + after.verified - before.verified;
    const row = record(`${kind}: POST /v1/verify/proof (full verification)`, verified, peakRssMb(server.pid));
    const ideal = WORKERS * (1000 / singleVerifyMs);
    row.note += `; ${decided} decided in the store; ${(row.rps / ideal * 100).toFixed(0)} % of ${WORKERS} × single-verify rate (${ideal.toFixed(0)}/s)${verified.wraps ? `; WRAPPED ${verified.wraps}×` : ""}`;
    console.log(`    ${row.note}`);

    // The verified path: genuinely valid proofs against the same number of foreign ones.
    const n = QUICK ? 4 : 12;
    const valid = await preCreate(f, n, "valid");
    const validBodies = await Promise.all(valid.map(async (c) => JSON.stringify({ challenge_id: c.id, proof: await prove({ secret: f.agent.secret, nonce: c.nonce, action: "valid" }) })));
    const foreign = (await preCreate(f, n)).map((c) => JSON.stringify({ challenge_id: c.id, proof }));
    const v = await timeSubmissions(url, f.key, validBodies, WORKERS);
    const x = await timeSubmissions(url, f.key, foreign, WORKERS);
    const line = `valid proofs: ${n} in ${v.ms.toFixed(0)} ms (${JSON.stringify(v.statuses)}); foreign proofs: ${n} in ${x.ms.toFixed(0)} ms (${JSON.stringify(x.statuses)})`;
    console.log(`    ${line}`);
    rows.push({ scenario: `${kind}: valid vs foreign proofs, ${n} each, concurrency ${WORKERS}`, rps: Math.round((n * 1000) / v.ms), p50: v.ms / n, p99: x.ms / n, rssMb: null, note: line });
  } finally {
    await stop(server);
    await f.store.close();
  }
}

async function main() {
  if (Bun.which("wrk") === null) throw new Error("wrk not found: apt-get install -y wrk");
  console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}; wrk -t${WRK_THREADS} -c${CONNECTIONS} -d${DURATION_S}s on the same machine; ${WORKERS} server workers`);

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
  console.log(`single verification (in-process, one core): ${singleVerifyMs.toFixed(2)} ms`);

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

  console.log("\n| scenario | req/s | × baseline | p50 ms | p99 ms | peak RSS/worker MB |");
  console.log("|---|---:|---:|---:|---:|---:|");
  for (const row of rows) {
    if (row.scenario.includes("valid vs foreign")) continue;
    console.log(`| ${row.scenario} | ${row.rps} | ${(row.rps / base.rps).toFixed(3)} | ${row.p50.toFixed(2)} | ${row.p99.toFixed(2)} | ${row.rssMb ?? ""} |`);
  }
  console.log("");
  for (const row of rows) if (row.note) console.log(`- ${row.scenario}: ${row.note}`);
}

try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
