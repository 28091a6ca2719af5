// A budget spend (`Authorization: ZKAgent budget="…"`) through the guard,
// against a test double of the service that answers as the budget wire
// contract says (a budget challenge's `budget` object, a status with `spend`,
// a verified answer with the spend): the claim, the 401 that offers the
// accepted budget groups, the price the route must give, the group checked at
// each step, the answer held to the price and origin the challenge bound,
// the session that names no member; and the adapters (Hono, Elysia, Express
// on a Node server) serving it.
import { describe, expect, test } from "bun:test";
import type { AddressInfo } from "node:net";
import { Elysia } from "elysia";
import express from "express";
import { Hono } from "hono";
import { budgetMessage, payeeField } from "../../src/budgets/encoding";
import { parseAuth } from "../../src/http-auth/scheme";
import { contextHash } from "../../src/identity/encoding";
import { bodyFields, type GuardOptions, type GuardProblem, zkagentGuard } from "../../src/merchant";
import { zkagent as elysiaGuard } from "../../src/merchant/adapters/elysia";
import { zkagent as expressGuard, zkagentSession } from "../../src/merchant/adapters/express";
import { zkagent as honoGuard } from "../../src/merchant/adapters/hono";

const NONCE = "cd".repeat(31);
const GROUP = "household-budget";
const order = { amount: "20.00", currency: "EUR" };
/** The proof object an agent sends (wire §4), base64url in the credentials; the guard passes its text through. */
const PROOF = {
  nullifier: "111",
  commitment: "222",
  enrolment_root: "333",
  notes_root: "444",
  groth16: {
    pi_a: ["1", "2", "1"],
    pi_b: [
      ["3", "4"],
      ["5", "6"],
      ["1", "0"],
    ],
    pi_c: ["7", "8", "1"],
    protocol: "groth16",
    curve: "bn128",
  },
};
const PROOF_TEXT = JSON.stringify(PROOF);
const PROOF_PARAM = Buffer.from(PROOF_TEXT).toString("base64url");

interface Say {
  /** The status's shape: `spend` null until decided (default), no `spend` and no `pseudonym` at all, or a group's (`pseudonym`, null). */
  statusShape?: "spend" | "bare" | "group";
  /** A group challenge (a plain group listed in budgets): no `budget` object, a pseudonym in the status. */
  plainGroup?: boolean;
  statusGroup?: string;
  /** What the verified answer's spend says, over the honest one. */
  spend?: Record<string, unknown>;
  answer?: Record<string, unknown>;
  /** The status route's answer: the challenge expired, or unknown (404). */
  status?: "expired" | "unknown";
  /** The proof route's refusal instead of a verdict. */
  refuse?: { status: number; body: Record<string, unknown>; headers?: Record<string, string> };
}

/** The service as the budget wire contract has it, for one challenge `ch_budget`. */
function double(say: Say = {}) {
  const calls: { method: string; path: string; body: any }[] = [];
  let decided = false;
  const stored = { action: "", context: {} as Record<string, any>, group: "" };
  const fetch = async (request: Request) => {
    const body = request.body ? await request.json() : undefined;
    const path = new URL(request.url).pathname;
    calls.push({ method: request.method, path, body });
    const reply = (status: number, value: unknown, headers: Record<string, string> = {}) => Response.json(value, { status, headers });
    if (path === "/v1/verify/challenge") {
      // The service parses the price exactly in the currency's minor units (its 400 names the field).
      if (body.context.amount === "20.001") return reply(400, { error: "Invalid field context: amount has more decimals than EUR has (2)" });
      Object.assign(stored, { action: body.action, context: body.context, group: body.group_id });
      const common = { challenge_id: "ch_budget", nonce: NONCE, expires_in: 300, timestamp: 1, group_id: body.group_id, merkle_tree_root: "55", size: 3 };
      if (say.plainGroup) return reply(200, { ...common, merkle_tree_depth: 20, message: "1", scope: "2", circuit_id: "semaphore-v4" });
      const payee = body.context["@request"].origin;
      return reply(200, {
        ...common,
        circuit_id: "budget_spend-0123456789abcdef",
        budget: {
          group: "987",
          payee,
          payee_field: payeeField(payee).toString(),
          amount: "2000",
          currency: body.context.currency,
          currency_field: "4543826",
          periods: { day: "20420", week: "2917", month: "682", minute: "29404830" },
          ctx: budgetMessage({ nonce: NONCE, action: body.action, context: body.context }).toString(),
          notes_root: "444",
          notes_size: 12,
        },
      });
    }
    if (path === "/v1/verify/status/ch_budget" && say.status === "unknown") return reply(404, { error: "Session not found" });
    if (path === "/v1/verify/status/ch_budget") {
      const spend = decided ? { nullifier: PROOF.nullifier, commitment: PROOF.commitment } : null;
      return reply(200, {
        session_id: "ch_budget",
        status: say.status === "expired" ? "expired" : decided ? "verified" : "pending",
        agent_id: decided ? PROOF.nullifier : "",
        group_id: say.statusGroup ?? (stored.group || GROUP),
        ...(say.plainGroup || say.statusShape === "group" ? { pseudonym: null } : say.statusShape === "bare" ? {} : { spend }),
        action: stored.action,
        context_hash: contextHash(stored.context).toString(),
      });
    }
    if (path === "/v1/verify/proof") {
      if (say.refuse) return reply(say.refuse.status, say.refuse.body, say.refuse.headers);
      decided = true;
      return reply(200, {
        verified: true,
        agent_id: PROOF.nullifier,
        group_id: stored.group || GROUP,
        spend: {
          nullifier: PROOF.nullifier,
          commitment: PROOF.commitment,
          amount: stored.context.amount,
          currency: stored.context.currency,
          payee: stored.context["@request"]?.origin,
          ...say.spend,
        },
        action: stored.action,
        confidence: 0.99,
        timestamp: "2025-11-28T05:00:00.000Z",
        session_id: "ch_budget",
        receipt: "r.r.r",
        ...say.answer,
      });
    }
    return reply(404, { error: "Not found" });
  };
  return { calls, fetch };
}

const guardOn = (service: ReturnType<typeof double>, extra: Partial<GuardOptions<"zkagent" | "group" | "budget">> = {}) =>
  zkagentGuard({
    url: "http://zkagent.test",
    apiKey: "zka_merchant",
    action: "purchase",
    context: bodyFields(["amount", "currency"]),
    fetch: service.fetch,
    accept: ["zkagent", "budget"],
    budgets: [GROUP],
    ...extra,
  });
const orderRequest = (authorization?: string, body: unknown = order) =>
  new Request("https://shop-a.example/orders", {
    method: "POST",
    headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
    body: JSON.stringify(body),
  });
const credentials = (claim = `budget="${GROUP}", `) => `ZKAgent ${claim}challenge_id="ch_budget", proof="${PROOF_PARAM}"`;

async function refusal(result: Awaited<ReturnType<ReturnType<typeof zkagentGuard>["verify"]>>) {
  if (result.ok) throw new Error(`served ${JSON.stringify(result.session)}`);
  return { status: result.response.status, body: await result.response.json(), headers: result.response.headers };
}

/** The claim's 401 (its challenge), then the credentials: what the guard answers to the second. */
async function spend(guard: ReturnType<typeof guardOn>, authorization = credentials()) {
  const first = await refusal(await guard.verify(orderRequest(`ZKAgent budget="${GROUP}"`)));
  expect(first.status).toBe(401);
  return guard.verify(orderRequest(authorization));
}

describe("a budget spend through the guard", () => {
  test("the claim becomes a budget challenge for group_id; its budget object reaches the agent; the proof object passes verbatim; the session says what was spent, not who", async () => {
    const service = double();
    const guard = guardOn(service);
    const first = await refusal(await guard.verify(orderRequest(`ZKAgent budget="${GROUP}"`)));
    expect(first.status).toBe(401);
    expect(service.calls[0]).toEqual({
      method: "POST",
      path: "/v1/verify/challenge",
      body: { group_id: GROUP, action: "purchase", context: { ...order, "@request": { method: "POST", origin: "https://shop-a.example", target: "/orders" } } },
    });
    // The header: every scalar as is, the budget object as base64url of its canonical JSON (as the context travels).
    const params = parseAuth(first.headers.get("www-authenticate")!)![0]!;
    expect(params).toMatchObject({ challenge_id: "ch_budget", group_id: GROUP, nonce: NONCE, action: "purchase", merkle_tree_root: "55", size: "3" });
    expect(params.circuit).toBe("http://zkagent.test/v1/circuits/budget_spend-0123456789abcdef");
    const budget = JSON.parse(Buffer.from(params.budget!, "base64url").toString("utf8"));
    expect(budget).toMatchObject({ payee: "https://shop-a.example", amount: "2000", currency: "EUR", notes_size: 12, periods: { day: "20420" } });
    expect(Object.keys(budget)).toEqual(Object.keys(budget).sort()); // canonical JSON: members in order
    // The agent recomputes ctx from what the header carries.
    const context = JSON.parse(Buffer.from(params.context!, "base64url").toString("utf8"));
    expect(budget.ctx).toBe(budgetMessage({ nonce: params.nonce!, action: params.action!, context }).toString());
    // And the body carries the same challenge, the object as JSON.
    expect(first.body.challenge.budget).toEqual(budget);

    const served = await guard.verify(orderRequest(credentials()));
    if (!served.ok) throw new Error(`refused ${served.response.status} ${await served.response.text()}`);
    expect(served.session).toEqual({
      scheme: "budget",
      session_id: "ch_budget",
      agent_id: PROOF.nullifier,
      group_id: GROUP,
      amount: "20.00",
      currency: "EUR",
      spend: { nullifier: PROOF.nullifier, commitment: PROOF.commitment },
      action: "purchase",
      context: order,
      request: { method: "POST", origin: "https://shop-a.example", target: "/orders" },
      confidence: 0.99,
      receipt: "r.r.r",
    });
    expect("pseudonym" in served.session).toBe(false);
    const proofCall = service.calls.find((c) => c.path === "/v1/verify/proof")!;
    expect(proofCall.body).toEqual({ challenge_id: "ch_budget", proof: PROOF_TEXT }); // no signature: it would name the agent
    // A replay of the same credentials: the challenge is used.
    expect(await refusal(await guard.verify(orderRequest(credentials())))).toMatchObject({ status: 403, body: { reason: "challenge_used" } });
  });

  test("a status with neither spend nor pseudonym, or a group's status for a group in budgets, is a budget challenge's too; credentials naming no claim are held to it", async () => {
    for (const statusShape of ["bare", "group"] as const) {
      for (const claim of ["", `budget="${GROUP}", `]) {
        const service = double({ statusShape });
        const served = await spend(guardOn(service), credentials(claim));
        if (!served.ok) throw new Error(`refused ${served.response.status} ${await served.response.text()}`);
        expect(served.session).toMatchObject({ scheme: "budget", group_id: GROUP, amount: "20.00" });
      }
    }
  });

  test("an amount written another way (20 as a number) is the same price: served, the session's amount as the service recorded it", async () => {
    const service = double({ spend: { amount: "20.00" } });
    const guard = guardOn(service, { context: ({ body }) => ({ amount: (body as { amount: number }).amount, currency: "EUR" }) });
    await guard.verify(orderRequest(`ZKAgent budget="${GROUP}"`, { amount: 20 }));
    const served = await guard.verify(orderRequest(credentials(), { amount: 20 }));
    if (!served.ok) throw new Error(`refused ${served.response.status} ${await served.response.text()}`);
    expect(served.session).toMatchObject({ scheme: "budget", amount: "20.00", currency: "EUR", context: { amount: 20, currency: "EUR" } });
  });
});

describe("the retry flow, as for group claims", () => {
  test("an expired or unknown challenge: 401 with a fresh budget challenge naming why, the proof not submitted", async () => {
    for (const [status, error] of [
      ["expired", "challenge_expired"],
      ["unknown", "unknown_challenge"],
    ] as const) {
      const service = double({ status });
      const refused = await refusal(await guardOn(service).verify(orderRequest(credentials())));
      expect(refused.status).toBe(401);
      expect(refused.body.reason).toBe(error);
      const params = parseAuth(refused.headers.get("www-authenticate")!)![0]!;
      expect(params).toMatchObject({ error, challenge_id: "ch_budget", group_id: GROUP });
      expect(JSON.parse(Buffer.from(params.budget!, "base64url").toString("utf8")).payee).toBe("https://shop-a.example");
      expect(service.calls.map((c) => c.path)).toEqual(["/v1/verify/status/ch_budget", "/v1/verify/challenge"]);
    }
  });
});

describe("the 401 offers the accepted budget groups", () => {
  test("one group: its budget param in the one challenge; several: one challenge each; the message names them", async () => {
    const one = await refusal(await guardOn(double()).verify(orderRequest()));
    expect(one.status).toBe(401);
    expect(one.headers.get("www-authenticate")).toBe(`ZKAgent realm="zkagent", budget="${GROUP}"`);
    expect(one.body).toEqual({
      error: "ZKAgent authentication required",
      reason: "claim_required",
      message: `repeat the request with Authorization: ZKAgent agent="<agent id>" or ZKAgent budget="${GROUP}"`,
    });
    const two = await refusal(await guardOn(double(), { budgets: ["b1", "b2"], accept: ["budget"] }).verify(orderRequest()));
    const header = two.headers.get("www-authenticate")!;
    expect(header).toBe('ZKAgent realm="zkagent", budget="b1", ZKAgent realm="zkagent", budget="b2"');
    expect(parseAuth(header)).toEqual([
      { realm: "zkagent", budget: "b1" },
      { realm: "zkagent", budget: "b2" },
    ]);
    expect(two.body.message).toBe('repeat the request with Authorization: ZKAgent budget="b1" or ZKAgent budget="b2"');
    // A route that does not accept budget spends offers none, though the guard lists groups.
    const agentsOnly = await refusal(await guardOn(double(), { accept: ["zkagent"] }).verify(orderRequest()));
    expect(agentsOnly.headers.get("www-authenticate")).toBe('ZKAgent realm="zkagent"');
  });
});

describe("what the guard refuses before any call to the service", () => {
  test("a group not in budgets, any group when budgets is not set, a route that does not accept budget: 403, no call", async () => {
    for (const [options, group, reason] of [
      [{}, "other-group", "group_not_accepted"],
      [{ budgets: undefined }, GROUP, "group_not_accepted"],
      [{ budgets: [] }, GROUP, "group_not_accepted"],
      [{ accept: ["zkagent", "group"], groups: ["g"] }, GROUP, "scheme_not_accepted"],
    ] as const) {
      const service = double();
      const guard = guardOn(service, options as Partial<GuardOptions<"zkagent" | "group" | "budget">>);
      const claimed = await refusal(await guard.verify(orderRequest(`ZKAgent budget="${group}"`)));
      expect(claimed).toMatchObject({ status: 403, body: { reason } });
      if (reason === "group_not_accepted") expect(claimed.body.message).toBe(`spends from the budget of group "${group}" are not accepted here`);
      const answered = await refusal(await guard.verify(orderRequest(credentials(`budget="${group}", `))));
      expect(answered.body.reason).toBe(reason);
      expect(service.calls).toEqual([]);
    }
  });

  test("a route whose context gives no amount or currency: 400 invalid_request, onError names the merchant's mistake; a bad amount is the request's (no onError)", async () => {
    const service = double();
    const problems: GuardProblem[] = [];
    const onError = (problem: GuardProblem) => problems.push(problem);
    const noPrice = guardOn(service, { context: bodyFields(["currency"]), onError });
    const missing = await refusal(await noPrice.verify(orderRequest(`ZKAgent budget="${GROUP}"`)));
    expect(missing).toMatchObject({
      status: 400,
      body: { error: "Invalid request", reason: "invalid_request", message: "this route's context gives no amount: a budget spend needs both" },
    });
    const none = guardOn(service, { context: undefined, onError });
    expect((await refusal(await none.verify(orderRequest(`ZKAgent budget="${GROUP}"`)))).body.message).toBe(
      "this route's context gives no amount and currency: a budget spend needs both",
    );
    expect(problems.map((p) => [p.reason, p.level])).toEqual([
      ["budget_context", "error"],
      ["budget_context", "error"],
    ]);
    expect(problems[0]!.message).toContain('bodyFields(["amount", "currency"])');
    // The agent's own claim on the same route is not a budget spend: it still gets its challenge.
    expect((await refusal(await noPrice.verify(orderRequest('ZKAgent agent="bot"')))).status).toBe(401);
    expect(service.calls.map((c) => c.body.agent_id)).toEqual(["bot"]);

    const guard = guardOn(service, { onError });
    for (const [body, message] of [
      [{ amount: "-5", currency: "EUR" }, 'context.amount must be a non-negative decimal such as "20.00" (no sign, no exponent)'],
      [{ amount: "2e1", currency: "EUR" }, 'context.amount must be a non-negative decimal such as "20.00" (no sign, no exponent)'],
      [{ amount: "20", currency: "eur" }, "context.currency must be an ISO 4217 code: three capital letters such as EUR"],
      [{ amount: "20", currency: 7 }, "context.currency must be an ISO 4217 code: three capital letters such as EUR"],
    ] as const) {
      const bad = await refusal(await guard.verify(orderRequest(`ZKAgent budget="${GROUP}"`, body)));
      expect(bad).toMatchObject({ status: 400, body: { reason: "invalid_request", message } });
    }
    expect(problems.length).toBe(2);
    expect(service.calls.length).toBe(1);
    // A decimal the currency cannot count exactly: the service's word, passed on.
    const inexact = await refusal(await guard.verify(orderRequest(`ZKAgent budget="${GROUP}"`, { amount: "20.001", currency: "EUR" })));
    expect(inexact).toMatchObject({
      status: 400,
      body: { reason: "invalid_claim", message: "Invalid field context: amount has more decimals than EUR has (2)" },
    });
    expect(problems.length).toBe(2);
  });

  test("options: a group in both groups and budgets, budgets not a list of ids: TypeError when the guard is made", () => {
    const base = { url: "http://z.test", apiKey: "k", action: "purchase" };
    expect(() => zkagentGuard({ ...base, groups: ["a", "b"], budgets: ["b"] })).toThrow(
      new TypeError('group "b" is in both groups and budgets: a budgeted group goes in budgets only'),
    );
    expect(() => zkagentGuard({ ...base, budgets: "b" as unknown as string[] })).toThrow(new TypeError("budgets must be a list of group ids"));
    expect(() => zkagentGuard({ ...base, budgets: [""] })).toThrow(TypeError);
    expect(() => zkagentGuard({ ...base, accept: ["budget"], budgets: ["b"] })).not.toThrow();
  });
});

describe("the challenge's group and kind, checked before the proof is spent", () => {
  test("a challenge made for another group, or of another kind, or of a group not listed: refused, the proof not submitted", async () => {
    const cases: [Say, Partial<GuardOptions<"zkagent" | "group" | "budget">>, string, Record<string, string>][] = [
      // The claim names an accepted group but presents a challenge of another (another route of the same key).
      [{ statusGroup: "other-budget" }, { budgets: [GROUP, "other-budget"] }, credentials(), { reason: "request_mismatch" }],
      // Credentials naming no claim present a budget challenge of a group this guard does not list.
      [{ statusGroup: "other-budget" }, {}, credentials(""), { reason: "group_not_accepted" }],
      // A budget claim presenting a plain group's challenge (its status has a pseudonym, its group is not in budgets).
      [{ plainGroup: true, statusGroup: "plain-group" }, {}, credentials(), { reason: "request_mismatch" }],
      // A group claim presenting a budget challenge.
      [{}, { groups: ["g"], accept: ["group", "budget"] }, credentials('group="g", '), { reason: "request_mismatch" }],
    ];
    for (const [say, options, authorization, expected] of cases) {
      const service = double(say);
      const guard = guardOn(service, options);
      // A challenge exists at the double (made by the accepted claim).
      await service.fetch(
        new Request("http://zkagent.test/v1/verify/challenge", {
          method: "POST",
          body: JSON.stringify({
            group_id: say.statusGroup ?? GROUP,
            action: "purchase",
            context: { ...order, "@request": { method: "POST", origin: "https://shop-a.example", target: "/orders" } },
          }),
        }),
      );
      const refused = await refusal(await guard.verify(orderRequest(authorization)));
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject(expected);
      expect(service.calls.some((c) => c.path === "/v1/verify/proof")).toBe(false);
    }
  });

  test("the merchant listed a group under the wrong option: 502, onError says which list it belongs in", async () => {
    for (const [say, options, claim, expected] of [
      [
        { plainGroup: true },
        {},
        `budget="${GROUP}"`,
        `group "${GROUP}" is not a budgeted group at the service (its challenge carries no budget): list it in groups, not budgets`,
      ],
      [
        {},
        { groups: ["g"], budgets: [], accept: ["group"] },
        'group="g"',
        'group "g" is a budgeted group at the service: list it in budgets (and accept "budget"), not groups',
      ],
    ] as const) {
      const problems: GuardProblem[] = [];
      const guard = guardOn(double(say), { ...(options as object), onError: (problem) => problems.push(problem) });
      const refused = await refusal(await guard.verify(orderRequest(`ZKAgent ${claim}`)));
      expect(refused.status).toBe(502);
      expect(refused.body).toEqual({ error: "Verification service unavailable", reason: "verifier_unavailable" });
      expect(problems.map((p) => p.message)).toEqual([expected]);
    }
  });
});

describe("the service's answer, held to the challenge", () => {
  test("another amount, currency, payee, group or nullifier than the challenge bound: 502, not served, onError names the answer", async () => {
    for (const say of [
      { spend: { amount: "20.01" } },
      { spend: { currency: "USD" } },
      { spend: { payee: "https://shop-b.example" } },
      { spend: { nullifier: "999" } },
      { spend: { commitment: 5 } },
      { answer: { group_id: "other-budget" } },
      { answer: { spend: null } },
    ] as Say[]) {
      const problems: GuardProblem[] = [];
      const guard = guardOn(double(say), { budgets: [GROUP, "other-budget"], onError: (problem) => problems.push(problem) });
      const refused = await refusal(await spend(guard));
      expect(refused.status).toBe(502);
      expect(problems.map((p) => p.reason)).toEqual(["verifier_unavailable"]);
      expect(problems[0]!.message).toStartWith('POST /v1/verify/proof answered 200 {"verified":true');
    }
    // An answer naming a group the guard does not list: 403, as for group claims.
    const outside = await refusal(await spend(guardOn(double({ answer: { group_id: "evil" } }))));
    expect(outside).toMatchObject({ status: 403, body: { reason: "group_not_accepted" } });
  });

  test("the service's refusals: a spent nullifier, a stale notes root, a period ended are the agent's reasons; 503 is 502 with its Retry-After", async () => {
    for (const reason of ["already_spent", "stale_notes_root", "period_ended", "not_member", "proof_rejected"]) {
      const refused = await refusal(
        await spend(guardOn(double({ refuse: { status: 400, body: { error: "Proof verification failed", reason, verified: false } } }))),
      );
      expect(refused).toMatchObject({ status: 403, body: { error: "Proof verification failed", reason } });
    }
    const busy = await refusal(
      await spend(guardOn(double({ refuse: { status: 503, body: { error: "Service unavailable" }, headers: { "retry-after": "7" } } }), { onError: () => {} })),
    );
    expect(busy.status).toBe(502);
    expect(busy.headers.get("retry-after")).toBe("7");
  });
});

describe("the adapters serve a budget session", () => {
  const options = (service: ReturnType<typeof double>) =>
    ({
      url: "http://zkagent.test",
      apiKey: "zka_merchant",
      action: "purchase",
      context: bodyFields(["amount", "currency"]),
      fetch: service.fetch,
      accept: ["budget"],
      budgets: [GROUP],
      origin: "https://shop-a.example",
    }) as const;
  const served = (session: { scheme: string; amount?: string; currency?: string; group_id?: string; agent_id: string }) =>
    session.scheme === "budget"
      ? { scheme: session.scheme, amount: session.amount, currency: session.currency, group: session.group_id }
      : { other: session.agent_id };
  const expected = { scheme: "budget", amount: "20.00", currency: "EUR", group: GROUP };

  /** Claim, then credentials, through `send`: the second answer's status and JSON. */
  async function exchange(send: (authorization: string) => Promise<Response>) {
    const first = await send(`ZKAgent budget="${GROUP}"`);
    expect(first.status).toBe(401);
    expect(parseAuth(first.headers.get("www-authenticate")!)![0]!.budget).toBeDefined();
    const second = await send(credentials());
    return { status: second.status, body: await second.json() };
  }
  const init = (authorization: string) => ({ method: "POST", headers: { "content-type": "application/json", authorization }, body: JSON.stringify(order) });

  test("Hono", async () => {
    const shop = new Hono().post("/orders", honoGuard(options(double())), (c) => c.json(served(c.get("zkagent")), 201));
    expect(await exchange((a) => Promise.resolve(shop.request("http://shop/orders", init(a))))).toEqual({ status: 201, body: expected });
  });

  test("Elysia", async () => {
    const shop = new Elysia().use(elysiaGuard(options(double()))).post("/orders", ({ zkagent, set }) => {
      set.status = 201;
      return served(zkagent);
    });
    expect(await exchange((a) => shop.handle(new Request("http://shop/orders", init(a))))).toEqual({ status: 201, body: expected });
  });

  test("Express on a Node server", async () => {
    const app = express();
    const orders = expressGuard(options(double()));
    app.post("/orders", orders, (_req, res) => {
      const session = orders.session(res);
      res.status(201).json({ ...served(session), same: zkagentSession<"budget">(res) === session });
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
      expect(await exchange((a) => fetch(url, init(a)))).toEqual({ status: 201, body: { ...expected, same: true } });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("the example shop (ZKAGENT_BUDGET_GROUPS)", () => {
  test("its 401 offers the budget group; an order paid by a spend: 201 with the group, the spend, the amount and currency, no agent_id", async () => {
    const { createShop, shopOptionsFromEnv } = await import("../../examples/shop/server");
    const service = double();
    const zkagentService = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: service.fetch });
    try {
      const env = {
        ZKAGENT_URL: `http://127.0.0.1:${zkagentService.port}`,
        ZKAGENT_API_KEY: "zka_shop",
        ZKAGENT_BUDGET_GROUPS: GROUP,
        ZKAGENT_ORIGIN: "https://shop-a.example",
      };
      const shop = createShop(shopOptionsFromEnv(env, (name) => env[name as keyof typeof env]));
      const post = (authorization?: string) =>
        shop.request("http://127.0.0.1/orders", {
          method: "POST",
          headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
          body: JSON.stringify(order),
        });
      const plain = await post();
      expect(plain.status).toBe(401);
      expect(plain.headers.get("www-authenticate")).toBe(`ZKAgent realm="example-shop", budget="${GROUP}"`);
      expect((await post(`ZKAgent budget="${GROUP}"`)).status).toBe(401);
      expect(service.calls[0]!.body.context).toEqual({
        ...order,
        merchant: "example-shop",
        "@request": { method: "POST", origin: "https://shop-a.example", target: "/orders" },
      });
      const paid = await post(credentials());
      expect(paid.status).toBe(201);
      const body = await paid.json();
      expect(body).toEqual({
        order_id: expect.stringMatching(/^ord_/),
        scheme: "budget",
        group_id: GROUP,
        spend: { nullifier: PROOF.nullifier, commitment: PROOF.commitment },
        amount: "20.00",
        currency: "EUR",
        receipt: "r.r.r",
      });
    } finally {
      zkagentService.stop(true);
    }
  });
});
