// What a mandate check costs on the decide path, in one run: sequential,
// alternating decideChallenge calls on one store, without a scope, with a scope for an
// agent without mandate, and with a mandate of one daily limit (one locked
// spend row, read and written). SQLite on a temporary file and, when
// ZKAGENT_TEST_POSTGRES_URL is set, PostgreSQL on a fresh database.
//
//   bun bench/mandates.ts [--n 1000]    (5 rounds, decisions alternating between variants; medians)
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
import { median } from "./support";

const { values } = parseArgs({ options: { n: { type: "string" } } });
const N = Number(values.n ?? 1000);
const ROUNDS = 5;
const T0 = Date.now();
const context = JSON.stringify({ amount: "1.00", currency: "EUR", merchant: "shop-a" });
const mandate = storedMandate({ limits: [{ action: "purchase", currency: "EUR", max_amount: "50.00", max_total: "1000000000.00", period: "day" }] });

type Variant = "no scope" | "scope, no mandate" | "one daily limit";
const VARIANTS: Variant[] = ["no scope", "scope, no mandate", "one daily limit"];

/** A key, its agent (with the mandate for the last variant) and N pending challenges. */
async function prepare(store: Store, label: string, variant: Variant): Promise<ChallengeRecord[]> {
  const keyId = `key_${label}`;
  await store.createKey({ id: keyId, name: label, hash: "0".repeat(64), rateLimit: 0, createdAt: T0, revokedAt: null });
  await store.registerAgent({
    keyId,
    agentId: "a",
    identityCommitment: "1",
    signingKey: null,
    createdAt: T0,
    revokedAt: null,
    ...(variant === "one daily limit" ? mandate : {}),
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
  return challenges;
}

/**
 * One round: the three variants' decisions alternate (plain, scoped,
 * mandate, plain, …), each timed on its own, so table growth, WAL
 * checkpoints and the neighbours' load fall on all three alike.
 */
async function round(store: Store, index: number): Promise<Record<Variant, number>> {
  const prepared = await Promise.all(VARIANTS.map((variant, v) => prepare(store, `r${index}v${v}`, variant)));
  const spent: Record<Variant, number> = { "no scope": 0, "scope, no mandate": 0, "one daily limit": 0 };
  const decision = { status: "verified" as const, decidedAt: T0 + 1, confidence: 0.99, reason: null };
  for (let i = 0; i < N; i++) {
    for (const [v, variant] of VARIANTS.entries()) {
      const challenge = prepared[v]![i]!;
      const started = performance.now();
      const result =
        variant === "no scope" ? await store.decideChallenge(challenge.id, decision) : await store.decideChallenge(challenge.id, decision, challenge);
      spent[variant] += performance.now() - started;
      if (result.record?.status !== "verified") throw new Error(`unexpected ${JSON.stringify(result)}`);
    }
  }
  for (const variant of VARIANTS) spent[variant] = (spent[variant] * 1000) / N;
  return spent;
}

async function measure(name: string, store: Store) {
  const rounds: Record<Variant, number>[] = [];
  for (let index = 0; index < ROUNDS; index++) rounds.push(await round(store, index));
  const base = median(rounds.map((r) => r["no scope"]));
  for (const variant of VARIANTS) {
    const value = median(rounds.map((r) => r[variant]));
    console.log(`${name.padEnd(10)} ${variant.padEnd(18)} ${value.toFixed(0).padStart(6)} µs/decision  ×${(value / base).toFixed(2)}`);
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
