// Group challenges answered by a stock Semaphore v4 client (issue 24):
// @semaphore-protocol/proof under node, its artifacts from the pinned
// package, verified here by the service's own WebAssembly verifier. Every
// refusal is a 4xx with its reason, and nothing is answered with a 5xx.
// Pseudonyms: one per member per platform key. Budgets: the group's mandate
// per pseudonym. Roots: adding members keeps a proof in flight valid; a
// removal refuses the removed member at once.
import { beforeAll, describe, expect, test } from "bun:test";
import { Identity } from "@semaphore-protocol/identity";
import { decodeProtectedHeader } from "jose";
import { eventPayload } from "../../src/webhooks/events";
import { createHarness, type Harness } from "../support/harness";
import { type StockJob as Job, type StockResult, stockProofs } from "../support/semaphore";

const claimsOf = (jws: string) => JSON.parse(Buffer.from(jws.split(".")[1]!, "base64url").toString());
const CONTEXT = { amount: "20.00", currency: "EUR", merchant: "shop-a" };
const MANDATE = { limits: [{ action: "purchase", currency: "EUR", max_total: "30.00", period: "day" }] };

let h: Harness;
let platformA: string;
let platformB: string;
const statuses: number[] = [];
const seed = (i: number) => `member-${i}`;
const member = (i: number) => new Identity(seed(i));
const members = [1, 2, 3, 4].map((i) => member(i).commitment.toString());
const outsider = new Identity("outsider");

async function call(method: string, path: string, options: { key?: string; body?: unknown } = {}) {
  const response = await h.call(method, path, options);
  statuses.push(response.status);
  return response;
}
const challenge = async (key: string, body: Record<string, unknown> = {}) =>
  (await call("POST", "/v1/verify/challenge", { key, body: { group_id: "household", action: "purchase", context: CONTEXT, ...body } })).body;
const submit = (key: string, challengeId: string, proof: unknown) => call("POST", "/v1/verify/proof", { key, body: { challenge_id: challengeId, proof } });

const job = (who: string, c: any, overrides: Partial<Job> = {}): Job => ({
  privateKey: who,
  members,
  message: c.message,
  scope: c.scope,
  depth: c.merkle_tree_depth,
  ...overrides,
});

const c: Record<string, any> = {};
let proofs: StockResult[];

beforeAll(async () => {
  h = await createHarness();
  platformA = await h.newKey("platform-a");
  platformB = await h.newKey("platform-b");
  await call("POST", "/v1/groups", { key: platformA, body: { group_id: "household", mandate: MANDATE } });
  await call("POST", "/v1/groups/household/members", { key: platformA, body: { identity_commitments: members } });
  for (const name of ["first", "second", "other", "scope", "message", "outsider", "stale", "added", "tampered", "malformed", "stranger"])
    c[name] = await challenge(platformA);
  c.platformB = await challenge(platformB);
  // Identities are deterministic from their seeds (the client builds the same ones under node).
  proofs = await stockProofs([
    job(seed(1), c.first, { verify: true }),
    job(seed(1), c.second),
    job(seed(2), c.other),
    job(seed(1), c.platformB),
    job(seed(3), c.scope, { scope: c.platformB.scope }),
    job(seed(3), c.message, { message: "42" }),
    job("outsider", c.outsider, { members: [outsider.commitment.toString(), ...members.slice(1)] }),
    job(seed(4), c.stale),
    job(seed(3), c.added),
    job(seed(2), c.tampered),
  ]);
  for (const p of proofs) expect(p.error).toBeUndefined();
}, 120_000);

describe("group challenges with a stock Semaphore v4 client", () => {
  test("the challenge names the group's root and depth, the message, the scope and the depth's Semaphore circuit", async () => {
    const group = (await call("GET", "/v1/groups/household", { key: platformB })).body;
    expect(c.first).toMatchObject({ group_id: "household", merkle_tree_root: group.merkle_tree_root, merkle_tree_depth: 2, anonymity_warning: null });
    expect(c.first.circuit_id).toMatch(/^semaphore_v4_d2-[0-9a-f]{16}$/);
    expect(c.first.message).not.toBe(c.second.message);
    expect(c.first.scope).toBe(c.second.scope);
    expect(c.platformB.scope).not.toBe(c.first.scope);
    // The circuit is served, its files hashed as pinned.
    const circuit = await call("GET", `/v1/circuits/${c.first.circuit_id}`);
    expect(circuit.status).toBe(200);
    expect(circuit.body.setup).toBe("semaphore");
  });

  test("a member's proof verifies here and with the stock verifyProof; the receipt names the pseudonym, never a commitment", async () => {
    expect(proofs[0]!.stockVerified).toBe(true);
    const response = await submit(platformA, c.first.challenge_id, proofs[0]!.proof);
    expect(response.status).toBe(200);
    const pseudonym = proofs[0]!.proof.nullifier;
    expect(response.body).toMatchObject({ verified: true, agent_id: pseudonym, pseudonym, group_id: "household", action: "purchase", confidence: 0.99 });
    const claims = claimsOf(response.body.receipt);
    expect(decodeProtectedHeader(response.body.receipt).typ).toBe("zkagent-receipt+jwt");
    expect(claims.sub).toBe(pseudonym);
    expect(claims.identity_commitment).toBeNull();
    expect(claims.group).toEqual({ id: "household", root: c.first.merkle_tree_root, pseudonym });
    expect(claims.circuit.id).toBe(c.first.circuit_id);
    for (const commitment of members) expect(response.body.receipt.includes(commitment)).toBe(false);
    expect(JSON.stringify(claims)).not.toContain(members[0]!);
    const status = await call("GET", `/v1/verify/status/${c.first.challenge_id}`, { key: platformA });
    expect(status.body).toMatchObject({ status: "verified", agent_id: pseudonym, pseudonym, group_id: "household" });
    // The webhook event of this decision (the body the delivery worker sends) names the subject as the status does
    // (it had agent_id "" and neither field), carries the bound order, and no commitment.
    const event = eventPayload("session.verified", (await h.store.getChallenge(c.first.challenge_id))!, response.body.receipt);
    expect(event.data).toMatchObject({ agent_id: pseudonym, pseudonym, group_id: "household", context: CONTEXT, amount: "20.00", currency: "EUR" });
    for (const commitment of members) expect(JSON.stringify(event)).not.toContain(commitment);
  });

  test("the same member at the same platform has the same pseudonym and the same budget; another member has its own", async () => {
    const second = await submit(platformA, c.second.challenge_id, proofs[1]!.proof);
    expect(second.status).toBe(400);
    expect(second.body).toMatchObject({ reason: "mandate_violation", detail: "max_total" });
    expect(proofs[1]!.proof.nullifier).toBe(proofs[0]!.proof.nullifier);
    const status = await call("GET", `/v1/verify/status/${c.second.challenge_id}`, { key: platformA });
    expect(status.body).toMatchObject({ status: "failed", pseudonym: proofs[0]!.proof.nullifier, reason: "mandate_violation" });
    const other = await submit(platformA, c.other.challenge_id, proofs[2]!.proof);
    expect(other.status).toBe(200);
    expect(other.body.pseudonym).not.toBe(proofs[0]!.proof.nullifier);
  });

  test("at another platform the same member has an unrelated pseudonym (and a budget of its own)", async () => {
    const response = await submit(platformB, c.platformB.challenge_id, proofs[3]!.proof);
    expect(response.status).toBe(200);
    expect(response.body.pseudonym).not.toBe(proofs[0]!.proof.nullifier);
  });

  test("refusals: replay, another challenge's proof, another scope, another message, a non-member's tree, malformed and tampered proofs", async () => {
    const replay = await submit(platformA, c.first.challenge_id, proofs[0]!.proof);
    expect(replay.status).toBe(400);
    expect(replay.body).toMatchObject({ error: "Challenge already used", previous_status: "verified" });
    const cases: [string, unknown, string][] = [
      ["stranger", proofs[0]!.proof, "message_mismatch"],
      ["scope", proofs[4]!.proof, "scope_mismatch"],
      ["message", proofs[5]!.proof, "message_mismatch"],
      ["outsider", proofs[6]!.proof, "not_member"],
      ["malformed", { ...proofs[9]!.proof, points: "not points" }, "invalid_proof_format"],
      ["tampered", { ...proofs[9]!.proof, nullifier: proofs[0]!.proof.nullifier }, "proof_rejected"],
    ];
    for (const [name, proof, reason] of cases) {
      const response = await submit(platformA, c[name].challenge_id, proof);
      expect({ name, status: response.status, error: response.body.error, reason: response.body.reason }).toEqual({
        name,
        status: 400,
        error: "Proof verification failed",
        reason,
      });
    }
    // Another key's challenge is not this key's to answer.
    expect((await submit(platformB, c.added.challenge_id, proofs[8]!.proof)).status).toBe(403);
  });

  test("members added meanwhile keep a proof in flight valid; a removal refuses the removed member at once", async () => {
    const added = await call("POST", "/v1/groups/household/members", {
      key: platformA,
      body: { identity_commitments: [new Identity("newcomer").commitment.toString()] },
    });
    expect(added.status).toBe(201);
    const inFlight = await submit(platformA, c.added.challenge_id, proofs[8]!.proof);
    expect(inFlight.status).toBe(200);
    const removed = await call("DELETE", `/v1/groups/household/members/${members[3]}`, { key: platformA });
    expect(removed.status).toBe(200);
    const stale = await submit(platformA, c.stale.challenge_id, proofs[7]!.proof);
    expect(stale.status).toBe(400);
    expect(stale.body.reason).toBe("not_member");
  });

  test("exactly one of agent_id and group_id; unknown and empty groups", async () => {
    const both = await call("POST", "/v1/verify/challenge", { key: platformA, body: { agent_id: "a", group_id: "household", action: "purchase" } });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe("Invalid field agent_id: exactly one of agent_id and group_id may be given");
    expect(both.body.message).toBeUndefined();
    const neither = await call("POST", "/v1/verify/challenge", { key: platformA, body: { action: "purchase" } });
    expect(neither.status).toBe(400);
    // Neither: the seed contract's answer, whole (a body without group_id is an agent challenge).
    expect(neither.body).toEqual({ error: "Missing required fields: agent_id" });
    // Both null is neither; with the action missing too, both fields are named.
    const nulls = await call("POST", "/v1/verify/challenge", { key: platformA, body: { agent_id: null, group_id: null } });
    expect(nulls.status).toBe(400);
    expect(nulls.body).toEqual({ error: "Missing required fields: agent_id, action" });
    // An agent challenge missing only its action: the agent_id was given, no hint about groups.
    const noAction = await call("POST", "/v1/verify/challenge", { key: platformA, body: { agent_id: "a" } });
    expect(noAction.body).toMatchObject({ error: "Missing required fields: action" });
    expect(noAction.body.message).toBeUndefined();
    expect((await call("POST", "/v1/verify/challenge", { key: platformA, body: { group_id: "nope", action: "purchase" } })).body.error).toBe("Group not found");
    await call("POST", "/v1/groups", { key: platformA, body: { group_id: "empty" } });
    const empty = await call("POST", "/v1/verify/challenge", { key: platformA, body: { group_id: "empty", action: "purchase" } });
    expect(empty.status).toBe(409);
  });

  test("no answer was a 5xx", () => {
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
  });
});
