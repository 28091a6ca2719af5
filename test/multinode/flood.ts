// Issue 18: one key's flood of concurrent, differently spelled wrong proofs
// for its own pending challenges, spread over several real processes that
// share one database. Shared by the PostgreSQL and SQLite multi-node suites.
import { expect } from "bun:test";
import { openStore } from "../../src/store";
import { sampleProof } from "../support/proofs";
import { call, newKey, type Node } from "./nodes";

/** A series' value summed over the nodes' /metrics (0 where absent). */
async function summed(nodes: Node[], series: string): Promise<number> {
  let total = 0;
  for (const node of nodes) {
    const text = await (await fetch(`${node.url}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    total += line ? Number(line.split(" ").pop()) : 0;
  }
  return total;
}

/**
 * 80 concurrent submissions of one wrong proof, spelled 80 ways, for each of 3
 * challenges, round-robin over the nodes; then what the contract requires:
 * no 5xx, at most 2 proof checks per challenge (from /metrics), each decided
 * exactly once, every other submission `Challenge already used`.
 */
export async function expectBoundedFlood(nodes: Node[], databaseUrl: string): Promise<void> {
  const { key, id } = await newKey(databaseUrl);
  const sample = await sampleProof();
  const registered = await call(nodes[0]!, "POST", "/v1/agents", key, { agent_id: "agent-flood", identity_commitment: sample.identity.identity_commitment });
  expect(registered.status).toBe(201);
  const challenges = await Promise.all(
    [0, 1, 2].map(() => call(nodes[0]!, "POST", "/v1/verify/challenge", key, { agent_id: "agent-flood", action: "purchase" })),
  );
  // The sample statement's proof, for another nonce: well-formed and wrong; spelled 80 ways.
  const parsed = JSON.parse(sample.proof);
  const spelled = Array.from({ length: 80 }, (_, i) => `${JSON.stringify(parsed, null, i % 5)}${" ".repeat(i >> 2)}`);
  // The proofs every verifier ran (a series older releases have too), before and after.
  const ranBefore = await summed(nodes, "zkagent_verification_batch_size_sum");
  const replies = await Promise.all(
    challenges.flatMap((c, j) =>
      spelled.map((proof, i) => call(nodes[(i + j) % nodes.length]!, "POST", "/v1/verify/proof", key, { challenge_id: c.body.challenge_id, proof })),
    ),
  );
  expect(replies.filter((r) => r.status >= 500)).toHaveLength(0);
  const ran = (await summed(nodes, "zkagent_verification_batch_size_sum")) - ranBefore;
  expect(ran).toBeLessThanOrEqual(2 * 3);
  expect(await summed(nodes, `zkagent_proof_checks_total{key_id="${id}"}`)).toBe(ran);
  const store = await openStore(databaseUrl);
  try {
    for (const [j, c] of challenges.entries()) {
      const mine = replies.slice(j * 80, (j + 1) * 80);
      expect(mine.filter((r) => r.body.error === "Proof verification failed")).toHaveLength(1);
      const used = mine.filter((r) => r.body.error === "Challenge already used");
      expect(used).toHaveLength(79);
      // The decided status, or `pending` from a node whose bounded wait ran out first (docs/api.md, Decisions).
      for (const r of used) expect(["failed", "pending"]).toContain(r.body.previous_status);
      expect((await store.getChallenge(c.body.challenge_id))?.status).toBe("failed");
    }
    expect((await store.usage(id))!.failed).toBe(3);
    expect((await store.listAudit({ keyId: id, limit: 100 })).filter((e) => e.event === "verification.decided")).toHaveLength(3);
  } finally {
    await store.close();
  }
}
