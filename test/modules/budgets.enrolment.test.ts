// Enrolment in budgeted groups (issue 40): the owner enrols a member with an
// AP2 open payment mandate (made independently with @sd-jwt/sd-jwt-vc and
// jose) or zkagent mandate JSON; the leaf the service appends is recomputed
// here with poseidon-lite from the terms and salt it answers; a mandate is
// enrolled once service-wide, an identity once per group (removed or not);
// plain additions to a budgeted group and enrolments into a plain one are
// refused. On both stores.
import { beforeAll, describe, expect, test } from "bun:test";
import { SDJwtVcInstance } from "@sd-jwt/sd-jwt-vc";
import { poseidon1, poseidon3, poseidon4, poseidon8 } from "poseidon-lite";
import { enrolmentNonce, payeeField } from "../../src/budgets/encoding";
import { ManualClock } from "../../src/clock";
import { createHarness, type Harness } from "../support/harness";
import { storesUnderTest } from "../support/stores";
import { hasher, type Keys, keyPair, saltGenerator, signerOf } from "../support/sd-jwt";

const NOW = Date.UTC(2026, 10, 28, 9);
const nowS = NOW / 1000;
let principal: Keys;
let agent: Keys;
beforeAll(async () => {
  [principal, agent] = await Promise.all([keyPair(), keyPair()]);
});

/** The issue's mandate: 100 EUR a day, at most 30 a purchase, shops A and B; bound to (group, idc). */
async function ap2Mandate(groupId: string, idc: bigint): Promise<string> {
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
    constraints: [
      { type: "payment.amount_range", currency: "EUR", max: 3000, min: 1 },
      { type: "payment.budget", max: 100.0, currency: "EUR" },
      { type: "payment.allowed_payees", allowed: [{ website: "https://shop-a.example" }, { website: "https://shop-b.example" }] },
      { type: "payment.agent_recurrence", frequency: "DAILY" },
    ],
    cnf: { jwk: agent.publicJwk },
    iat: nowS - 60,
    exp: nowS + 86_400 * 30,
  } as never);
  return instance.present(issued, undefined, { kb: { payload: { iat: nowS, aud: "zkagent", nonce: enrolmentNonce(groupId, idc) } } });
}

const jsonMandate = { limits: [{ currency: "EUR", max_amount: "30.00", max_total: "100.00", period: "day" }], valid_until: "2026-12-31T00:00:00Z" };

/** The leaf recomputed from the answer alone, with poseidon-lite: H3(H1(s)… here idc, H4(TA, TM, H8(q), τ), salt). */
function leafOf(body: any, idc: bigint): string {
  const s = body.statement;
  const tq = poseidon8(s.payees.map(BigInt));
  const t = poseidon4([BigInt(s.ta), BigInt(s.tm), tq, BigInt(s.mandate)]);
  return poseidon3([idc, t, BigInt(body.salt)]).toString();
}

for (const { name, open } of storesUnderTest()) {
  describe(`budget enrolment on ${name}`, () => {
    let h: Harness;
    let owner: string;
    let stranger: string;

    beforeAll(async () => {
      h = await createHarness(await open(), { clock: new ManualClock(NOW) });
      owner = await h.newKey("owner");
      stranger = await h.newKey("stranger");
      for (const group_id of ["budgets", "budgets-2"]) {
        const created = await h.call("POST", "/v1/groups", { key: owner, body: { group_id, budget: true } });
        expect(created.status).toBe(201);
        expect(created.body.budget).toBe(true);
      }
      expect((await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "plain" } })).body.budget).toBe(false);
    }, 60_000);

    test("an AP2 mandate: the terms it signed, the leaf recomputed independently is the group's leaf", async () => {
      const idc = poseidon1([123456789n]);
      const res = await h.call("POST", "/v1/groups/budgets/enrolments", {
        key: owner,
        body: { identity_commitment: idc.toString(), ap2_mandate: await ap2Mandate("budgets", idc), principal_keys: [principal.publicJwk] },
      });
      expect(res.status).toBe(201);
      expect(res.body.terms).toEqual({
        currency: "EUR",
        min_amount: "1",
        max_amount: "3000",
        budget: "10000",
        period: "day",
        one_time: false,
        payees: ["https://shop-a.example", "https://shop-b.example"],
        expires_at: new Date((nowS + 86_400 * 30) * 1000).toISOString(),
      });
      const slots = ["https://shop-a.example", "https://shop-b.example"].map(payeeField).sort((a, b) => (a < b ? -1 : 1));
      expect(res.body.statement.payees).toEqual([...slots, 0n, 0n, 0n, 0n, 0n, 0n].map(String));
      // TA = max + 2^64·budget + 2^128·min, written out here.
      expect(BigInt(res.body.statement.ta)).toBe(3000n + (10_000n << 64n) + (1n << 128n));
      expect(res.body.leaf).toBe(leafOf(res.body, idc));
      const members = await h.call("GET", "/v1/groups/budgets/members", {});
      expect(members.body.members[res.body.leaf_index]).toBe(res.body.leaf);
      expect(res.body.merkle_tree_root).toBe(members.body.merkle_tree_root);

      // The same mandate again, for another identity (it is bound to this one anyway) or in another group: once, service-wide.
      const again = await h.call("POST", "/v1/groups/budgets-2/enrolments", {
        key: owner,
        body: { identity_commitment: idc.toString(), ap2_mandate: await ap2Mandate("budgets-2", idc), principal_keys: [principal.publicJwk] },
      });
      expect(again.status).toBe(201); // a new signature is a new mandate: a new τ
    });

    test("a mandate bound to another identity, or signed by a key the owner did not name, is refused with its reason", async () => {
      const idc = poseidon1([5n]);
      const wrongIdc = await h.call("POST", "/v1/groups/budgets/enrolments", {
        key: owner,
        body: { identity_commitment: idc.toString(), ap2_mandate: await ap2Mandate("budgets", idc + 1n), principal_keys: [principal.publicJwk] },
      });
      expect(wrongIdc.status).toBe(400);
      expect(wrongIdc.body.error).toStartWith("Invalid field ap2_mandate");
      const wrongKey = await h.call("POST", "/v1/groups/budgets/enrolments", {
        key: owner,
        body: { identity_commitment: idc.toString(), ap2_mandate: await ap2Mandate("budgets", idc), principal_keys: [agent.publicJwk] },
      });
      expect(wrongKey.status).toBe(400);
      const noKeys = await h.call("POST", "/v1/groups/budgets/enrolments", {
        key: owner,
        body: { identity_commitment: idc.toString(), ap2_mandate: await ap2Mandate("budgets", idc) },
      });
      expect(noKeys.status).toBe(400);
      expect(noKeys.body.error).toBe("Missing required fields: principal_keys");
      // A principal key that is no usable public key is the mandate's refusal, never a 500.
      for (const bad of [{ kty: "EC" }, { kty: "RSA", n: "AQAB", e: "AQAB" }, { kty: "OKP", crv: "Ed25519", x: "not-a-key" }]) {
        const res = await h.call("POST", "/v1/groups/budgets/enrolments", {
          key: owner,
          body: { identity_commitment: idc.toString(), ap2_mandate: await ap2Mandate("budgets", idc), principal_keys: [bad] },
        });
        expect(res.status).toBe(400);
        expect(res.body.error).toStartWith("Invalid field ap2_mandate");
      }
      const none = await h.call("POST", "/v1/groups/budgets/enrolments", { key: owner, body: { identity_commitment: idc.toString() } });
      expect(none.status).toBe(400);
      // Nothing was appended by any refusal.
      expect((await h.call("GET", "/v1/groups/budgets", { key: owner })).body.size).toBe(1);
    });

    test("zkagent mandate JSON; an identity once per group, removed or not; the same identity in another group", async () => {
      const idc = poseidon1([77n]).toString();
      const res = await h.call("POST", "/v1/groups/budgets/enrolments", { key: owner, body: { identity_commitment: idc, mandate: jsonMandate } });
      expect(res.status).toBe(201);
      expect(res.body.terms).toMatchObject({ currency: "EUR", min_amount: "0", max_amount: "3000", budget: "10000", period: "day", payees: null });
      expect(res.body.leaf).toBe(leafOf(res.body, BigInt(idc)));

      const twice = await h.call("POST", "/v1/groups/budgets/enrolments", { key: owner, body: { identity_commitment: idc, mandate: jsonMandate } });
      expect(twice.status).toBe(409);
      expect(twice.body.error).toBe("Identity enrolled before");

      const removed = await h.call("DELETE", `/v1/groups/budgets/members/${res.body.leaf}`, { key: owner });
      expect(removed.status).toBe(200);
      const back = await h.call("POST", "/v1/groups/budgets/enrolments", { key: owner, body: { identity_commitment: idc, mandate: jsonMandate } });
      expect(back.status).toBe(409);
      expect(back.body.error).toBe("Identity enrolled before");

      const elsewhere = await h.call("POST", "/v1/groups/budgets-2/enrolments", { key: owner, body: { identity_commitment: idc, mandate: jsonMandate } });
      expect(elsewhere.status).toBe(201);
    });

    test("one AP2 mandate enrolled once, service-wide, even by two requests at once", async () => {
      const idc = poseidon1([99n]);
      const token = await ap2Mandate("budgets", idc);
      const body = { identity_commitment: idc.toString(), ap2_mandate: token, principal_keys: [principal.publicJwk] };
      const before = (await h.call("GET", "/v1/groups/budgets", { key: owner })).body.size;
      const answers = await Promise.all([1, 2, 3].map(() => h.call("POST", "/v1/groups/budgets/enrolments", { key: owner, body })));
      expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409]);
      for (const a of answers.filter((a) => a.status === 409)) expect(a.body.error).toBe("Mandate already enrolled");
      expect((await h.call("GET", "/v1/groups/budgets", { key: owner })).body.size).toBe(before + 1);
    });

    test("a budgeted group takes no plain leaves, a plain group no enrolments; only the owner enrols", async () => {
      const plainAdd = await h.call("POST", "/v1/groups/budgets/members", { key: owner, body: { identity_commitments: ["12345"] } });
      expect(plainAdd.status).toBe(409);
      expect(plainAdd.body.error).toBe("Budgeted group");
      const idc = poseidon1([3n]).toString();
      const intoPlain = await h.call("POST", "/v1/groups/plain/enrolments", { key: owner, body: { identity_commitment: idc, mandate: jsonMandate } });
      expect(intoPlain.status).toBe(409);
      expect(intoPlain.body.error).toBe("Group not budgeted");
      expect((await h.call("POST", "/v1/groups/plain/members", { key: owner, body: { identity_commitments: ["12345"] } })).status).toBe(201);
      const foreign = await h.call("POST", "/v1/groups/budgets/enrolments", { key: stranger, body: { identity_commitment: idc, mandate: jsonMandate } });
      expect(foreign.status).toBe(403);
      const missing = await h.call("POST", "/v1/groups/nope/enrolments", { key: owner, body: { identity_commitment: idc, mandate: jsonMandate } });
      expect(missing.status).toBe(404);
      const badIdc = await h.call("POST", "/v1/groups/budgets/enrolments", { key: owner, body: { identity_commitment: "0", mandate: jsonMandate } });
      expect(badIdc.status).toBe(400);
      expect(badIdc.body.error).toStartWith("Invalid field identity_commitment");
    });
  });
}
