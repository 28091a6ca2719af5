// Budget spends over HTTP with real proofs (issue 40, docs/api.md "Budget
// spends"): members enrolled through the real route, challenges from the
// service, proofs from the project's prover built with src/budgets/ from
// what the service answered (test/support/budget-member.ts). Each proof
// takes seconds, so each is made once and reused: an accepted spend; its
// replay; the same proof to another challenge; a re-randomised copy; a
// later spend from the note the first left; a stale notes root; a one-time
// mandate's two first spends at once; a revoked member's spend.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { SDJwtVcInstance } from "@sd-jwt/sd-jwt-vc";
import { decodeJwt } from "jose";
import { enrolmentNonce } from "../../src/budgets/encoding";
import { NotesCheckpointer } from "../../src/budgets/checkpoints";
import { H1 } from "../../src/budgets/hash";
import { BUDGET_VK } from "../../src/circuits/budget";
import { ManualClock } from "../../src/clock";
import { Groth16Verifier } from "../../src/verifier";
import { eventPayload } from "../../src/webhooks/events";
import { spendPublicSignals } from "../../src/budgets/statement";
import { type Member, proveSpend, publicOf, rerandomised } from "../support/budget-member";
import { createHarness, type Harness } from "../support/harness";
import { hasher, keyPair, saltGenerator, signerOf } from "../support/sd-jwt";

// Proofs of 16,031 constraints on a loaded two-core machine.
setDefaultTimeout(300_000);

const NOW = Date.UTC(2026, 10, 28, 12, 30);
const SHOP_A = "https://shop-a.example";
const keyIdOf = (key: string) => key.split("_")[1]!;
const dayMandate = (merchants: string[]) => ({
  limits: [{ currency: "EUR", max_amount: "30.00", max_total: "100.00", period: "day" }],
  merchants,
  valid_until: "2027-06-01T00:00:00Z",
});

/** An AP2 open payment mandate without agent_recurrence: one-time (docs/protocol.md). */
async function oneTimeMandate(groupId: string, idc: bigint) {
  const [principal, agent] = await Promise.all([keyPair(), keyPair()]);
  const nowS = NOW / 1000;
  const instance = new SDJwtVcInstance({
    hasher,
    hashAlg: "sha-256",
    saltGenerator,
    signer: signerOf(principal.privateKey),
    signAlg: "ES256",
    kbSigner: signerOf(agent.privateKey),
    kbSignAlg: "ES256",
  });
  const issued = await instance.issue({
    iss: "https://bank.example",
    vct: "mandate.payment.open.1",
    constraints: [{ type: "payment.amount_range", currency: "EUR", max: 5000, min: 1 }],
    cnf: { jwk: agent.publicJwk },
    iat: nowS - 60,
    exp: nowS + 86_400 * 30,
  } as never);
  const sdjwt = await instance.present(issued, undefined, { kb: { payload: { iat: nowS, aud: "zkagent", nonce: enrolmentNonce(groupId, idc) } } });
  return { ap2_mandate: sdjwt, principal_keys: [principal.publicJwk] };
}

describe("budget spends over HTTP with real proofs (SQLite)", () => {
  let h: Harness;
  let owner: string;
  let shop: string;
  const members: Record<string, Member> = {};
  let leaves: bigint[];

  const challenge = async (amount: string) => {
    const res = await h.call("POST", "/v1/verify/challenge", {
      key: shop,
      body: { group_id: "wallet", action: "purchase", context: { amount, currency: "EUR", "@request": { origin: SHOP_A, method: "POST", path: "/buy" } } },
    });
    expect(res.status).toBe(200);
    return res.body;
  };
  const submit = (challengeId: string, proof: unknown) => h.call("POST", "/v1/verify/proof", { key: shop, body: { challenge_id: challengeId, proof } });
  const notesFeed = async () => (await h.call("GET", "/v1/groups/wallet/notes")).body;

  // Shared between the tests, in order: the first spend and what it left.
  let first: { challenge: any; proof: any; next: any };

  beforeAll(async () => {
    h = await createHarness(undefined, { clock: new ManualClock(NOW) });
    owner = await h.newKey("owner");
    shop = await h.newKey("shop-a");
    await h.store.setOrigins(keyIdOf(shop), [SHOP_A]);
    expect((await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "wallet", budget: true } })).status).toBe(201);
    for (const [name, seed] of [
      ["alice", 0x51n],
      ["bob", 0x52n],
      ["carol", 0x53n],
      ["dave", 0x54n],
    ] as const) {
      const secret = 0x1234_5678_9abc_def0_0000n + seed;
      const idc = H1(secret);
      const terms = name === "dave" ? await oneTimeMandate("wallet", idc) : { mandate: dayMandate([SHOP_A, "https://shop-b.example"]) };
      const enrolled = await h.call("POST", "/v1/groups/wallet/enrolments", { key: owner, body: { identity_commitment: idc.toString(), ...terms } });
      expect(enrolled.status).toBe(201);
      members[name] = { secret, enrolment: enrolled.body };
    }
    expect(members.dave!.enrolment.terms).toMatchObject({ one_time: true, period: null });
    leaves = (await h.call("GET", "/v1/groups/wallet/members")).body.members.map(BigInt);
  });

  test("a spend accepted end to end: verified, its nullifier the only subject; the receipt, the status and the notes name the spend and no member", async () => {
    const c = await challenge("20.00");
    const made = await proveSpend({ member: members.alice!, challenge: c, leaves });
    first = { challenge: c, proof: made.proof, next: made.next };
    const res = await submit(c.challenge_id, made.proof);
    expect(res.status).toBe(200);
    const spend = { nullifier: made.nullifier, commitment: made.proof.commitment, amount: "20.00", currency: "EUR", payee: SHOP_A };
    expect(res.body).toMatchObject({ verified: true, agent_id: made.nullifier, group_id: "wallet", spend, action: "purchase", confidence: 0.99 });
    expect(res.body.pseudonym).toBeUndefined();
    const claims = decodeJwt(res.body.receipt) as any;
    expect(claims).toMatchObject({ sub: made.nullifier, status: "verified", identity_commitment: null, spend });
    expect(claims.group).toBeUndefined();
    expect(claims.checks).toEqual([
      "challenge_owner",
      "challenge_unexpired",
      "challenge_pending",
      "proof",
      "group_root",
      "notes_root",
      "budget_period",
      "nullifier_unspent",
    ]);
    // No member is named anywhere: neither the leaf nor the identity commitment.
    const text = JSON.stringify([res.body, claims]);
    expect(text).not.toContain(members.alice!.enrolment.leaf);
    expect(text).not.toContain(members.alice!.enrolment.identity_commitment);
    const status = await h.call("GET", `/v1/verify/status/${c.challenge_id}`, { key: shop });
    expect(status.body).toMatchObject({ status: "verified", agent_id: made.nullifier, group_id: "wallet", spend });
    expect(await notesFeed()).toMatchObject({ size: 2, notes: [made.proof.commitment] });
    // The webhook event of the decision (built from the stored record, as the outbox worker does) names the spend the same way.
    const event = eventPayload("session.verified", (await h.store.getChallenge(c.challenge_id))!, res.body.receipt);
    expect(event.data).toMatchObject({ agent_id: made.nullifier, group_id: "wallet", spend, amount: "20.00", currency: "EUR" });
    expect(event.data.pseudonym).toBeUndefined();
  });

  test("the accepted proof again: Challenge already used; as JSON text to another challenge: proof_rejected (the challenge binds it)", async () => {
    const replay = await submit(first.challenge.challenge_id, first.proof);
    expect(replay).toMatchObject({ status: 400, body: { error: "Challenge already used", previous_status: "verified" } });
    const other = await challenge("20.00");
    const moved = await submit(other.challenge_id, JSON.stringify(first.proof));
    expect(moved).toMatchObject({ status: 400, body: { error: "Proof verification failed", reason: "proof_rejected" } });
    expect((await notesFeed()).size).toBe(2);
  });

  test("a re-randomised copy (other bytes, the same nullifier) verifies as Groth16 and is refused already_spent: uniqueness is the nullifier's, not the proof's", async () => {
    const copy = { ...first.proof, groth16: rerandomised(first.proof.groth16) };
    expect(JSON.stringify(copy.groth16)).not.toBe(JSON.stringify(first.proof.groth16));
    const signals = spendPublicSignals(
      BigInt(copy.nullifier),
      BigInt(copy.commitment),
      publicOf(first.challenge, BigInt(copy.enrolment_root), BigInt(copy.notes_root)),
    );
    const verifier = await Groth16Verifier.fromVerificationKey(BUDGET_VK);
    expect(verifier.verify(copy.groth16, signals).ok).toBe(true);
    // The only challenge whose public values it proves is decided; a pending copy of that challenge stands for one the copy could be sent to.
    const original = (await h.store.getChallenge(first.challenge.challenge_id))!;
    const twin = {
      ...original,
      id: "ch_twin_of_the_first_spend00",
      status: "pending" as const,
      decidedAt: null,
      confidence: null,
      reason: null,
      evidence: null,
      receipt: null,
    };
    expect((await h.store.createChallenge(twin, { windowStart: 0, limit: 0 })).created).toBe(true);
    const res = await submit(twin.id, copy);
    expect(res).toMatchObject({ status: 400, body: { reason: "already_spent" } });
    expect((await notesFeed()).size).toBe(2);
    // An agent_signature has nothing to be checked against in a spend: refused after the proof, before anything is consumed.
    const signed = { ...twin, id: "ch_twin_signed_spend_000000" };
    expect((await h.store.createChallenge(signed, { windowStart: 0, limit: 0 })).created).toBe(true);
    const withSignature = await h.call("POST", "/v1/verify/proof", { key: shop, body: { challenge_id: signed.id, proof: copy, agent_signature: "AAAA" } });
    expect(withSignature).toMatchObject({ status: 400, body: { reason: "signature_not_verifiable" } });
  });

  test("a later spend from the note the first left, once a checkpoint holds it; the notes grow by one", async () => {
    expect(await new NotesCheckpointer(h.store, () => h.clock.now()).tick()).toBe(1);
    const feed = await notesFeed();
    const checkpoint = feed.checkpoints.at(-1);
    expect(checkpoint.size).toBe(2);
    const c = await challenge("30.00");
    const made = await proveSpend({
      member: members.alice!,
      challenge: c,
      leaves,
      notes: { leaves: [BigInt(feed.checkpoints[0].root), ...feed.notes.map(BigInt)], note: first.next, index: 1 },
    });
    expect(made.proof.notes_root).toBe(checkpoint.root);
    const res = await submit(c.challenge_id, made.proof);
    expect(res.status).toBe(200);
    expect(res.body.spend.amount).toBe("30.00");
    expect(res.body.agent_id).not.toBe(first.proof.nullifier);
    expect((await notesFeed()).notes).toEqual([first.proof.commitment, made.proof.commitment]);
  });

  test("a notes root that is no recent checkpoint: stale_notes_root, nothing consumed", async () => {
    const c = await challenge("10.00");
    const made = await proveSpend({ member: members.bob!, challenge: c, leaves, notesRoot: 12_345n });
    const res = await submit(c.challenge_id, made.proof);
    expect(res).toMatchObject({ status: 400, body: { reason: "stale_notes_root" } });
    expect((await notesFeed()).size).toBe(3);
  });

  test("a one-time mandate's two first spends submitted at once: exactly one verified, the other already_spent", async () => {
    const [c1, c2] = [await challenge("12.00"), await challenge("13.00")];
    const p1 = await proveSpend({ member: members.dave!, challenge: c1, leaves });
    const p2 = await proveSpend({ member: members.dave!, challenge: c2, leaves });
    expect(p1.nullifier).toBe(p2.nullifier);
    const replies = await Promise.all([submit(c1.challenge_id, p1.proof), submit(c2.challenge_id, p2.proof)]);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 400 && r.body.reason === "already_spent")).toHaveLength(1);
    expect((await notesFeed()).size).toBe(4);
  });

  test("revocation: a member removed after proving is refused not_member, nothing consumed", async () => {
    const c = await challenge("5.00");
    const made = await proveSpend({ member: members.carol!, challenge: c, leaves });
    const removed = await h.call("DELETE", `/v1/groups/wallet/members/${members.carol!.enrolment.leaf}`, { key: owner });
    expect(removed.status).toBe(200);
    const res = await submit(c.challenge_id, made.proof);
    expect(res).toMatchObject({ status: 400, body: { reason: "not_member" } });
    expect((await notesFeed()).size).toBe(4);
  });

  test("a malformed spend proof fails the challenge with invalid_proof_format", async () => {
    const c = await challenge("1.00");
    const res = await submit(c.challenge_id, { ...first.proof, nullifier: "007" });
    expect(res).toMatchObject({ status: 400, body: { reason: "invalid_proof_format" } });
  });
});
