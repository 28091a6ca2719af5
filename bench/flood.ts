// A quiet key's latency while another key floods its own challenges with
// wrong proofs (issue 18), on SQLite and on PostgreSQL, against a real
// `zkagent serve --workers 1` bound to 127.0.0.1.
//
//   bun run bench:flood [--no-postgres] [--quiet-proofs N] [--json]
//
// Key A floods: rounds of 3 fresh challenges, each sent 80 concurrent,
// differently spelled wrong proofs (a well-formed proof of another nonce,
// spelled with other whitespace and member order, so nothing could dedupe
// them by text). Meanwhile key B sends valid proofs one at a time, each for
// its own challenge, and the bench times them. B is timed alone first (the
// quiet figure). From /metrics: the proofs every verifier run checked
// (`zkagent_verification_batch_size_sum`, a series every release has), so
// A's proof checks per challenge = (proofs checked − B's) / A's challenges.
//
// PostgreSQL: ZKAGENT_TEST_POSTGRES_URL, else a throwaway cluster, as the
// tests start it (test/support/postgres-cluster.ts). --json: stdout carries
// exactly one JSON object; the rest goes to stderr.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createIdentity, prove } from "../src/agent";
import { systemClock } from "../src/clock";
import { newNonce } from "../src/identity/encoding";
import { newChallengeId } from "../src/modules/challenges/service";
import { createKey } from "../src/modules/keys/service";
import { openStore } from "../src/store";
import type { Store } from "../src/store/interface";
import { createTestDatabase, postgresTestUrl } from "../test/support/postgres";
import { freePort, seedChallenge, waitHealthy } from "./support";

const { values: flags } = parseArgs({
  options: { "no-postgres": { type: "boolean" }, "quiet-proofs": { type: "string" }, json: { type: "boolean" } },
});
const JSON_OUT = flags.json === true;
const say = (...parts: unknown[]) => (JSON_OUT ? console.error : console.log)(...parts);
const QUIET_PROOFS = Number(flags["quiet-proofs"] ?? 60);
const CHALLENGES_PER_ROUND = 3;
const SUBMISSIONS_PER_CHALLENGE = 80;
const CLI = new URL("../src/cli/index.ts", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "zkagent-flood-"));

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** Challenges written straight to the store (setup, not measured), all with `nonce`. */
async function seed(store: Store, keyId: string, agentId: string, count: number, nonce: string): Promise<string[]> {
  const now = Date.now();
  const ids = Array.from({ length: count }, () => newChallengeId());
  await Promise.all(ids.map((id) => seedChallenge(store, { id, keyId, agentId, action: "purchase", nonce }, now)));
  return ids;
}

async function proofsChecked(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("zkagent_verification_batch_size_sum "));
  return line ? Number(line.split(" ").pop()) : 0;
}

interface Figures {
  store: string;
  quiet: { p50: number; p99: number };
  flooded: { p50: number; p99: number; max: number };
  quiet_statuses: Record<string, number>;
  flood: { rounds: number; challenges: number; submissions: number; statuses: Record<string, number>; proof_checks: number; checks_per_challenge: number };
}

async function run(kind: "sqlite" | "postgres", databaseUrl: string): Promise<Figures> {
  const store = await openStore(databaseUrl);
  const a = await createKey(store, systemClock, "flooder", 0);
  const b = await createKey(store, systemClock, "quiet", 0);
  const agent = await createIdentity();
  for (const key of [a, b]) {
    await store.registerAgent({
      keyId: key.record.id,
      agentId: "agent",
      identityCommitment: agent.identity_commitment,
      signingKey: null,
      createdAt: Date.now(),
      revokedAt: null,
    });
  }
  // One valid proof answers every challenge seeded with its nonce (each submission is still a full verification).
  const nonce = newNonce();
  const proof = await prove({ secret: agent.secret, nonce, action: "purchase" });
  const quietIds = await seed(store, b.record.id, "agent", 2 * QUIET_PROOFS + 10, nonce);
  // The same proof is wrong for A's challenges (other nonces); 80 spellings of it.
  const parsed = JSON.parse(proof);
  const reordered = Object.fromEntries(Object.entries(parsed).reverse());
  const spellings = Array.from(
    { length: SUBMISSIONS_PER_CHALLENGE },
    (_, i) => `${JSON.stringify(i % 2 ? parsed : reordered, null, i % 5)}${" ".repeat(i >> 2)}`,
  );

  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = Bun.spawn([process.execPath, CLI, "serve", "--workers", "1"], {
    env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", DATABASE_URL: databaseUrl, LOG_LEVEL: "error", MAX_PENDING_PER_KEY: "0" },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "inherit",
  });
  const post = (key: string, path: string, body: unknown) =>
    fetch(url + path, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) });
  try {
    await waitHealthy(`${url}/health`, server);
    const quietStatuses: Record<string, number> = {};
    /** B's valid proofs, one at a time: latency of each, in ms. */
    const quietRun = async (ids: string[], until?: () => boolean) => {
      const times: number[] = [];
      for (const id of ids) {
        if (until?.()) break;
        const started = performance.now();
        const response = await post(b.key, "/v1/verify/proof", { challenge_id: id, proof });
        await response.arrayBuffer();
        times.push(performance.now() - started);
        quietStatuses[response.status] = (quietStatuses[response.status] ?? 0) + 1;
      }
      return times.sort((x, y) => x - y);
    };
    // Warm-up, then B alone.
    await quietRun(quietIds.slice(0, 10));
    const alone = await quietRun(quietIds.slice(10, 10 + QUIET_PROOFS));

    const checkedBefore = await proofsChecked(url);
    const floodStatuses: Record<string, number> = {};
    let quietDone = false;
    let rounds = 0;
    const flood = (async () => {
      while (!quietDone) {
        rounds++;
        const made = await Promise.all(
          Array.from({ length: CHALLENGES_PER_ROUND }, () =>
            post(a.key, "/v1/verify/challenge", { agent_id: "agent", action: "purchase" }).then((r) => r.json()),
          ),
        );
        const answers = await Promise.all(
          made.flatMap((c: any) => spellings.map((text) => post(a.key, "/v1/verify/proof", { challenge_id: c.challenge_id, proof: text }))),
        );
        for (const answer of answers) {
          floodStatuses[answer.status] = (floodStatuses[answer.status] ?? 0) + 1;
          await answer.arrayBuffer();
        }
      }
    })();
    // B starts once A's first round is under way.
    await Bun.sleep(20);
    const flooded = await quietRun(quietIds.slice(10 + QUIET_PROOFS, 10 + 2 * QUIET_PROOFS));
    quietDone = true;
    await flood;
    const checked = (await proofsChecked(url)) - checkedBefore;
    const challenges = rounds * CHALLENGES_PER_ROUND;
    const floodChecks = checked - flooded.length;
    return {
      store: kind,
      quiet: { p50: percentile(alone, 50), p99: percentile(alone, 99) },
      flooded: { p50: percentile(flooded, 50), p99: percentile(flooded, 99), max: flooded.at(-1)! },
      quiet_statuses: quietStatuses,
      flood: {
        rounds,
        challenges,
        submissions: challenges * SUBMISSIONS_PER_CHALLENGE,
        statuses: floodStatuses,
        proof_checks: floodChecks,
        checks_per_challenge: floodChecks / challenges,
      },
    };
  } finally {
    if (server.exitCode === null) server.kill("SIGTERM");
    await server.exited;
    await store.close();
  }
}

function report(f: Figures) {
  say(
    `${f.store}: quiet key B alone p50 ${f.quiet.p50.toFixed(1)} ms, p99 ${f.quiet.p99.toFixed(1)} ms; ` +
      `under A's flood p50 ${f.flooded.p50.toFixed(1)} ms, p99 ${f.flooded.p99.toFixed(1)} ms (max ${f.flooded.max.toFixed(1)}); B's statuses ${JSON.stringify(f.quiet_statuses)}`,
  );
  say(
    `${f.store}: flood ${f.flood.rounds} rounds, ${f.flood.challenges} challenges × ${SUBMISSIONS_PER_CHALLENGE} = ${f.flood.submissions} submissions ${JSON.stringify(f.flood.statuses)}; ` +
      `${f.flood.proof_checks} proof checks = ${f.flood.checks_per_challenge.toFixed(2)} per challenge`,
  );
}

async function main(): Promise<number> {
  say(`machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}; server and load on the same machine; ${QUIET_PROOFS} quiet proofs per phase`);
  const results: Figures[] = [];
  results.push(await run("sqlite", join(dir, "flood.db")));
  report(results.at(-1)!);
  if (!flags["no-postgres"]) {
    const database = await createTestDatabase(await postgresTestUrl());
    try {
      results.push(await run("postgres", database.url));
      report(results.at(-1)!);
    } finally {
      await database.drop();
    }
  }
  if (JSON_OUT) process.stdout.write(`${JSON.stringify({ quiet_proofs: QUIET_PROOFS, results })}\n`);
  return 0;
}

main()
  .then((code) => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(code);
  })
  .catch((error) => {
    console.error(error);
    rmSync(dir, { recursive: true, force: true });
    process.exit(1);
  });
