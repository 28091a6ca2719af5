// The budget race for the multi-node suites: 30 valid proofs of 20.00 EUR,
// submitted at once over every node, for an agent whose mandate allows
// 100.00 EUR a day. Exactly 5 may verify, whatever the interleaving. The 30
// proofs are real and made once per test file (≈0.3 s each).
import { expect } from "bun:test";
import { prove } from "../../src/agent";
import { identity } from "../support/proofs";
import { call, newKey, type Node, type Reply } from "./nodes";

export const RACE = { proofs: 30, amount: "20.00", maxTotal: "100.00", expectedVerified: 5 } as const;

export interface RaceResult {
  replies: Reply[];
  spend: Reply;
}

export async function budgetRace(nodes: Node[], databaseUrl: string, label: string): Promise<RaceResult> {
  const { key } = await newKey(databaseUrl);
  const agent = await identity(label);
  const agentId = `budget-${label}`;
  const mandate = { limits: [{ action: "purchase", currency: "EUR", max_total: RACE.maxTotal, period: "day" }] };
  const registered = await call(nodes[0]!, "POST", "/v1/agents", key, { agent_id: agentId, identity_commitment: agent.identity_commitment, mandate });
  expect(registered.status).toBe(201);

  const context = { amount: RACE.amount, currency: "EUR", merchant: "shop-a" };
  const submissions: { challenge_id: string; proof: string }[] = [];
  for (let i = 0; i < RACE.proofs; i++) {
    const created = await call(nodes[i % nodes.length]!, "POST", "/v1/verify/challenge", key, { agent_id: agentId, action: "purchase", context });
    expect(created.status).toBe(200);
    const proof = await prove({ secret: agent.secret, nonce: created.body.nonce, action: "purchase", context });
    submissions.push({ challenge_id: created.body.challenge_id, proof });
  }
  // All at once, round-robin over the nodes (and, behind one port, its workers).
  const replies = await Promise.all(submissions.map((body, i) => call(nodes[i % nodes.length]!, "POST", "/v1/verify/proof", key, body)));
  const spend = await call(nodes[nodes.length - 1]!, "GET", `/v1/agents/${agentId}`, key);
  return { replies, spend };
}

export function expectExactBudget({ replies, spend }: RaceResult): void {
  const verified = replies.filter((r) => r.status === 200 && r.body.verified === true);
  const refused = replies.filter((r) => r.status === 400 && r.body.reason === "mandate_violation" && r.body.detail === "max_total");
  expect(verified).toHaveLength(RACE.expectedVerified);
  expect(refused).toHaveLength(RACE.proofs - RACE.expectedVerified);
  expect(spend.status).toBe(200);
  expect(spend.body.spend).toMatchObject([{ total: RACE.maxTotal, count: RACE.expectedVerified }]);
}
