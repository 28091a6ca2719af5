// The example shop (examples/shop, ZKAGENT_BUDGET_GROUPS) in front of the
// real zkagent service on a loopback port, paid by the agent SDK's budget
// spend with a real proof: the order is 201 naming the group, the spend, the
// amount and the currency and no member; the receipt names no member; the
// service's status of the session carries the spend; the same credentials
// sent again are refused (challenge_used), and the proof moved to another
// challenge is refused by the service (proof_rejected), both without a
// second note.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { membershipOf, saveMembership } from "../../src/agent/budget/membership";
import { zkagentFetch } from "../../src/agent/fetch";
import { NotesCheckpointer } from "../../src/budgets/checkpoints";
import { H1 } from "../../src/budgets/hash";
import { ManualClock } from "../../src/clock";
import { parseAuth } from "../../src/http-auth/scheme";
import { createShop } from "../../examples/shop/server";
import { createHarness } from "../support/harness";

setDefaultTimeout(300_000);

const GROUP = "family-budget";
const SHOP = "https://shop-a.example";
const work = mkdtempSync(join(tmpdir(), "zkagent-budget-shop-"));

describe("the example shop paid from a member's budget, against the real service", async () => {
  const h = await createHarness(undefined, { clock: new ManualClock(Date.now()) });
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request) => h.app.handle(request) });
  const service = `http://127.0.0.1:${server.port}`;
  afterAll(() => {
    server.stop(true);
    rmSync(work, { recursive: true, force: true });
  });
  const owner = await h.newKey("owner");
  const shopKey = await h.newKey("shop");
  await h.store.setOrigins(shopKey.split("_")[1]!, [SHOP]);
  expect((await h.call("POST", "/v1/groups", { key: owner, body: { group_id: GROUP, budget: true } })).status).toBe(201);
  const mandate = { limits: [{ currency: "EUR", max_amount: "30.00", max_total: "100.00", period: "day" }], valid_until: "2035-01-01T00:00:00Z" };
  const secret = 0x5eed_0042n;
  const enrolments: { leaf: string; identity_commitment: string; salt: string }[] = [];
  for (const s of [secret, secret + 1n, secret + 2n]) {
    const enrolled = await h.call("POST", `/v1/groups/${GROUP}/enrolments`, { key: owner, body: { identity_commitment: H1(s).toString(), mandate } });
    expect(enrolled.status).toBe(201);
    enrolments.push(enrolled.body);
  }
  const dir = join(work, "budgets");
  saveMembership(dir, membershipOf(service, enrolments[0], secret.toString()));

  const shop = createShop({ zkagentUrl: service, apiKey: shopKey, budgets: [GROUP], origin: SHOP });
  const sent: Request[] = [];
  /** When set, the agent's credentials are sent to the shop twice at once: the statuses of both land here. */
  let race: string[] | null = null;
  const transport = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (url.origin === SHOP) {
      sent.push(request.clone());
      const body = await request.text();
      const forward = () => shop.request(`http://127.0.0.1${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body });
      if (race === null || !request.headers.get("authorization")?.includes("proof=")) return forward();
      const answers = await Promise.all([forward(), forward()]);
      const served = answers.find((answer) => answer.status === 201) ?? answers[0]!;
      for (const answer of answers) race.push(answer === served ? String(answer.status) : `${answer.status} ${(await answer.json()).reason}`);
      return served;
    }
    return fetch(request);
  };
  const agentFetch = zkagentFetch({
    identity: { budget_group: GROUP },
    trustedServices: [service],
    allowInsecureLoopback: true,
    treeCache: false,
    precompute: false,
    maxAmount: { amount: "30", currency: "EUR" },
    budget: { dir, notesCache: false, checkpointPollMs: 100 },
    fetch: transport,
  });
  const order = JSON.stringify({ amount: "20.00", currency: "EUR" });

  test("201 naming the group, the spend and the price, no member; the receipt and the status carry the spend; a replay and a moved proof are refused", async () => {
    const response = await agentFetch(`${SHOP}/orders`, { method: "POST", headers: { "content-type": "application/json" }, body: order });
    const body = await response.json();
    expect(response.status).toBe(201);
    expect(body).toEqual({
      order_id: expect.stringMatching(/^ord_/),
      scheme: "budget",
      group_id: GROUP,
      spend: { nullifier: expect.stringMatching(/^\d+$/), commitment: expect.stringMatching(/^\d+$/) },
      amount: "20.00",
      currency: "EUR",
      receipt: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
    });
    // The exchange: the offer, the claim's challenge, the credentials.
    expect(sent.map((r) => parseAuth(r.headers.get("authorization") ?? "")?.[0] ?? {}).map((p) => Object.keys(p).sort().join(","))).toEqual([
      "",
      "budget",
      "budget,challenge_id,proof",
    ]);
    // Nothing the shop holds names the member: no leaf, no identity commitment, no salt.
    const receipt = JSON.parse(Buffer.from(body.receipt.split(".")[1], "base64url").toString("utf8"));
    const held = JSON.stringify({ body, receipt });
    for (const e of enrolments) for (const value of [e.leaf, e.identity_commitment, e.salt]) expect(held).not.toContain(value);
    expect(held).toContain(body.spend.nullifier);
    const credentials = sent[2]!.headers.get("authorization")!;
    const challengeId = parseAuth(credentials)![0]!.challenge_id!;
    const status = await h.call("GET", `/v1/verify/status/${challengeId}`, { key: shopKey });
    expect(status.body).toMatchObject({ status: "verified", group_id: GROUP, agent_id: body.spend.nullifier, spend: { nullifier: body.spend.nullifier } });

    const post = (authorization: string) =>
      shop.request("http://127.0.0.1/orders", { method: "POST", headers: { "content-type": "application/json", authorization }, body: order });
    // The same credentials again: the challenge is used.
    const replay = await post(credentials);
    expect(replay.status).toBe(403);
    expect((await replay.json()).reason).toBe("challenge_used");
    // The proof moved to a fresh challenge of the same request: the service's verdict, the note not spent twice.
    const fresh = await post(`ZKAgent budget="${GROUP}"`);
    expect(fresh.status).toBe(401);
    const freshId = parseAuth(fresh.headers.get("www-authenticate")!)![0]!.challenge_id!;
    const moved = await post(credentials.replace(/challenge_id="[^"]+"/, `challenge_id="${freshId}"`));
    expect(moved.status).toBe(403);
    expect(await moved.json()).toMatchObject({ error: "Proof verification failed", reason: "proof_rejected" });
    const feed = (await h.call("GET", `/v1/groups/${GROUP}/notes`)).body;
    expect(feed.notes.length).toBe(1);
  });

  test("one spend's credentials sent twice at once: exactly one order, the other challenge_used; one note more", async () => {
    // The second spend proves from the first's note, once a checkpoint holds it.
    setTimeout(() => void new NotesCheckpointer(h.store, () => h.deps.clock.now()).tick(), 300);
    race = [];
    const response = await agentFetch(`${SHOP}/orders`, { method: "POST", headers: { "content-type": "application/json" }, body: order });
    expect(response.status).toBe(201);
    expect(race.sort()).toEqual(["201", "403 challenge_used"]);
    const feed = (await h.call("GET", `/v1/groups/${GROUP}/notes`)).body;
    expect(feed.notes.length).toBe(2);
  });
});
