// The agent's budget spends end to end against the real service over HTTP
// (app.handle, no port): a member enrolled through the enrolment route keeps
// its membership (the leaf recomputed from the service's answer), spends 20
// EUR at shop A, then 15 EUR at shop B from the first spend's note once the
// service's checkpointer has recorded a checkpoint holding it, with the
// second answer lost on the way back and recovered from the notes feed; the
// service's own decisions and notes agree with the wallet.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { forgetNotes } from "../../src/agent/budget/feed";
import { membershipOf } from "../../src/agent/budget/membership";
import { type SpendOutcome, spendBudget } from "../../src/agent/budget/spend";
import { Wallet } from "../../src/agent/budget/wallet";
import { NotesCheckpointer } from "../../src/budgets/checkpoints";
import { H1 } from "../../src/budgets/hash";
import { ManualClock } from "../../src/clock";
import { createHarness, type Harness } from "../support/harness";

setDefaultTimeout(300_000);

const NOW = Date.UTC(2026, 10, 28, 12, 30);
const SERVICE = "https://zkagent.test";
const SHOP_A = "https://shop-a.example";
const SHOP_B = "https://shop-b.example";
const keyIdOf = (key: string) => key.split("_")[1]!;
const work = mkdtempSync(join(tmpdir(), "zkagent-budget-service-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("budget spends by the agent against the real service", () => {
  let h: Harness;
  const keys: Record<string, string> = {};
  const secret = 0xabcdef_0123_4567n;
  let membership: ReturnType<typeof membershipOf>;
  const dir = join(work, "alice");
  const transport = ((input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    return h.app.handle(new Request(`http://zkagent.test${url.pathname}${url.search}`, { method: request.method, headers: request.headers }));
  }) as typeof fetch;
  const options = () => ({
    dir,
    fetch: transport,
    treeCache: false as const,
    notesCache: false as const,
    now: () => h.deps.clock.now(),
    checkpointPollMs: 100,
    precompute: false,
  });

  const challenge = async (shop: string, origin: string, amount: string) => {
    const context = { amount, currency: "EUR", "@request": { origin, method: "POST", path: "/buy" } };
    const res = await h.call("POST", "/v1/verify/challenge", { key: keys[shop], body: { group_id: "wallet", action: "purchase", context } });
    expect(res.status).toBe(200);
    return { challenge: res.body, context };
  };
  const submit = async (shop: string, challengeId: string, proof: unknown): Promise<SpendOutcome> => {
    const res = await h.call("POST", "/v1/verify/proof", { key: keys[shop], body: { challenge_id: challengeId, proof } });
    if (res.status === 200 && res.body.verified === true) return "accepted";
    return res.body.reason === "already_spent" ? "already_spent" : "refused";
  };

  beforeAll(async () => {
    h = await createHarness(undefined, { clock: new ManualClock(NOW) });
    keys.owner = await h.newKey("owner");
    keys.a = await h.newKey("shop-a");
    keys.b = await h.newKey("shop-b");
    await h.store.setOrigins(keyIdOf(keys.a), [SHOP_A]);
    await h.store.setOrigins(keyIdOf(keys.b), [SHOP_B]);
    expect((await h.call("POST", "/v1/groups", { key: keys.owner, body: { group_id: "wallet", budget: true } })).status).toBe(201);
    const mandate = {
      limits: [{ currency: "EUR", max_amount: "30.00", max_total: "100.00", period: "day" }],
      merchants: [SHOP_A, SHOP_B],
      valid_until: "2027-06-01T00:00:00Z",
    };
    for (const s of [secret, secret + 1n, secret + 2n]) {
      const enrolled = await h.call("POST", "/v1/groups/wallet/enrolments", { key: keys.owner, body: { identity_commitment: H1(s).toString(), mandate } });
      expect(enrolled.status).toBe(201);
      if (s === secret) membership = membershipOf(SERVICE, enrolled.body, s.toString());
    }
    forgetNotes();
  });

  test("the membership from the service's enrolment answer: its leaf is the one the group's tree holds", async () => {
    const leaves = (await h.call("GET", "/v1/groups/wallet/members")).body.members;
    expect(leaves[membership.file.leaf_index]).toBe(membership.file.leaf);
    expect(membership.terms).toMatchObject({ currency: "EUR", max: 3000n, budget: 10_000n, kind: "day", payees: [SHOP_A, SHOP_B] });
  });

  test("20 EUR at shop A, then 15 EUR at shop B from its note after a checkpoint, the second answer lost and found in the feed", async () => {
    const first = await challenge("a", SHOP_A, "20.00");
    const one = await spendBudget(
      {
        membership,
        challenge: first.challenge,
        service: SERVICE,
        origin: SHOP_A,
        action: "purchase",
        context: first.context,
        send: (p) => submit("a", first.challenge.challenge_id, p),
      },
      options(),
    );
    const status = await h.call("GET", `/v1/verify/status/${first.challenge.challenge_id}`, { key: keys.a });
    expect(status.body).toMatchObject({ status: "verified", spend: { nullifier: one.nullifier, commitment: one.commitment, amount: "20.00", payee: SHOP_A } });

    // The second: the first's note is in the feed, not yet in a checkpoint: the agent waits for the checkpointer.
    const second = await challenge("b", SHOP_B, "15.00");
    const checkpointer = new NotesCheckpointer(h.store, () => h.deps.clock.now());
    setTimeout(() => void checkpointer.tick(), 600);
    let decided: SpendOutcome | undefined;
    const two = await spendBudget(
      {
        membership,
        challenge: second.challenge,
        service: SERVICE,
        origin: SHOP_B,
        action: "purchase",
        context: second.context,
        send: async (p) => {
          decided = await submit("b", second.challenge.challenge_id, p);
          throw new Error("the answer was lost on the way back");
        },
      },
      options(),
    );
    expect(decided).toBe("accepted");
    expect(two.nullifier).not.toBe(one.nullifier);
    const feed = (await h.call("GET", "/v1/groups/wallet/notes")).body;
    expect(feed.notes).toEqual([one.commitment, two.commitment]);
    expect(two.notes_root).toBe(feed.checkpoints[feed.checkpoints.length - 1].root);
    expect(two.notes_root).not.toBe(one.notes_root);
    // The wallet holds the second's note: 35.00 spent today, leaf 2 of the notes tree; nothing in flight.
    const chains = Object.values(Wallet.open(dir, membership).chains());
    expect(chains.map((c) => ({ note: c.note && { spent: c.note.spent, index: c.note.index }, pending: c.pending }))).toEqual([
      { note: { spent: "3500", index: 2 }, pending: null },
    ]);
  });

  test("30 + 30 more today, then 20 EUR passes the day's 100 EUR: refused by the agent from its own terms, before proving", async () => {
    await new NotesCheckpointer(h.store, () => h.deps.clock.now()).tick();
    const c = await challenge("a", SHOP_A, "30.00");
    await spendBudget(
      {
        membership,
        challenge: c.challenge,
        service: SERVICE,
        origin: SHOP_A,
        action: "purchase",
        context: c.context,
        send: (p) => submit("a", c.challenge.challenge_id, p),
      },
      options(),
    );
    const d = await challenge("b", SHOP_B, "30.00");
    await new NotesCheckpointer(h.store, () => h.deps.clock.now()).tick();
    await spendBudget(
      {
        membership,
        challenge: d.challenge,
        service: SERVICE,
        origin: SHOP_B,
        action: "purchase",
        context: d.context,
        send: (p) => submit("b", d.challenge.challenge_id, p),
      },
      options(),
    );
    await new NotesCheckpointer(h.store, () => h.deps.clock.now()).tick();
    const e = await challenge("a", SHOP_A, "20.00");
    const refused = await spendBudget(
      { membership, challenge: e.challenge, service: SERVICE, origin: SHOP_A, action: "purchase", context: e.context },
      options(),
    ).catch((error) => error);
    expect(refused).toMatchObject({ code: "terms" });
    expect(refused.message).toMatch(/9500 of 10000 minor units spent this day; 2000 more passes the budget/);
  });

  test("a second copy of the secret spends the same period's start with another amount: already_spent, not in the feed, so that wallet stops", async () => {
    // The same membership in another wallet (another machine, a restored backup): it knows no note of today's chain.
    const copy = { ...options(), dir: join(work, "copy") };
    await new NotesCheckpointer(h.store, () => h.deps.clock.now()).tick();
    const c = await challenge("a", SHOP_A, "5.00");
    const outcome: SpendOutcome[] = [];
    const error = await spendBudget(
      {
        membership,
        challenge: c.challenge,
        service: SERVICE,
        origin: SHOP_A,
        action: "purchase",
        context: c.context,
        send: async (p) => {
          outcome.push(await submit("a", c.challenge.challenge_id, p));
          return outcome[0]!;
        },
      },
      copy,
    ).catch((e) => e);
    expect(outcome).toEqual(["already_spent"]);
    expect(error).toMatchObject({ code: "compromised" });
    expect(Wallet.open(copy.dir, membership).stopped).toMatch(/someone else holds this membership's secret/);
  });
});
