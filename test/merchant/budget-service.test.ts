// The guard's budget claims in front of the real zkagent app (in process):
// a budgeted group, a member enrolled with its terms, a shop key holding its
// origin. The challenge the service makes for the guard's claim reaches the
// agent whole, in the header and the body; the service's refusals that are
// the merchant's setup (no registered origin, another origin) are named to
// the merchant and answered 502.
import { describe, expect, test } from "bun:test";
import { budgetGroup, budgetMessage, currencyField, payeeField, periodsAt } from "../../src/budgets/encoding";
import { parseAuth } from "../../src/http-auth/scheme";
import { bodyFields, type GuardOptions, type GuardProblem, zkagentGuard } from "../../src/merchant";
import { createHarness } from "../support/harness";

const GROUP = "wallet";
const ORIGIN = "https://shop-a.example";
const order = { amount: "20.00", currency: "EUR" };

async function world() {
  const harness = await createHarness();
  const owner = await harness.newKey("owner");
  const shop = await harness.newKey("shop");
  const bare = await harness.newKey("no origin");
  await harness.store.setOrigins(shop.split("_")[1]!, [ORIGIN]);
  expect((await harness.call("POST", "/v1/groups", { key: owner, body: { group_id: GROUP, budget: true } })).status).toBe(201);
  const enrolled = await harness.call("POST", `/v1/groups/${GROUP}/enrolments`, {
    key: owner,
    body: {
      identity_commitment: "12345",
      mandate: { limits: [{ currency: "EUR", max_amount: "30.00", max_total: "100.00", period: "day" }], valid_until: "2035-01-01T00:00:00Z" },
    },
  });
  expect(enrolled.status).toBe(201);
  const guard = (apiKey: string, extra: Partial<GuardOptions<"budget">> = {}) =>
    zkagentGuard({
      url: "http://zkagent.test",
      apiKey,
      action: "purchase",
      context: bodyFields(["amount", "currency"]),
      accept: ["budget"],
      budgets: [GROUP],
      origin: ORIGIN,
      fetch: (request) => harness.app.handle(request),
      ...extra,
    });
  return { harness, shop, bare, guard };
}

const claim = (authorization = `ZKAgent budget="${GROUP}"`) =>
  new Request("http://127.0.0.1:8080/orders", {
    method: "POST",
    headers: { "content-type": "application/json", authorization },
    body: JSON.stringify(order),
  });

describe("budget claims against the real service", () => {
  test("the service's budget challenge reaches the agent whole: header and body carry the same budget object, every value recomputable", async () => {
    const { harness, shop, guard } = await world();
    const result = await guard(shop).verify(claim());
    if (result.ok) throw new Error("served");
    expect(result.response.status).toBe(401);
    const body = await result.response.json();
    const params = parseAuth(result.response.headers.get("www-authenticate")!)![0]!;
    const budget = JSON.parse(Buffer.from(params.budget!, "base64url").toString("utf8"));
    expect(budget).toEqual(body.challenge.budget);
    const context = JSON.parse(Buffer.from(params.context!, "base64url").toString("utf8"));
    expect(context).toEqual({ ...order, "@request": { method: "POST", origin: ORIGIN, target: "/orders" } });
    const periods = periodsAt(harness.clock.now());
    expect(budget).toMatchObject({
      group: budgetGroup(GROUP).toString(),
      payee: ORIGIN,
      payee_field: payeeField(ORIGIN).toString(),
      amount: "2000",
      currency: "EUR",
      currency_field: currencyField("EUR").toString(),
      periods: { day: periods.day.toString(), week: periods.week.toString(), month: periods.month.toString() },
      ctx: budgetMessage({ nonce: params.nonce!, action: "purchase", context }).toString(),
    });
    expect(params.group_id).toBe(GROUP);
    expect(params.circuit_id).toStartWith("budget_spend-");
    expect(params.circuit).toBe(`http://zkagent.test/v1/circuits/${params.circuit_id}`);
    // The challenge is pending at the service, for this key, bound to this request.
    const status = await harness.call("GET", `/v1/verify/status/${params.challenge_id}`, { key: shop });
    expect(status.body).toMatchObject({ status: "pending", group_id: GROUP, action: "purchase" });
  });

  test("a key without a registered origin, or a guard binding another origin: 502 to the agent, onError names the fix", async () => {
    const { bare, shop, guard } = await world();
    for (const [key, origin, error] of [
      [bare, ORIGIN, "409 Key has no registered origin"],
      [shop, "https://shop-c.example", "403 Origin not registered for this key"],
    ] as const) {
      const problems: GuardProblem[] = [];
      const result = await guard(key, { origin, onError: (problem) => problems.push(problem) }).verify(claim());
      if (result.ok) throw new Error("served");
      expect(result.response.status).toBe(502);
      expect(await result.response.json()).toEqual({ error: "Verification service unavailable", reason: "verifier_unavailable" });
      expect(problems.length).toBe(1);
      expect(problems[0]!.message).toStartWith(`POST /v1/verify/challenge answered ${error}: a budget spend pays this server's origin (${origin})`);
      expect(problems[0]!.message).toContain(`zkagent keys set-origins <key id> ${origin}`);
    }
  });

  test("the group listed under the wrong option: a budgeted group claimed as a group is 502 naming budgets, before any proof", async () => {
    const { shop, harness } = await world();
    const problems: GuardProblem[] = [];
    const guard = zkagentGuard({
      url: "http://zkagent.test",
      apiKey: shop,
      action: "purchase",
      context: bodyFields(["amount", "currency"]),
      groups: [GROUP],
      origin: ORIGIN,
      fetch: (request) => harness.app.handle(request),
      onError: (problem) => problems.push(problem),
    });
    const result = await guard.verify(claim(`ZKAgent group="${GROUP}"`));
    if (result.ok) throw new Error("served");
    expect(result.response.status).toBe(502);
    expect(problems.map((p) => p.message)).toEqual([
      `group "${GROUP}" is a budgeted group at the service: list it in budgets (and accept "budget"), not groups`,
    ]);
  });

  test("a price the currency cannot count exactly: the service's 400 naming it, as invalid_claim", async () => {
    const { shop, guard } = await world();
    const result = await guard(shop).verify(
      new Request("http://127.0.0.1:8080/orders", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `ZKAgent budget="${GROUP}"` },
        body: JSON.stringify({ amount: "20.001", currency: "EUR" }),
      }),
    );
    if (result.ok) throw new Error("served");
    expect(result.response.status).toBe(400);
    const body = await result.response.json();
    expect(body.reason).toBe("invalid_claim");
    expect(body.message).toStartWith("Invalid field context");
    expect(body.message).toContain("amount");
  });
});
