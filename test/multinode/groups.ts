// The group scenario for the multi-node suites (issue 24), on real service
// processes sharing one database: per-pseudonym budgets exact under
// concurrent submissions spread over every node, and a removal acknowledged
// by one node refusing the removed member at once on the others. The proofs
// come from a stock Semaphore v4 client (one node process per run).
import { expect } from "bun:test";
import { Identity } from "@semaphore-protocol/identity";
import { jobFor, stockProofs } from "../support/semaphore";
import { call, newKey, type Node } from "./nodes";

/** 6 proofs of one member at 20.00 EUR against max_total 40.00: exactly 2 verify, whatever the interleaving (each stock proof costs ~1 s under node). */
export const GROUP_RACE = { proofs: 6, amount: "20.00", maxTotal: "40.00", expectedVerified: 2 } as const;

export async function groupScenario(nodes: Node[], databaseUrl: string, label: string): Promise<void> {
  const { key } = await newKey(databaseUrl);
  const seeds = [`${label}-a`, `${label}-b`, `${label}-c`];
  const members = seeds.map((seed) => new Identity(seed).commitment.toString());
  const groupId = `group-${label}`;
  const mandate = { limits: [{ action: "purchase", currency: "EUR", max_total: GROUP_RACE.maxTotal, period: "day" }] };
  expect((await call(nodes[0]!, "POST", "/v1/groups", key, { group_id: groupId, mandate })).status).toBe(201);
  // Members added on the last node: its cache, not the first's, holds the tree.
  expect((await call(nodes[nodes.length - 1]!, "POST", `/v1/groups/${groupId}/members`, key, { identity_commitments: members })).status).toBe(201);

  const context = { amount: GROUP_RACE.amount, currency: "EUR", merchant: "shop-a" };
  const challenge = async (i: number) => {
    const created = await call(nodes[i % nodes.length]!, "POST", "/v1/verify/challenge", key, { group_id: groupId, action: "purchase", context });
    expect(created.status).toBe(200);
    return created.body;
  };
  const race = [];
  for (let i = 0; i < GROUP_RACE.proofs; i++) race.push(await challenge(i));
  const other = await challenge(0);
  const removed = [await challenge(1), await challenge(2)];
  const proofs = await stockProofs([
    ...race.map((c) => jobFor(seeds[0]!, c, members)),
    jobFor(seeds[1]!, other, members),
    ...removed.map((c) => jobFor(seeds[2]!, c, members)),
  ]);
  for (const p of proofs) expect(p.error).toBeUndefined();

  // The race: member a's proofs and member b's one, all at once, round-robin over the nodes.
  const submissions = [...race, other].map((c, i) => ({ challenge_id: c.challenge_id, proof: proofs[i]!.proof }));
  const replies = await Promise.all(submissions.map((body, i) => call(nodes[i % nodes.length]!, "POST", "/v1/verify/proof", key, body)));
  const mine = replies.slice(0, GROUP_RACE.proofs);
  expect(mine.filter((r) => r.status === 200 && r.body.verified === true)).toHaveLength(GROUP_RACE.expectedVerified);
  expect(mine.filter((r) => r.status === 400 && r.body.reason === "mandate_violation" && r.body.detail === "max_total")).toHaveLength(
    GROUP_RACE.proofs - GROUP_RACE.expectedVerified,
  );
  // Member b's own budget is untouched by a's.
  expect(replies[GROUP_RACE.proofs]).toMatchObject({ status: 200, body: { verified: true } });
  expect(replies[GROUP_RACE.proofs]!.body.pseudonym).not.toBe(proofs[0]!.proof.nullifier);
  expect(replies.every((r) => r.status < 500)).toBe(true);

  // Removal acknowledged by the first node; the member's proofs, made before it, are refused at once by the others.
  const removal = await call(nodes[0]!, "DELETE", `/v1/groups/${groupId}/members/${members[2]}`, key);
  expect(removal.status).toBe(200);
  for (const [i, c] of removed.entries()) {
    const node = nodes[(i + 1) % nodes.length]!;
    const reply = await call(node, "POST", "/v1/verify/proof", key, { challenge_id: c.challenge_id, proof: proofs[GROUP_RACE.proofs + 1 + i]!.proof });
    expect({ status: reply.status, reason: reply.body.reason }).toEqual({ status: 400, reason: "not_member" });
  }
}
