// `serve --workers 2` on one SQLite file: two worker processes behind one
// port (SO_REUSEPORT), each with its own connection. One-time use must hold
// through SQLite's file lock, not through any process's memory.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Group } from "@semaphore-protocol/group";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqlite } from "../../src/store/sqlite";
import { identity, proofFor } from "../support/proofs";
import { expectBoundedFlood } from "./flood";
import { groupScenario } from "./groups";
import { budgetRace, expectExactBudget } from "./mandates";
import { call, newKey, startNode, type Node } from "./nodes";

describe("serve --workers 2 on one SQLite file", () => {
  const dir = mkdtempSync(join(tmpdir(), "zkagent-multinode-"));
  const path = join(dir, "zkagent.db");
  let node: Node;

  beforeAll(async () => {
    node = await startNode(path, 2);
  }, 60_000); // a primary and two workers, allowed READY_TIMEOUT_MS

  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("the primary runs two worker processes", () => {
    const children = readFileSync(`/proc/${node.process.pid}/task/${node.process.pid}/children`, "utf8").trim().split(/\s+/);
    expect(children).toHaveLength(2);
  });

  test("50 concurrent valid submissions of one challenge: exactly one verified", async () => {
    const { key, id } = await newKey(path);
    const agent = await identity("multinode-sqlite");
    expect((await call(node, "POST", "/v1/agents", key, { agent_id: "agent-sq", identity_commitment: agent.identity_commitment })).status).toBe(201);
    const created = await call(node, "POST", "/v1/verify/challenge", key, { agent_id: "agent-sq", action: "login" });
    const proof = await proofFor({ secret: agent.secret, nonce: created.body.nonce, action: "login" });
    const replies = await Promise.all(
      Array.from({ length: 50 }, () => call(node, "POST", "/v1/verify/proof", key, { challenge_id: created.body.challenge_id, proof })),
    );
    expect(replies.filter((r) => r.status === 200 && r.body.verified === true)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 400 && r.body.error === "Challenge already used")).toHaveLength(49);
    const store = openSqlite(path);
    expect((await store.usage(id))!.verified).toBe(1);
    await store.close();
  });

  test("issue 24: a group member's 6 concurrent proofs over 2 workers against its per-pseudonym max_total 40.00: exactly 2 verified; a removal refuses the member at once", async () => {
    await groupScenario([node], path, "sqlite");
  }, 120_000);

  test("30 concurrent valid 20.00 EUR proofs over 2 workers against max_total 100.00: exactly 5 verified, 25 mandate_violation", async () => {
    expectExactBudget(await budgetRace([node], path, "sqlite"));
  }, 300_000);
});

describe("issue 18: two separate nodes on one SQLite file", () => {
  const dir = mkdtempSync(join(tmpdir(), "zkagent-multinode-flood-"));
  const path = join(dir, "zkagent.db");
  let nodes: Node[] = [];

  beforeAll(async () => {
    // Migrate once before the nodes start; each node is its own process with its own /metrics.
    await openSqlite(path).close();
    nodes = await Promise.all([0, 1].map(() => startNode(path)));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  test("one key's 80 concurrent, differently spelled wrong proofs for each of 3 challenges over 2 processes: at most 2 proof checks per challenge, each decided once, no 5xx", async () => {
    await expectBoundedFlood(nodes, path);
  }, 60_000);
});

describe("issue 37: one key's racing member additions over `serve --workers 2` on one SQLite file", () => {
  const dir = mkdtempSync(join(tmpdir(), "zkagent-multinode-additions-"));
  const path = join(dir, "zkagent.db");
  let node: Node;

  beforeAll(async () => {
    // Each worker takes all 20 at once (the per-key bound would otherwise refuse most before they race).
    node = await startNode(path, 2, { GROUP_ADDITIONS_IN_FLIGHT: "20", GROUP_ADDITIONS_IN_FLIGHT_TOTAL: "20" });
  }, 60_000);

  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("20 concurrent additions of 1,000 of one key into one group, 3 rounds: never a 500 (each 201, or 503 with Retry-After), and every 201 applied once", async () => {
    const { key } = await newKey(path);
    expect((await call(node, "POST", "/v1/groups", key, { group_id: "race" })).status).toBe(201);
    let next = 1;
    let applied = 0;
    const statuses: number[] = [];
    // Batches large enough that planning one (hashing, and replaying what the other worker added) takes longer than the other's commit.
    const BATCH = 1_000;
    for (let round = 0; round < 3; round++) {
      const batches = Array.from({ length: 20 }, () => Array.from({ length: BATCH }, () => String(1_000_003n * BigInt(next++))));
      const replies = await Promise.all(
        batches.map((batch) =>
          fetch(`${node.url}/v1/groups/race/members`, {
            method: "POST",
            headers: { "x-api-key": key, "content-type": "application/json" },
            body: JSON.stringify({ identity_commitments: batch }),
          }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get("retry-after"), body: await r.json() })),
        ),
      );
      for (const reply of replies) {
        statuses.push(reply.status);
        if (reply.status === 201) applied += BATCH;
        else
          expect({ status: reply.status, error: reply.body.error, retryAfter: reply.retryAfter !== null }).toEqual({
            status: 503,
            error: "Group busy",
            retryAfter: true,
          });
      }
    }
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(0);
    const group = await call(node, "GET", "/v1/groups/race", key);
    expect(group.body.size).toBe(applied);
    // The stored leaves are exactly the applied batches' (no partial batch), in the tree the root says.
    const members: string[] = [];
    for (let offset: number | null = 0; offset !== null; ) {
      const page = await call(node, "GET", `/v1/groups/race/members?offset=${offset}`, key);
      members.push(...page.body.members);
      offset = page.body.next_offset;
    }
    expect(members).toHaveLength(applied);
    expect(new Set(members).size).toBe(applied);
    expect(new Group(members.map(BigInt)).root.toString()).toBe(group.body.merkle_tree_root);
  }, 180_000);
});
