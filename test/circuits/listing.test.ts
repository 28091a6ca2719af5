// Issue 23, "the public list is served from data computed once at add time",
// on both stores: a circuit's list entry is what its row stored when it was
// added (changing the stored transcript afterwards changes nothing the list
// shows: no request parses or hashes it), and a row stored before listings
// were (the migration leaves them NULL) is rebuilt once on start: one whose
// transcript only carries extra fields is served its rebuilt transcript,
// inside the route's schema; one whose transcript lies is not served (409
// circuit_not_served), and the list leaves it out. Every answer is held to
// the OpenAPI document by the harness (test/support/contract.ts).
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SQL } from "bun";
import { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shippedCeremony } from "../../src/ceremony/ceremony";
import { circuitRecordOf, rebuildCircuitListings } from "../../src/circuits/registry";
import type { CircuitWithArtifacts, Store } from "../../src/store/interface";
import { migratePostgres, postgresMigrations } from "../../src/store/migrations/postgres";
import { sqliteMigrations } from "../../src/store/migrations/sqlite";
import { openPostgres } from "../../src/store/postgres";
import { openSqlite } from "../../src/store/sqlite";
import { startNode } from "../multinode/nodes";
import { createHarness } from "../support/harness";
import { createTestDatabase, postgresTestUrl, type TestDatabase } from "../support/postgres";

setDefaultTimeout(60_000);
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const tmp = mkdtempSync(join(tmpdir(), "zkagent-listing-"));
let pg: TestDatabase | undefined;
afterAll(async () => {
  await pg?.drop();
  rmSync(tmp, { recursive: true, force: true });
});

/** A store and a way to change one circuit's stored transcript behind its back, as a raw UPDATE would. */
interface Opened {
  store: Store;
  setTranscript(id: string, text: string): Promise<void>;
  original(id: string): Promise<string | null>;
  close(): Promise<void>;
}

let files = 0;
const STORES: { name: string; open: () => Promise<Opened> }[] = [
  {
    name: "sqlite",
    async open() {
      const path = join(tmp, `store-${++files}.db`);
      const store = openSqlite(path);
      const raw = new Database(path);
      return {
        store,
        setTranscript: async (id, text) => void raw.query("UPDATE circuits SET transcript = ? WHERE id = ?").run(text, id),
        original: async (id) => (raw.query("SELECT transcript_original AS t FROM circuits WHERE id = ?").get(id) as { t: string | null }).t,
        close: async () => (raw.close(), await store.close()),
      };
    },
  },
  {
    name: "postgres",
    async open() {
      pg ??= await createTestDatabase(await postgresTestUrl());
      const store = await openPostgres(pg.url, { poolSize: 2 });
      const raw = new SQL(pg.url);
      await raw`TRUNCATE circuits`;
      return {
        store,
        setTranscript: async (id, text) => void (await raw`UPDATE circuits SET transcript = ${text} WHERE id = ${id}`),
        original: async (id) => (await raw`SELECT transcript_original AS t FROM circuits WHERE id = ${id}`)[0].t,
        close: async () => (await raw.close(), await store.close()),
      };
    },
  },
];

const shipped = shippedCeremony().then((files) => circuitRecordOf(files, 1_760_000_000_000));
const shippedTranscript = async () => JSON.parse((await shipped).transcript);

/** The shipped ceremony under another id, as a row from before listings were: its stored transcript `transcript`, no listing. */
async function legacyRow(n: number, transcript: unknown): Promise<CircuitWithArtifacts> {
  return {
    ...(await shipped),
    id: `agent_identity-${n.toString(16).padStart(16, "0")}`,
    createdAt: 1_760_000_000_000 + n,
    transcript: typeof transcript === "string" ? transcript : JSON.stringify(transcript),
    transcriptSha256: null,
    ceremony: null,
  };
}

for (const { name, open } of STORES) {
  describe(`circuit listings (${name})`, () => {
    test("the list entry is the listing stored at add time: a changed transcript blob changes nothing it shows", async () => {
      const { store, setTranscript, close } = await open();
      try {
        const record = await shipped;
        await store.addCircuit(record);
        const before = await createHarness(store);
        const listed = (await before.call("GET", "/v1/circuits")).body.circuits.find((c: { id: string }) => c.id === record.id);
        expect(listed.transcript_sha256).toBe(sha256(record.transcript));
        expect(listed.ceremony.contributions.map((c: { name: string }) => c.name)).toEqual(["zkagent maintainers #1", "zkagent maintainers #2"]);
        expect(listed.ceremony.beacon.name).toBe("beacon: sha256 of the issue 17 statement");

        // Behind the service's back: a transcript listing no contribution at all.
        const other = { ...(await shippedTranscript()), steps: [(await shippedTranscript()).steps[0]] };
        await setTranscript(record.id, JSON.stringify(other));
        // A fresh registry (nothing cached in this process) reads the row again: the list still shows what was stored at add time.
        const after = await createHarness(store);
        const again = (await after.call("GET", "/v1/circuits")).body.circuits.find((c: { id: string }) => c.id === record.id);
        expect(again).toEqual(listed);
        expect((await after.call("GET", `/v1/circuits/${record.id}`)).body).toEqual(listed);
      } finally {
        await close();
      }
    });

    test("a row from before listings: extra fields are dropped and its rebuilt transcript served inside the schema; a lying one is refused (409), left out of the list", async () => {
      const { store, original, close } = await open();
      try {
        const honest = await shippedTranscript();
        const extra = { ...honest, operator_note: "<script>", steps: honest.steps.map((s: object) => ({ ...s, signed_by: "mallory" })) };
        // A contribution relabelled: the list would have shown one contribution fewer than the zkey holds.
        const relabelled = { ...honest, steps: honest.steps.map((s: { step: string }, i: number) => (i === 1 ? { ...s, step: "review" } : s)) };
        // Another ptau named; and a contribution credited to someone who did not make it.
        const otherPtau = { ...honest, ptau: { ...honest.ptau, blake2b512: "0".repeat(128) } };
        const renamed = { ...honest, steps: honest.steps.map((s: { step: string }, i: number) => (i === 2 ? { ...s, name: "mallory" } : s)) };
        const rows = await Promise.all([
          legacyRow(1, extra),
          legacyRow(2, relabelled),
          legacyRow(3, otherPtau),
          legacyRow(4, renamed),
          legacyRow(5, "not json"),
        ]);
        for (const row of rows) await store.addCircuit(row);

        const outcome = await rebuildCircuitListings(store);
        expect(outcome.rebuilt).toEqual([rows[0]!.id]);
        expect(outcome.refused.map((r) => r.id)).toEqual(rows.slice(1).map((r) => r.id));
        expect(outcome.refused.map((r) => r.reason)).toEqual([
          expect.stringContaining('unknown label "review"'),
          expect.stringContaining("not the pinned powersOfTau28_hez_final_09.ptau"),
          expect.stringContaining("contribution #2 in the transcript is not the zkey's"),
          expect.stringContaining("is not JSON"),
        ]);
        // Once: a second start rebuilds nothing.
        expect(await rebuildCircuitListings(store)).toEqual({ rebuilt: [], refused: [] });

        const h = await createHarness(store);
        const transcript = await h.call("GET", `/v1/circuits/${rows[0]!.id}/transcript`);
        expect(transcript.status).toBe(200);
        expect(transcript.body).toEqual(honest);
        // The Semaphore circuits (from the installed package, never stored) are listed too: only the stored ones count here.
        const list = (await h.call("GET", "/v1/circuits")).body.circuits.filter((c: { id: string }) => c.id.startsWith("agent_identity-"));
        expect(list.map((c: { id: string }) => c.id)).toEqual([rows[0]!.id]);
        expect(list[0].transcript_sha256).toBe(sha256(JSON.stringify(honest, null, 2) + "\n"));
        expect(transcript.headers.get("etag")).toBe(`"${list[0].transcript_sha256}"`);
        // The transcript as it was stored is kept, not served.
        expect(JSON.parse((await original(rows[0]!.id))!).operator_note).toBe("<script>");

        for (const row of rows.slice(1)) {
          for (const path of [`/v1/circuits/${row.id}`, `/v1/circuits/${row.id}/transcript`, `/v1/circuits/${row.id}/zkey`]) {
            const refused = await h.call("GET", path);
            expect(refused.status).toBe(409);
            expect(refused.body.error).toBe("Circuit not served");
          }
        }
      } finally {
        await close();
      }
    });
  });
}

/** The schema as it was before listings were stored: every migration before the one that adds them (others may follow it). */
const beforeListings = (migrations: readonly string[]) =>
  migrations.slice(
    0,
    migrations.findIndex((m) => m.includes("ADD COLUMN transcript_sha256")),
  );

/** A row as an older release wrote it: no listing columns, the transcript with an extra member. */
async function oldRowValues() {
  const record = await shipped;
  const transcript = JSON.stringify({ ...(await shippedTranscript()), note: "kept aside" });
  return { ...record, transcript };
}

describe("a database from before listings, migrated", () => {
  test("sqlite: the migration leaves the old row without a listing; the first start's rebuild gives it one, served in schema", async () => {
    const path = join(tmp, "old.db");
    const old = new Database(path, { create: true, strict: true });
    const steps = beforeListings(sqliteMigrations);
    expect(steps.length).toBeGreaterThan(0);
    for (const migration of steps) old.exec(migration);
    old.exec(`PRAGMA user_version = ${steps.length}`);
    const r = await oldRowValues();
    old
      .query(
        `INSERT INTO circuits (id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, zkey, wasm, created_at, activated_at, retired_at)
         VALUES (?, 'active', ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
      )
      .run(r.id, r.vk, r.vkHash, r.zkeySha256, r.wasmSha256, r.transcript, r.zkey, r.wasm, r.createdAt, r.createdAt);
    old.close();

    const store = openSqlite(path);
    try {
      expect(await store.getCircuit(r.id)).toMatchObject({ transcriptSha256: null, ceremony: null, refused: null });
      expect(await rebuildCircuitListings(store)).toEqual({ rebuilt: [r.id], refused: [] });
      const h = await createHarness(store);
      const listed = (await h.call("GET", `/v1/circuits/${r.id}`)).body;
      expect(listed.transcript_sha256).toBe(sha256((await shipped).transcript));
      expect(listed.ceremony).toEqual((await shipped).ceremony);
      expect((await h.call("GET", `/v1/circuits/${r.id}/transcript`)).body).toEqual(await shippedTranscript());
    } finally {
      await store.close();
    }
  });

  test("postgres: likewise", async () => {
    const db = await createTestDatabase(await postgresTestUrl());
    const raw = new SQL(db.url);
    try {
      await migratePostgres(raw, beforeListings(postgresMigrations));
      const r = await oldRowValues();
      await raw`INSERT INTO circuits (id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, zkey, wasm, created_at, activated_at, retired_at)
        VALUES (${r.id}, 'active', ${r.vk}, ${r.vkHash}, ${r.zkeySha256}, ${r.wasmSha256}, ${r.transcript}, ${Buffer.from(r.zkey)}, ${Buffer.from(r.wasm)},
                ${r.createdAt}, ${r.createdAt}, NULL)`;
      const store = await openPostgres(db.url, { poolSize: 2 });
      try {
        expect(await store.getCircuit(r.id)).toMatchObject({ transcriptSha256: null, ceremony: null, refused: null });
        expect(await rebuildCircuitListings(store)).toEqual({ rebuilt: [r.id], refused: [] });
        const h = await createHarness(store);
        expect((await h.call("GET", `/v1/circuits/${r.id}`)).body.ceremony).toEqual((await shipped).ceremony);
        expect((await h.call("GET", `/v1/circuits/${r.id}/transcript`)).body).toEqual(await shippedTranscript());
      } finally {
        await store.close();
      }
    } finally {
      await raw.close();
      await db.drop();
    }
  });
});

test("zkagent serve rebuilds on its first start: the honest old row is listed, the lying one answers 409 and is not listed", async () => {
  const path = join(tmp, "served.db");
  const old = new Database(path, { create: true, strict: true });
  const steps = beforeListings(sqliteMigrations);
  for (const migration of steps) old.exec(migration);
  old.exec(`PRAGMA user_version = ${steps.length}`);
  const honest = await shippedTranscript();
  const lying = { ...honest, steps: honest.steps.map((s: { step: string }, i: number) => (i === 1 ? { ...s, step: "review" } : s)) };
  const insert = old.query(
    `INSERT INTO circuits (id, state, vk, vk_hash, zkey_sha256, wasm_sha256, transcript, zkey, wasm, created_at, activated_at, retired_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`,
  );
  for (const [row, state] of [
    [await legacyRow(0x10, honest), "active"],
    [await legacyRow(0x11, lying), "accepted"],
  ] as const) {
    insert.run(row.id, state, row.vk, row.vkHash, row.zkeySha256, row.wasmSha256, row.transcript, row.zkey, row.wasm, row.createdAt);
  }
  old.close();

  const node = await startNode(path, 1, { LOG_LEVEL: "error" });
  try {
    const list = (await (await fetch(`${node.url}/v1/circuits`)).json()) as { circuits: { id: string }[] };
    const ids = list.circuits.map((c) => c.id).filter((id) => id.startsWith("agent_identity-0"));
    expect(ids).toEqual(["agent_identity-0000000000000010"]);
    const refused = await fetch(`${node.url}/v1/circuits/agent_identity-0000000000000011/transcript`);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: string }).error).toBe("Circuit not served");
  } finally {
    await node.stop();
  }
});
