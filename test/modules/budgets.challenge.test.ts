// Budget challenges (issue 40, docs/api.md "Budget spends"): a budgeted
// group's challenge takes the budget path (no Semaphore message or scope),
// its payee is one of the asking key's registered origins, its amount and
// currency are read exactly from the context, its periods come from one
// clock reading and are stored with it; every public value is recomputed
// here from src/budgets/ and compared. On both stores.
import { beforeAll, describe, expect, test } from "bun:test";
import { budgetGroup, budgetMessage, currencyField, NOTES_GENESIS_LEAF, payeeField, periodsAt } from "../../src/budgets/encoding";
import { BUDGET_CIRCUIT_ID } from "../../src/circuits/budget";
import { ManualClock } from "../../src/clock";
import { createHarness, type Harness } from "../support/harness";
import { storesUnderTest } from "../support/stores";

// 23:59:30 UTC on a Sunday, the last day of November: day, week and month all end within a minute.
const NOW = Date.UTC(2026, 10, 29, 23, 59, 30);
const keyIdOf = (key: string) => key.split("_")[1]!;

for (const { name, open } of storesUnderTest()) {
  describe(`budget challenges on ${name}`, () => {
    let h: Harness;
    let owner: string;
    let shop: string;
    let twoShops: string;
    let bare: string;

    beforeAll(async () => {
      h = await createHarness(await open(), { clock: new ManualClock(NOW) });
      owner = await h.newKey("owner");
      shop = await h.newKey("shop");
      twoShops = await h.newKey("two shops");
      bare = await h.newKey("no origin");
      await h.store.setOrigins(keyIdOf(shop), ["https://shop-a.example"]);
      await h.store.setOrigins(keyIdOf(twoShops), ["https://shop-a.example", "https://shop-b.example"]);
      expect((await h.call("POST", "/v1/groups", { key: owner, body: { group_id: "wallet", budget: true } })).status).toBe(201);
      const enrolled = await h.call("POST", "/v1/groups/wallet/enrolments", {
        key: owner,
        body: {
          identity_commitment: "12345",
          mandate: { limits: [{ currency: "EUR", max_amount: "30.00", max_total: "100.00", period: "day" }], valid_until: "2027-06-01T00:00:00Z" },
        },
      });
      expect(enrolled.status).toBe(201);
    }, 60_000);

    const ask = (key: string, context: unknown) => h.call("POST", "/v1/verify/challenge", { key, body: { group_id: "wallet", action: "purchase", context } });

    test("the spend's public values, each recomputed from its definition; the periods from the creation's one clock reading", async () => {
      const context = { amount: "20.00", currency: "EUR", "@request": { origin: "https://shop-b.example", method: "POST" } };
      const res = await ask(twoShops, context);
      expect(res.status).toBe(200);
      const b = res.body;
      expect(b.circuit_id).toBe(BUDGET_CIRCUIT_ID);
      expect(b.message).toBeUndefined();
      expect(b.scope).toBeUndefined();
      expect(b.merkle_tree_depth).toBeUndefined();
      const p = periodsAt(NOW);
      expect(b.budget).toEqual({
        group: budgetGroup("wallet").toString(),
        payee: "https://shop-b.example",
        payee_field: payeeField("https://shop-b.example").toString(),
        amount: "2000",
        currency: "EUR",
        currency_field: currencyField("EUR").toString(),
        periods: { day: p.day.toString(), week: p.week.toString(), month: p.month.toString(), minute: p.minute.toString() },
        ctx: budgetMessage({ nonce: b.nonce, action: "purchase", context }).toString(),
        notes_root: NOTES_GENESIS_LEAF.toString(),
        notes_size: 1,
      });
      expect(b.budget.periods.day).toBe(String(Math.floor(NOW / 86_400_000)));
      // Stored with the challenge, unchanged by a later clock.
      const stored = await h.store.getChallenge(b.challenge_id);
      expect(stored!.budget).toEqual({ payee: "https://shop-b.example", amount: "2000", currency: "EUR", periods: b.budget.periods, ctx: b.budget.ctx });
    });

    test("without @request a key with one origin pays it; JPY has no decimals; a number amount is read through its text", async () => {
      const res = await ask(shop, { amount: 1500, currency: "JPY" });
      expect(res.status).toBe(200);
      expect(res.body.budget).toMatchObject({ payee: "https://shop-a.example", amount: "1500", currency: "JPY" });
      expect((await ask(shop, { amount: 0.5, currency: "EUR" })).body.budget.amount).toBe("50");
    });

    test("origins: none → 409, an unregistered @request.origin → 403, several without @request → 400", async () => {
      const none = await ask(bare, { amount: "1", currency: "EUR" });
      expect(none.status).toBe(409);
      expect(none.body.error).toBe("Key has no registered origin");
      const other = await ask(shop, { amount: "1", currency: "EUR", "@request": { origin: "https://shop-b.example" } });
      expect(other.status).toBe(403);
      expect(other.body.error).toBe("Origin not registered for this key");
      const several = await ask(twoShops, { amount: "1", currency: "EUR" });
      expect(several.status).toBe(400);
      expect(several.body.error).toBe("Invalid field context: a budget challenge binds @request.origin (this key has several origins)");
      // An origin written with its default port is the same origin.
      expect((await ask(shop, { amount: "1", currency: "EUR", "@request": { origin: "https://shop-a.example:443" } })).status).toBe(200);
    });

    test("amount and currency: missing or inexact → 400 naming it, never rounded", async () => {
      const cases: [unknown, string][] = [
        [undefined, "Invalid field context: a budget challenge binds amount and currency"],
        [{ currency: "EUR" }, "Invalid field context: a budget challenge binds amount"],
        [{ amount: "20.00" }, "Invalid field context: a budget challenge binds currency"],
        [{ amount: "20.001", currency: "EUR" }, "Invalid field context: amount has more decimals than EUR has (2)"],
        [{ amount: "1.5", currency: "JPY" }, "Invalid field context: amount has more decimals than JPY has (0)"],
        [{ amount: "-1", currency: "EUR" }, "Invalid field context: amount must be a non-negative decimal"],
        [{ amount: "0.00", currency: "EUR" }, "Invalid field context: amount must be at least one minor unit"],
        [{ amount: "1", currency: "XAU" }, "Invalid field context: currency XAU has no minor unit"],
        [{ amount: "1", currency: "eur" }, "Invalid field context: currency must be an ISO 4217 code"],
        [{ amount: "184467440737095516.16", currency: "EUR" }, "Invalid field context: amount must be below 2^64 minor units of EUR"],
      ];
      for (const [context, error] of cases) {
        const res = await ask(shop, context);
        expect(res.status).toBe(400);
        expect(res.body.error).toStartWith(error);
      }
    });

    test("the budget circuit is listed and served under /v1/circuits", async () => {
      const list = await h.call("GET", "/v1/circuits");
      const listed = list.body.circuits.find((c: { id: string }) => c.id === BUDGET_CIRCUIT_ID);
      expect(listed).toMatchObject({ state: "accepted", setup: "development" });
      const vk = await h.call("GET", `/v1/circuits/${BUDGET_CIRCUIT_ID}/vk`);
      expect(vk.status).toBe(200);
      expect(vk.body.nPublic).toBe(13);
      const zkey = await h.app.handle(new Request(`http://zkagent.test/v1/circuits/${BUDGET_CIRCUIT_ID}/zkey`));
      expect(zkey.status).toBe(200);
      const bytes = new Uint8Array(await zkey.arrayBuffer());
      expect(new Bun.CryptoHasher("sha256").update(bytes).digest("hex")).toStartWith(BUDGET_CIRCUIT_ID.split("-")[1]!);
    });
  });
}
