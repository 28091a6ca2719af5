// The budgets demo end to end (`bun run demo:budgets`, examples/budgets/demo.ts):
// real processes (the service on SQLite, shops A, B and C on their own keys,
// the agent as a process of its own per purchase), and the automated
// unlinkability test over what it wrote:
//
// - the summary: five purchases of 20 EUR at A, B, A, B, A pass (201); a
//   sixth at B is refused (the day's budget), 31 at A (per purchase), 20 at
//   shop C (not a payee); a day later (the service's test clock) 20 at B
//   passes;
// - the two merchants' transcripts (every request, answer, receipt and
//   webhook each received) share no value but public parameters (the group,
//   its leaves, roots and checkpoints, the circuits and verification key, the
//   JWKS, the service's URL), readings of the clock, and the protocol's words
//   (test/support/transcripts.ts says what explains a shared token); the
//   agent's own wallet, which does link the spends, shares values with both,
//   so the scan is shown to see a link where there is one;
// - the service's own records of two spends by the one member (every row
//   of its database that names either spend) share no value either, beyond
//   the same public values and each merchant's own data.
//
// The agent is the CLI (`zkagent fetch --budget`), a process per purchase.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { addValue, explained, tokensOfFolder } from "../support/transcripts";

const ROOT = join(import.meta.dir, "../..");
const DEMO_TIMEOUT_MS = 15 * 60_000;

const run = { base: "", out: "", work: "", stderr: "", code: -1, started: 0, ended: 0 };

beforeAll(async () => {
  const base = mkdtempSync(join(tmpdir(), "zkagent-demo-test-"));
  run.base = base;
  run.out = join(base, "out");
  run.work = join(base, "work");
  run.started = Date.now();
  const child = Bun.spawn([process.execPath, "run", "demo:budgets", "--", "--out", run.out, "--work", run.work], {
    cwd: ROOT,
    env: process.env,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  [run.stderr, run.code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  run.ended = Date.now();
}, DEMO_TIMEOUT_MS);

afterAll(() => {
  if (run.base) rmSync(run.base, { recursive: true, force: true });
});

/** Fails with the demo's own words when it could not run the scenario at all (a missing piece: exit 3). */
function demoRan(): void {
  if (run.code === 3 || !existsSync(join(run.out, "summary.json")))
    throw new Error(`bun run demo:budgets did not run the scenario (exit ${run.code}):\n${run.stderr.trim().slice(-2000)}`);
}

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

describe("bun run demo:budgets -- --out DIR", () => {
  test("the purchases end as the mandate says: five pass, then budget, per purchase and payee refuse, and the next day passes", () => {
    demoRan();
    const summary = readJson(join(run.out, "summary.json")) as Record<string, unknown>[];
    // What the parties said about a purchase that ended otherwise, beside the diff below.
    for (const row of summary)
      if (!row.as_expected) console.error(`purchase ${row.merchant} ${row.amount} (expected ${row.expected}): ${row.status} ${row.detail}`);
    const passed = (row: Record<string, unknown>) => ({
      merchant: row.merchant,
      amount: row.amount,
      currency: row.currency,
      passed: row.status === 201,
      reason: row.reason,
    });
    expect(summary.map(passed)).toEqual([
      { merchant: "A", amount: "20.00", currency: "EUR", passed: true, reason: null },
      { merchant: "B", amount: "20.00", currency: "EUR", passed: true, reason: null },
      { merchant: "A", amount: "20.00", currency: "EUR", passed: true, reason: null },
      { merchant: "B", amount: "20.00", currency: "EUR", passed: true, reason: null },
      { merchant: "A", amount: "20.00", currency: "EUR", passed: true, reason: null },
      { merchant: "B", amount: "20.00", currency: "EUR", passed: false, reason: "budget" },
      { merchant: "A", amount: "31.00", currency: "EUR", passed: false, reason: "per_purchase" },
      { merchant: "C", amount: "20.00", currency: "EUR", passed: false, reason: "payee" },
      { merchant: "B", amount: "20.00", currency: "EUR", passed: true, reason: null },
    ]);
    // One day for the first eight, the next for the last: the service's clock moved, and with it the budget's period.
    const days = summary.map((row) => row.day as string);
    expect(new Set(days.slice(0, 8)).size).toBe(1);
    expect(Date.parse(days[8]!) - Date.parse(days[0]!)).toBe(86_400_000);
    expect(run.code).toBe(0);
  });

  test("each merchant's folder holds what it received: the agent's requests, the service's answers, receipts and webhook events", () => {
    demoRan();
    for (const merchant of ["merchant-a", "merchant-b"]) {
      const files = readdirSync(join(run.out, merchant));
      const kinds = ["agent", "service", "receipt", "webhook"];
      expect({ merchant, kinds: kinds.filter((kind) => files.some((name) => name.endsWith(`-${kind}.json`))) }).toEqual({ merchant, kinds });
      // One webhook event per decided spend: every purchase that passed there (the refused ones never reached the service).
      const passed = (readJson(join(run.out, "summary.json")) as { merchant: string; status: number }[]).filter(
        (row) => `merchant-${row.merchant.toLowerCase()}` === merchant && row.status === 201,
      );
      expect({ merchant, webhooks: files.filter((name) => name.endsWith("-webhook.json")).length }).toEqual({ merchant, webhooks: passed.length });
    }
    for (const name of ["group.json", "members.json", "roots.json", "verification_key.json", "jwks.json", "circuits.json"])
      expect(existsSync(join(run.out, "public", name))).toBe(true);
  });

  test("unlinkable across merchants: A's and B's transcripts share no value but public parameters, clock readings and the protocol's words", () => {
    demoRan();
    const a = tokensOfFolder(join(run.out, "merchant-a"));
    const b = tokensOfFolder(join(run.out, "merchant-b"));
    // The scan sees something: each transcript carries its spends' nullifiers and commitments (the test below finds them).
    expect(a.size).toBeGreaterThan(100);
    const shared = [...a.keys()].filter((token) => b.has(token) && !explained(token, allowed()));
    expect(shared.map((token) => ({ token, a: a.get(token)!.slice(0, 3), b: b.get(token)!.slice(0, 3) }))).toEqual([]);
  });

  test("the scan sees a link where there is one: the agent's own wallet holds values of both merchants' transcripts", () => {
    demoRan();
    const budgets = join(run.work, "agent", "budgets");
    const wallets = readdirSync(budgets).filter((name) => name.endsWith(".wallet.json"));
    expect(wallets.length).toBe(1);
    const wallet = addValue(readJson(join(budgets, wallets[0]!)), new Set());
    for (const merchant of ["merchant-a", "merchant-b"]) {
      const seen = [...tokensOfFolder(join(run.out, merchant)).keys()].filter((token) => wallet.has(token) && !explained(token, allowed()));
      expect({ merchant, linked: seen.length > 0 }).toEqual({ merchant, linked: true });
    }
  });

  test("unlinkable at the service: its records of two spends by the one member share no value but public parameters", () => {
    demoRan();
    const first = spendOf("merchant-a"); // the first purchase, at A
    const second = spendOf("merchant-b"); // the second, at B
    const db = new Database(join(run.work, "zkagent.db"), { readonly: true });
    try {
      const rowsOf = (spend: Spend) => rowsNaming(db, [spend.nullifier, spend.commitment, spend.sessionId]);
      const one = rowsOf(first);
      const two = rowsOf(second);
      // The spend's rows are found: its nullifier, its note, its challenge and decision, the audit trail, the webhook event.
      for (const found of [one, two]) expect(found.tables).toEqual(expect.arrayContaining(["challenges", "budget_nullifiers", "budget_notes", "audit_log"]));
      // Each merchant's own data (its key id, its origin) is its own: it differs between the two spends anyway.
      const tokens = (rows: unknown[]) => addValue(rows, new Set());
      const b = tokens(two.rows);
      const shared = [...tokens(one.rows)].filter((t) => b.has(t) && !explained(t, allowed()));
      expect(shared).toEqual([]);
    } finally {
      db.close();
    }
  });
});

/** What explains a shared token: the public parameters (everything DIR/public/ holds), the vocabulary, the run's clock readings. */
function allowed() {
  const known = new Set(tokensOfFolder(join(run.out, "public")).keys());
  // The run's clock: from its start to a day after its end (the clock moved a day), with a margin.
  const window = { from: run.started - 2 * 86_400_000, to: run.ended + 3 * 86_400_000 };
  // No vocabulary beyond the words transcripts.ts recognises is needed: nothing else is shared.
  return { isPublic: (token: string) => known.has(token), vocabulary: new Set<string>(), window };
}

interface Spend {
  nullifier: string;
  commitment: string;
  sessionId: string;
}

/** The first verified spend in a merchant's transcript, from the service's answer to its proof. */
function spendOf(merchant: string): Spend {
  const dir = join(run.out, merchant);
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith("-service.json")) continue;
    const { request, response } = readJson(join(dir, name));
    if (request.path === "/v1/verify/proof" && response.status === 200 && response.body?.spend)
      return { nullifier: response.body.spend.nullifier, commitment: response.body.spend.commitment, sessionId: response.body.session_id };
  }
  throw new Error(`${merchant} holds no verified spend`);
}

/** A column's value as text: blobs in hex, integers as decimals. */
const cell = (v: unknown): unknown => (v instanceof Uint8Array ? Buffer.from(v).toString("hex") : typeof v === "bigint" ? String(v) : v);

/** Every row of every table whose text holds one of `needles` (its values only: the table and column names are the schema's). */
function rowsNaming(db: Database, needles: string[]): { tables: string[]; rows: Record<string, unknown>[] } {
  const tables = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all();
  const found: Record<string, unknown>[] = [];
  const names = new Set<string>();
  for (const { name } of tables) {
    for (const raw of db.query<Record<string, unknown>, []>(`SELECT * FROM "${name}"`).all()) {
      const row = Object.fromEntries(Object.entries(raw).map(([column, v]) => [column, cell(v)]));
      const text = JSON.stringify(row);
      if (needles.some((needle) => text.includes(needle))) {
        found.push(row);
        names.add(name);
      }
    }
  }
  return { tables: [...names], rows: found };
}
