// What a signed receipt adds to a decision on the proof path, measured in
// process (no HTTP, no verifier): the decision alone (one conditional UPDATE)
// against the decision plus its receipt (claims, Ed25519 JWS through jose,
// one conditional UPDATE storing it). Rounds of the two alternate so machine
// noise hits both; the figure is the median round.
//
//   bun run bench:receipts [--decisions N] [--rounds R] [--no-postgres]
//
// PostgreSQL: ZKAGENT_TEST_POSTGRES_URL (a throwaway database is created on it).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CHECKS } from "../src/receipts/claims";
import { receiptClaims } from "../src/receipts/claims";
import { boundContextHash, receiptFor } from "../src/receipts/service";
import { ReceiptSigner } from "../src/receipts/signer";
import { openStore } from "../src/store";
import type { ChallengeRecord, Decision, Store } from "../src/store/interface";
import { createTestDatabase } from "../test/support/postgres";
import { median } from "./support";

const { values: flags } = parseArgs({ options: { decisions: { type: "string" }, rounds: { type: "string" }, "no-postgres": { type: "boolean" } } });
const DECISIONS = Number(flags.decisions ?? 400);
const ROUNDS = Number(flags.rounds ?? 7);
const now = Date.now();

function challenge(keyId: string, i: number): ChallengeRecord {
  return {
    id: `ch_bench_${crypto.randomUUID()}`,
    keyId,
    agentId: "bench-agent",
    action: "purchase",
    context: `{"amount":${i},"currency":"EUR","merchant":"shop-a"}`,
    nonce: "0a".repeat(31),
    createdAt: now,
    expiresAt: now + 300_000,
    status: "pending",
    decidedAt: null,
    confidence: null,
    reason: null,
  };
}

const decision = (): Decision => ({
  status: "verified",
  decidedAt: Date.now(),
  confidence: 0.99,
  reason: null,
  evidence: { checks: CHECKS.slice(0, 6), identityCommitment: "1234567890", vkHash: "sha256:" + "ab".repeat(32) },
});

async function measure(name: string, store: Store) {
  const keyId = `key_bench_${crypto.randomUUID()}`;
  await store.createKey({ id: keyId, name: "bench", hash: "0".repeat(64), rateLimit: 0, createdAt: now, revokedAt: null });
  const deps = { store, signer: new ReceiptSigner(store), issuer: "https://zkagent.example" };
  await deps.signer.activeKid(); // the key exists and is cached, as on a running node

  const prepare = async () => {
    const batch = Array.from({ length: DECISIONS }, (_, i) => challenge(keyId, i));
    for (const c of batch) await store.createChallenge(c, { windowStart: now, limit: 0 });
    return batch;
  };
  const timeDecisions = async (withReceipt: boolean) => {
    const batch = await prepare();
    const started = performance.now();
    for (const c of batch) {
      const { record } = await store.decideChallenge(c.id, decision());
      if (withReceipt) await receiptFor(deps, record!);
    }
    return ((performance.now() - started) * 1000) / DECISIONS; // µs per decision
  };
  const timeSignOnly = async () => {
    const record: ChallengeRecord = { ...challenge(keyId, 1), status: "verified", decidedAt: now, confidence: 0.99, evidence: decision().evidence };
    const started = performance.now();
    for (let i = 0; i < DECISIONS; i++) await deps.signer.sign(receiptClaims({ record, issuer: deps.issuer, contextHash: boundContextHash(record) }));
    return ((performance.now() - started) * 1000) / DECISIONS;
  };

  await timeDecisions(true); // warm-up
  const plain: number[] = [];
  const signed: number[] = [];
  const signOnly: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    plain.push(await timeDecisions(false));
    signed.push(await timeDecisions(true));
    signOnly.push(await timeSignOnly());
  }
  const [p, s, o] = [median(plain), median(signed), median(signOnly)];
  console.log(
    `${name.padEnd(10)} decision ${p.toFixed(0).padStart(6)} µs | decision + receipt ${s.toFixed(0).padStart(6)} µs | added ${(s - p).toFixed(0).padStart(5)} µs (×${(s / p).toFixed(2)}) | of which claims+sign ${o.toFixed(0)} µs`,
  );
}

console.log(`${DECISIONS} sequential decisions per round, ${ROUNDS} rounds, median round`);
const dir = mkdtempSync(join(tmpdir(), "zkagent-bench-receipts-"));
try {
  const sqlite = await openStore(join(dir, "bench.db"));
  await measure("sqlite", sqlite);
  await sqlite.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const pgUrl = process.env.ZKAGENT_TEST_POSTGRES_URL;
if (!flags["no-postgres"] && pgUrl) {
  const database = await createTestDatabase(pgUrl);
  try {
    const postgres = await openStore(database.url);
    await measure("postgres", postgres);
    await postgres.close();
  } finally {
    await database.drop();
  }
}
