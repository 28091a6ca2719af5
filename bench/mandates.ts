// What a mandate check costs on the decide path, in one run: sequential
// decideChallenge calls on one store, without a scope, with a scope for an
// agent without mandate, and with a mandate of one daily limit (one locked
// spend row, read and written). SQLite on a temporary file and, when
// ZKAGENT_TEST_POSTGRES_URL is set, PostgreSQL on a fresh database.
//
//   bun bench/mandates.ts [--n 1000]    (5 interleaved rounds, medians)
//
// The proof verification around it (≈ms) is not included: this isolates the
// store transaction, where the mandate adds its reads and writes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { storedMandate } from "../src/mandates/enforce";
import type { ChallengeRecord, Store } from "../src/store/interface";
import { openPostgres } from "../src/store/postgres";
import { openSqlite } from "../src/store/sqlite";
import { createTestDatabase } from "../test/support/postgres";

const { values } = parseArgs({ options: { n: { type: "string" } } });
const N = Number(values.n ?? 1000);
const ROUNDS = 5;
const T0 = Date.now();
const context = JSON.stringify({ amount: "1.00", currency: "EUR", merchant: "shop-a" });
const mandate = storedMandate({ limits: [{ action: "purchase", currency: "EUR", max_amount: "50.00", max_total: "1000000000.00", period: "day" }] });

async function variant(store: Store, label: string, withMandate: boolean | "scope-only"): Promise<number> {
  const keyId = `key_${label}`;
  await store.createKey({ id: keyId, name: label, hash: "0".repeat(64), rateLimit: 0, createdAt: T0, revokedAt: null });
  await store.registerAgent({
    keyId,
    agentId: "a",
    identityCommitment: "1",
    signingKey: null,
    createdAt: T0,
    revokedAt: null,
    ...(withMandate === true ? mandate : {}),
  });
  const challenges: ChallengeRecord[] = [];
  for (let i = 0; i < N; i++) {
    const record: ChallengeRecord = {
      id: `ch_${label}_${i}`,
      keyId,
      agentId: "a",
      action: "purchase",
      context,
      nonce: "1",
      createdAt: T0,
      expiresAt: T0 + 300_000,
      status: "pending",
      decidedAt: null,
      confidence: null,
      reason: null,
    };
    await store.createChallenge(record, { windowStart: T0, limit: 0 });
    challenges.push(record);
  }
  const started = performance.now();
  for (const challenge of challenges) {
    const decision = { status: "verified" as const, decidedAt: T0 + 1, confidence: 0.99, reason: null };
    const result = withMandate === false ? await store.decideChallenge(challenge.id, decision) : await store.decideChallenge(challenge.id, decision, challenge);
    if (result.record?.status !== "verified") throw new Error(`unexpected ${JSON.stringify(result)}`);
  }
  return ((performance.now() - started) * 1000) / N;
}

async function measure(name: string, store: Store) {
  // Interleaved rounds, so machine noise falls on every variant alike.
  const rows: Record<string, number[]> = { "no scope": [], "scope, no mandate": [], "one daily limit": [] };
  for (let round = 0; round < ROUNDS; round++) {
    rows["no scope"]!.push(await variant(store, `plain${round}`, false));
    rows["scope, no mandate"]!.push(await variant(store, `scope${round}`, "scope-only"));
    rows["one daily limit"]!.push(await variant(store, `mandate${round}`, true));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(rows["no scope"]!);
  for (const [label, xs] of Object.entries(rows)) {
    console.log(`${name.padEnd(10)} ${label.padEnd(18)} ${median(xs).toFixed(0).padStart(6)} µs/decision  ×${(median(xs) / base).toFixed(2)}`);
  }
}

const dir = mkdtempSync(join(tmpdir(), "zkagent-bench-mandates-"));
try {
  const sqlite = openSqlite(join(dir, "bench.db"));
  await measure("sqlite", sqlite);
  await sqlite.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const pgUrl = process.env.ZKAGENT_TEST_POSTGRES_URL;
if (pgUrl) {
  const db = await createTestDatabase(pgUrl);
  try {
    const pg = await openPostgres(db.url);
    await measure("postgres", pg);
    await pg.close();
  } finally {
    await db.drop();
  }
} else console.log("postgres   not measured: set ZKAGENT_TEST_POSTGRES_URL");
