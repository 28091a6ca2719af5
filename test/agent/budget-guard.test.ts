// The agent's SDK fetch against two shops' guards in front of the real
// service (in process, app.handle): a member whose membership is kept
// answers each shop's 401 (the budget offer, then the challenge whose
// `budget` object the guard passes on) with a spend, 20 EUR at shop A and
// then 15 EUR at shop B from the first's note once a checkpoint holds it.
// Each shop's session is a budget session naming the amount and no member.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { membershipOf, saveMembership } from "../../src/agent/budget/membership";
import { Wallet } from "../../src/agent/budget/wallet";
import { zkagentFetch } from "../../src/agent/fetch";
import { NotesCheckpointer } from "../../src/budgets/checkpoints";
import { H1 } from "../../src/budgets/hash";
import { ManualClock } from "../../src/clock";
import { bodyFields, zkagentGuard } from "../../src/merchant";
import { createHarness } from "../support/harness";

setDefaultTimeout(300_000);

const GROUP = "wallet";
const SHOPS = { a: "https://shop-a.example", b: "https://shop-b.example" } as const;
const SERVICE = "https://zkagent-guards.test"; // its own name: this process may have synced another service called zkagent.test
const work = mkdtempSync(join(tmpdir(), "zkagent-budget-guard-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the SDK's fetch spends at two shops' guards in front of the real service", async () => {
  const h = await createHarness(undefined, { clock: new ManualClock(Date.now()) });
  const owner = await h.newKey("owner");
  const guards: Record<string, ReturnType<typeof zkagentGuard>> = {};
  for (const [name, origin] of Object.entries(SHOPS)) {
    const key = await h.newKey(`shop-${name}`);
    await h.store.setOrigins(key.split("_")[1]!, [origin]);
    guards[origin] = zkagentGuard({
      url: "http://zkagent.test",
      publicUrl: SERVICE,
      apiKey: key,
      action: "purchase",
      context: bodyFields(["amount", "currency"]),
      accept: ["budget"],
      budgets: [GROUP],
      origin,
      fetch: (request) => h.app.handle(request),
    });
  }
  expect((await h.call("POST", "/v1/groups", { key: owner, body: { group_id: GROUP, budget: true } })).status).toBe(201);
  const mandate = {
    limits: [{ currency: "EUR", max_amount: "30.00", max_total: "100.00", period: "day" }],
    merchants: Object.values(SHOPS),
    valid_until: "2035-01-01T00:00:00Z",
  };
  const secret = 0x5eed_0001n;
  let membership: ReturnType<typeof membershipOf> | undefined;
  for (const s of [secret, secret + 1n, secret + 2n]) {
    const enrolled = await h.call("POST", `/v1/groups/${GROUP}/enrolments`, { key: owner, body: { identity_commitment: H1(s).toString(), mandate } });
    expect(enrolled.status).toBe(201);
    if (s === secret) membership = membershipOf(SERVICE, enrolled.body, s.toString());
  }
  const dir = join(work, "budgets");
  saveMembership(dir, membership!);

  const sessions: unknown[] = [];
  const transport = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const guard = guards[url.origin];
    if (guard) {
      const result = await guard.verify(request);
      if (!result.ok) return result.response;
      sessions.push(result.session);
      return Response.json({ ordered: true });
    }
    if (url.origin !== SERVICE) throw new Error(`no route to ${url.origin}`);
    return h.app.handle(new Request(`http://zkagent.test${url.pathname}${url.search}`, { method: request.method, headers: request.headers }));
  };
  const order = (origin: string, amount: string) =>
    zkagentFetch({
      identity: { budget_group: GROUP },
      trustedServices: [SERVICE],
      treeCache: false,
      precompute: false,
      maxAmount: { amount: "30", currency: "EUR" },
      budget: { dir, notesCache: false, checkpointPollMs: 100 },
      fetch: transport,
    })(`${origin}/orders`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount, currency: "EUR" }) });

  test("20 EUR at shop A, then 15 EUR at shop B from its note: both 200, budget sessions naming no member", async () => {
    const first = await order(SHOPS.a, "20.00");
    expect(first.status).toBe(200);
    setTimeout(() => void new NotesCheckpointer(h.store, () => h.deps.clock.now()).tick(), 500);
    const second = await order(SHOPS.b, "15.00");
    expect(second.status).toBe(200);
    expect(sessions).toMatchObject([
      { scheme: "budget", group_id: GROUP, amount: "20.00", currency: "EUR" },
      { scheme: "budget", group_id: GROUP, amount: "15.00", currency: "EUR" },
    ]);
    for (const session of sessions) expect(JSON.stringify(session)).not.toContain(membership!.file.leaf);
    const feed = (await h.call("GET", `/v1/groups/${GROUP}/notes`)).body;
    expect(feed.notes.length).toBe(2);
    const chains = Object.values(Wallet.open(dir, membership!).chains());
    expect(chains.map((c) => ({ spent: c.note?.spent, index: c.note?.index, pending: c.pending }))).toEqual([{ spent: "3500", index: 2, pending: null }]);
  });
});
