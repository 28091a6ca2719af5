// Concurrent spends of one note across real service processes (issue 40):
// a member's first spend of a day proved for several challenges (each a
// valid proof revealing the same nullifier), submitted at once over two
// processes on one SQLite file and over two PostgreSQL nodes: exactly one
// is verified, the others are already_spent, and the group's notes grow by
// exactly one; each node's checkpointer runs, and they record the grown
// notes under one sequence. The proofs are the project's prover's, made in
// this process.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { H1 } from "../../src/budgets/hash";
import { openStore } from "../../src/store";
import { openSqlite } from "../../src/store/sqlite";
import { proveSpend } from "../support/budget-member";
import { postgresTestUrl } from "../support/postgres";
import { call, newKey, type Node, nodesOnPostgres, startNode } from "./nodes";

setDefaultTimeout(300_000);

const SHOP = "https://shop-a.example";
const RACERS = 3;

async function spendRace(nodes: Node[], databaseUrl: string, label: string): Promise<void> {
  const owner = await newKey(databaseUrl);
  const shop = await newKey(databaseUrl);
  const store = await openStore(databaseUrl);
  try {
    await store.setOrigins(shop.id, [SHOP]);
  } finally {
    await store.close();
  }
  const groupId = `wallet-${label}`;
  expect((await call(nodes[0]!, "POST", "/v1/groups", owner.key, { group_id: groupId, budget: true })).status).toBe(201);
  const secret = 0xabcdef_0123n;
  const enrolled = await call(nodes[nodes.length - 1]!, "POST", `/v1/groups/${groupId}/enrolments`, owner.key, {
    identity_commitment: H1(secret).toString(),
    mandate: { limits: [{ currency: "EUR", max_amount: "30.00", max_total: "100.00", period: "day" }], valid_until: "2099-01-01T00:00:00Z" },
  });
  expect(enrolled.status).toBe(201);
  const leaves = (await call(nodes[0]!, "GET", `/v1/groups/${groupId}/members`, owner.key)).body.members.map(BigInt);
  const challenges: any[] = [];
  for (let i = 0; i < RACERS; i++) {
    const c = await call(nodes[i % nodes.length]!, "POST", "/v1/verify/challenge", shop.key, {
      group_id: groupId,
      action: "purchase",
      context: { amount: `${10 + i}.00`, currency: "EUR" },
    });
    expect(c.status).toBe(200);
    challenges.push(c.body);
  }
  const proofs: Awaited<ReturnType<typeof proveSpend>>[] = [];
  for (const c of challenges) proofs.push(await proveSpend({ member: { secret, enrolment: enrolled.body }, challenge: c, leaves }));
  expect(new Set(proofs.map((p) => p.nullifier)).size).toBe(1);

  const replies = await Promise.all(
    challenges.map((c, i) =>
      call(nodes[(i + 1) % nodes.length]!, "POST", "/v1/verify/proof", shop.key, { challenge_id: c.challenge_id, proof: proofs[i]!.proof }),
    ),
  );
  expect(replies.every((r) => r.status < 500)).toBe(true);
  expect(replies.filter((r) => r.status === 200 && r.body.verified === true)).toHaveLength(1);
  expect(replies.filter((r) => r.status === 400 && r.body.reason === "already_spent")).toHaveLength(RACERS - 1);
  const feed = await call(nodes[1 % nodes.length]!, "GET", `/v1/groups/${groupId}/notes`, owner.key);
  expect(feed.body.size).toBe(2);
  const winner = replies.findIndex((r) => r.status === 200);
  expect(feed.body.notes).toEqual([proofs[winner]!.proof.commitment]);
  // The nodes' checkpointers (BUDGET_CHECKPOINT_S=1 here) record the grown notes once: sequence 1, size 2, whichever node took it.
  const deadline = Date.now() + 15_000;
  let checkpoints: { sequence: number; size: number }[] = [];
  while (Date.now() < deadline) {
    checkpoints = (await call(nodes[0]!, "GET", `/v1/groups/${groupId}/notes`, owner.key)).body.checkpoints;
    if (checkpoints.length > 1) break;
    await Bun.sleep(200);
  }
  await Bun.sleep(2_500); // two more ticks of every node: nothing grew, nothing is added
  checkpoints = (await call(nodes[0]!, "GET", `/v1/groups/${groupId}/notes`, owner.key)).body.checkpoints;
  expect(checkpoints.map(({ sequence, size }) => ({ sequence, size }))).toEqual([
    { sequence: 0, size: 1 },
    { sequence: 1, size: 2 },
  ]);
}

const FAST_CHECKPOINTS = { BUDGET_CHECKPOINT_S: "1" };

describe("budget spends: two processes on one SQLite file", () => {
  const dir = mkdtempSync(join(tmpdir(), "zkagent-multinode-budgets-"));
  const path = join(dir, "zkagent.db");
  let nodes: Node[] = [];

  beforeAll(async () => {
    await openSqlite(path).close();
    nodes = await Promise.all([0, 1].map(() => startNode(path, 1, FAST_CHECKPOINTS)));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  test(`${RACERS} valid spends of one note over 2 processes: exactly one verified, the rest already_spent, the notes grow by one`, async () => {
    await spendRace(nodes, path, "sqlite");
  });
});

describe("budget spends: two nodes on one PostgreSQL", async () => {
  const pg = nodesOnPostgres(await postgresTestUrl(), 2, FAST_CHECKPOINTS);

  test(`${RACERS} valid spends of one note over 2 nodes: exactly one verified, the rest already_spent, the notes grow by one`, async () => {
    await spendRace(pg.nodes, pg.database.url, "pg");
  });
});
