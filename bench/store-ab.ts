// This checkout's store against another checkout's, in one process, rounds
// interleaved (ABBA): a challenge's life — create, read, decide — with 64 at
// once, on SQLite and on PostgreSQL. For refactors of src/store/ that must not
// change speed: on a loaded machine the HTTP bench's runs, minutes apart,
// differ more than any such change, while here both stores share each minute.
//
//   bun bench/store-ab.ts <other checkout> [--rounds 4] [--count 3000] [--no-postgres]
//
// The other checkout needs its own node_modules (or a link to these). Prints
// cycles per second per round and the ratio of medians (this / other).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Store } from "../src/store/interface";
import { openPostgres } from "../src/store/postgres";
import { openSqlite } from "../src/store/sqlite";
import { createTestDatabase, postgresTestUrl } from "../test/support/postgres";
import { median } from "./support";

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: "string" }, count: { type: "string" }, "no-postgres": { type: "boolean" } },
});
if (positionals.length !== 1) throw new Error("usage: bun bench/store-ab.ts <other checkout> [--rounds 4] [--count 3000] [--no-postgres]");
const other = resolve(positionals[0]!);
const ROUNDS = Number(flags.rounds ?? 4);
const COUNT = Number(flags.count ?? 3000);
const LANES = 64;

let serial = 0;
/** Cycles per second: each lane creates a challenge under a rate window, reads it back and decides it. */
async function cycles(store: Store): Promise<number> {
  const now = Date.now();
  const window = { windowStart: now - (now % 60_000), limit: 1_000_000_000 };
  let started = 0;
  const t0 = performance.now();
  const lane = async () => {
    while (started < COUNT) {
      started++;
      const id = `ab${serial++}`;
      const challenge = { id, keyId: "k", agentId: "a", action: "x", context: null, nonce: "1", createdAt: now, expiresAt: now + 300_000 };
      await store.createChallenge({ ...challenge, status: "pending", decidedAt: null, confidence: null, reason: null }, window);
      if (!(await store.getChallenge(id))) throw new Error(`${id} was not stored`);
      await store.decideChallenge(id, { status: "failed", decidedAt: now + 1, confidence: null, reason: "proof_rejected", evidence: null });
    }
  };
  await Promise.all(Array.from({ length: LANES }, lane));
  return Math.round(COUNT / ((performance.now() - t0) / 1000));
}

async function compare(dialect: string, open: { this: () => Promise<Store>; other: () => Promise<Store> }): Promise<void> {
  const stores = { this: await open.this(), other: await open.other() };
  for (const store of Object.values(stores)) await store.createKey({ id: "k", name: "k", hash: "h", rateLimit: 0, createdAt: 0, revokedAt: null });
  const rates: Record<"this" | "other", number[]> = { this: [], other: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of round % 2 === 0 ? (["other", "this"] as const) : (["this", "other"] as const)) rates[side].push(await cycles(stores[side]));
  }
  for (const store of Object.values(stores)) await store.close();
  const ratio = median(rates.this) / median(rates.other);
  console.log(`${dialect}: this ${rates.this.join(", ")} /s; other ${rates.other.join(", ")} /s; medians this/other ${ratio.toFixed(2)}`);
}

const theirs = {
  sqlite: (await import(join(other, "src/store/sqlite.ts"))).openSqlite as typeof openSqlite,
  postgres: (await import(join(other, "src/store/postgres.ts"))).openPostgres as typeof openPostgres,
};
const dir = mkdtempSync(join(tmpdir(), "zkagent-store-ab-"));
try {
  await compare("sqlite", { this: async () => openSqlite(join(dir, "this.db")), other: async () => theirs.sqlite(join(dir, "other.db")) });
  if (!flags["no-postgres"]) {
    const server = await postgresTestUrl();
    const [a, b] = [await createTestDatabase(server), await createTestDatabase(server)];
    await compare("postgres", { this: () => openPostgres(a.url), other: () => theirs.postgres(b.url) });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
