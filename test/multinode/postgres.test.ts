// Three real service processes sharing one PostgreSQL: what one node writes,
// the others honour — one-time use, rate limits, counters — and a node killed
// with SIGKILL under load loses nothing it acknowledged.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { postgresTestUrl } from "../support/postgres";
import { identity, proofFor } from "../support/proofs";
import { expectBoundedFlood } from "./flood";
import { groupScenario } from "./groups";
import { budgetRace, expectExactBudget } from "./mandates";
import { call, newKey, type Node, nodesOnPostgres } from "./nodes";

// Every test here starts processes; on a loaded two-core machine (CI, or
// several developers at once) that passed bun's 5 s default with nothing wrong.
setDefaultTimeout(30_000);

const serverUrl = await postgresTestUrl();

describe("three nodes on one PostgreSQL", () => {
  const pg = nodesOnPostgres(serverUrl, 3);

  async function registeredAgent(key: string, agentId: string) {
    const agent = await identity("multinode");
    const registered = await call(pg.nodes[0]!, "POST", "/v1/agents", key, { agent_id: agentId, identity_commitment: agent.identity_commitment });
    expect(registered.status).toBe(201);
    return agent;
  }

  test("a challenge created on A, proved and submitted on B, reads as verified on C", async () => {
    const { key } = await newKey(pg.database.url);
    const agent = await registeredAgent(key, "agent-abc");
    const created = await call(pg.nodes[0]!, "POST", "/v1/verify/challenge", key, { agent_id: "agent-abc", action: "purchase", context: { amount: 20 } });
    expect(created.status).toBe(200);
    const proof = await proofFor({ secret: agent.secret, nonce: created.body.nonce, action: "purchase", context: { amount: 20 } });
    const submitted = await call(pg.nodes[1]!, "POST", "/v1/verify/proof", key, { challenge_id: created.body.challenge_id, proof });
    expect(submitted.status).toBe(200);
    expect(submitted.body.verified).toBe(true);
    const read = await call(pg.nodes[2]!, "GET", `/v1/verify/status/${created.body.challenge_id}`, key);
    expect(read.status).toBe(200);
    expect(read.body.status).toBe("verified");
  });

  test("issue 24: a group member's 6 concurrent 20.00 EUR proofs over 3 nodes against its per-pseudonym max_total 40.00: exactly 2 verified; a removal on one node refuses the member at once on the others", async () => {
    await groupScenario(pg.nodes, pg.database.url, "pg");
  }, 120_000);

  test("50 concurrent valid submissions of one challenge over 3 nodes: exactly one verified", async () => {
    const { key, id } = await newKey(pg.database.url);
    const agent = await registeredAgent(key, "agent-race");
    const created = await call(pg.nodes[0]!, "POST", "/v1/verify/challenge", key, { agent_id: "agent-race", action: "login" });
    const proof = await proofFor({ secret: agent.secret, nonce: created.body.nonce, action: "login" });
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call(pg.nodes[i % 3]!, "POST", "/v1/verify/proof", key, { challenge_id: created.body.challenge_id, proof })),
    );
    const verified = replies.filter((r) => r.status === 200);
    const used = replies.filter((r) => r.status === 400 && r.body.error === "Challenge already used");
    expect(verified).toHaveLength(1);
    expect(verified[0]!.body.verified).toBe(true);
    expect(used).toHaveLength(49);
    for (const reply of used) expect(reply.body.previous_status).toBe("verified");
    expect((await pg.store.usage(id))!.verified).toBe(1);
  });

  test("issue 18: one key's 80 concurrent, differently spelled wrong proofs for each of 3 challenges over 3 nodes: at most 2 proof checks per challenge, each decided once, no 5xx", async () => {
    await expectBoundedFlood(pg.nodes, pg.database.url);
  });

  test("a rate limit of 10/min holds across nodes: 30 requests spread → exactly 10 succeed", async () => {
    const { key, id } = await newKey(pg.database.url, 10);
    // The limit is per fixed minute: do not straddle a window boundary.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await Bun.sleep(60_000 - intoMinute + 100);
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call(pg.nodes[i % 3]!, "POST", "/v1/verify/challenge", key, { agent_id: "agent-rl", action: "login" })),
    );
    expect(replies.filter((r) => r.status === 200)).toHaveLength(10);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(20);
    expect((await pg.store.usage(id))!.challenges).toBe(10);
  });

  test("30 concurrent valid 20.00 EUR proofs over 3 nodes against max_total 100.00: exactly 5 verified, 25 mandate_violation", async () => {
    expectExactBudget(await budgetRace(pg.nodes, pg.database.url, "pg"));
  }, 300_000);

  test("a node killed with SIGKILL mid-load loses nothing it acknowledged", async () => {
    const { key, id } = await newKey(pg.database.url);
    const victim = pg.nodes[1]!;
    const acknowledged: { challenge_id: string; nonce: string }[] = [];
    let unanswered = 0; // requests cut by the kill: committed or not, never acknowledged
    let running = true;
    const loop = async (node: Node) => {
      while (running) {
        try {
          const reply = await call(node, "POST", "/v1/verify/challenge", key, { agent_id: "agent-kill", action: "load" });
          expect(reply.status).toBe(200);
          acknowledged.push(reply.body);
        } catch {
          unanswered++;
          if (node === victim) return;
        }
      }
    };
    const loops = pg.nodes.flatMap((node) => Array.from({ length: 8 }, () => loop(node)));
    await Bun.sleep(400);
    victim.process.kill("SIGKILL");
    await Bun.sleep(400);
    running = false;
    await Promise.all(loops);

    expect(acknowledged.length).toBeGreaterThan(50);
    for (const ack of acknowledged) {
      const stored = await pg.store.getChallenge(ack.challenge_id);
      expect(stored?.nonce).toBe(ack.nonce);
    }
    const usage = (await pg.store.usage(id))!.challenges;
    const rows = await pg.store.countPending(Date.now(), id);
    // Counter and row are written in one transaction: they always agree.
    expect(rows).toBe(usage);
    // Every acknowledged creation is counted; a request the kill cut may
    // have committed just before it, unacknowledged but not lost.
    expect(usage).toBeGreaterThanOrEqual(acknowledged.length);
    expect(usage - acknowledged.length).toBeLessThanOrEqual(unanswered);
  });
});
