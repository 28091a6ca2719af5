// The agent's budget spend (src/agent/budget/spend.ts) against a stand-in
// service on a real loopback port (the members route of
// test/agent/group-feed-server.ts, the notes feed of the wire contract
// beside it): real proofs from the pinned artifacts, checked by the
// project's verifier against the public signals a service rebuilds; two
// spends in sequence at two origins, the second from the first's note once
// a checkpoint holds it; a lost answer recovered from the feed; the roots a
// member names are the same at leaf 0 and at leaf n−1; and every check
// before proving refuses, naming what is wrong.
import { afterAll, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { BUDGET_CIRCUIT_ID, BUDGET_PINS } from "../../src/agent/budget/artifacts";
import { BudgetSpendError } from "../../src/agent/budget/error";
import { forgetNotes } from "../../src/agent/budget/feed";
import { membershipOf } from "../../src/agent/budget/membership";
import { type BudgetSpendProof, type SpendOutcome, spendBudget } from "../../src/agent/budget/spend";
import { Wallet } from "../../src/agent/budget/wallet";
import { budgetGroup, currencyField, NOTES_GENESIS_LEAF, periodsAt } from "../../src/budgets/encoding";
import { chainOf } from "../../src/budgets/notes";
import { spendPublicSignals } from "../../src/budgets/statement";
import { LeanTree } from "../../src/groups/lean-tree";
import { Groth16Verifier } from "../../src/verifier";
import { zkagentFetch } from "../../src/agent/fetch";
import { saveMembership } from "../../src/agent/budget/membership";
import { formatAuth, fromBase64url, parseAuth, toBase64url } from "../../src/http-auth/scheme";
import { boundRequest } from "../../src/http-auth/statement";
import { canonicalJson, type JsonObject } from "../../src/identity/encoding";
import { ChallengeError } from "../../src/agent/checks";
import { baseTerms, budgetChallengeFor, NOW, SHOP_A, SHOP_B, secret } from "../support/budget-spend";
import { enrolmentAnswer, GROUP } from "./budget-member";
import { startFeedServer } from "./group-feed-server";

setDefaultTimeout(300_000);

const work = mkdtempSync(join(tmpdir(), "zkagent-budget-spend-"));
const members = startFeedServer();
afterAll(() => {
  members.stop();
  rmSync(work, { recursive: true, force: true });
});
const vk = JSON.parse(readFileSync("circuits/artifacts/budget_spend/verification_key.json", "utf8"));
const verifier = await Groth16Verifier.fromVerificationKey(vk);

// Members: one at leaf 0, one at the last leaf, others between (one of them pays any payee).
const OTHER = 0x77n;
const ANY = 0x99n;
const member = membershipOf(members.url, enrolmentAnswer(), secret.toString());
const anyPayee = membershipOf(members.url, enrolmentAnswer({ ...baseTerms, payees: null, mandate: 778n }, ANY, 0x66n, 5), ANY.toString());
const last = membershipOf(members.url, enrolmentAnswer(baseTerms, OTHER, 0x55n, 6), OTHER.toString());
members.add(GROUP, [member.leaf, 11n, 12n, 13n, 14n, anyPayee.leaf, last.leaf]);

// The service's notes feed: leaf 0 the genesis, then every accepted note; checkpoints taken when the test says.
const notes: bigint[] = [NOTES_GENESIS_LEAF];
const checkpoints: { sequence: number; size: number; root: string; at: string }[] = [];
const checkpoint = () => {
  checkpoints.push({ sequence: checkpoints.length, size: notes.length, root: LeanTree.fromLeaves(notes).root.toString(), at: new Date().toISOString() });
};
checkpoint();
const nullifiers = new Set<string>();
const chain = chainOf(budgetGroup(GROUP), currencyField("EUR"), "day", periodsAt(NOW), baseTerms.mandate);

async function notesFeed(url: URL): Promise<Response> {
  const offset = Number(url.searchParams.get("offset") ?? "1");
  const page = notes.slice(offset, offset + 1000);
  const next = offset + page.length < notes.length ? offset + page.length : null;
  return Response.json({ group_id: GROUP, size: notes.length, offset, notes: page.map(String), next_offset: next, checkpoints: checkpoints.slice(-36) });
}
const transport = (async (input: string | URL | Request, init?: RequestInit) => {
  const url = new URL(input instanceof Request ? input.url : input.toString());
  if (url.pathname.endsWith("/notes")) return notesFeed(url);
  return fetch(input, init);
}) as typeof fetch;

let nonces = 0;
function challengeFor(origin: string, amount = "20.00", currency = "EUR", at = NOW, context: JsonObject = { amount, currency, item: "tea" }) {
  const nonce = (++nonces).toString(16).padStart(62, "0");
  const minor = BigInt(Math.round(Number(amount) * 100));
  const last = checkpoints[checkpoints.length - 1]!;
  const issued = budgetChallengeFor({ id: `ch_${nonces}`, nonce, group: GROUP, payee: origin, amount: minor.toString(), currency, context, at, notes: last });
  return { ...issued, action: "purchase", context };
}

type Challenge = ReturnType<typeof challengeFor>;

/** The service's deciding step, as the wire contract orders it: the proof against the signals rebuilt from the challenge; the roots; the nullifier once. */
function decide(challenge: Challenge, proof: BudgetSpendProof): SpendOutcome {
  const b = challenge.budget;
  const signals = spendPublicSignals(BigInt(proof.nullifier), BigInt(proof.commitment), {
    group: BigInt(b.group),
    rootEnrolment: BigInt(proof.enrolment_root),
    rootNotes: BigInt(proof.notes_root),
    periods: { day: BigInt(b.periods.day), week: BigInt(b.periods.week), month: BigInt(b.periods.month), minute: BigInt(b.periods.minute) },
    amount: BigInt(b.amount),
    currency: BigInt(b.currency_field),
    payee: BigInt(b.payee_field),
    ctx: BigInt(b.ctx),
  });
  if (!verifier.verify(proof.groth16, signals).ok) return "refused";
  if (proof.enrolment_root !== members.state(GROUP).root.toString()) return "refused";
  if (!checkpoints.some((c) => c.root === proof.notes_root)) return "refused";
  if (nullifiers.has(proof.nullifier)) return "already_spent";
  nullifiers.add(proof.nullifier);
  notes.push(BigInt(proof.commitment));
  return "accepted";
}

const options = (dir: string) => ({
  dir,
  fetch: transport,
  allowInsecureLoopback: true,
  treeCache: false as const,
  notesCache: false as const,
  now: () => NOW,
  checkpointPollMs: 200,
  precompute: false,
});

beforeEach(() => forgetNotes());

describe("spends against the service's feeds, proved and verified", () => {
  const dir = join(work, "member");
  const proofs: BudgetSpendProof[] = [];

  test("the pins are the shipped artifacts' SHA-256, and the circuit id is the service's rule", () => {
    for (const kind of ["wasm", "zkey"] as const) {
      const bytes = readFileSync(`circuits/artifacts/budget_spend/budget_spend.${kind}`);
      expect(createHash("sha256").update(bytes).digest("hex")).toBe(BUDGET_PINS[kind].sha256);
      expect(bytes.length).toBe(BUDGET_PINS[kind].bytes);
    }
    expect(BUDGET_CIRCUIT_ID).toBe(`budget_spend-${BUDGET_PINS.zkey.sha256.slice(0, 16)}`);
  });

  test("a first spend at shop A: the proof verifies against the signals the service rebuilds; the note is recorded", async () => {
    const challenge = challengeFor(SHOP_A);
    const proof = await spendBudget(
      { membership: member, challenge, service: members.url, origin: `${SHOP_A}/orders`, send: async (p) => decide(challenge, p) },
      options(dir),
    );
    proofs.push(proof);
    expect(notes.map(String)).toContain(proof.commitment);
    expect(proof.notes_root).toBe(checkpoints[0]!.root);
    expect(Wallet.open(dir, member).chain(chain).note).toMatchObject({ spent: "2000", index: 1 });
  });

  test("a second spend at shop B waits for a checkpoint holding the first's note, then spends from it; a lost answer is found in the feed", async () => {
    const challenge = challengeFor(SHOP_B, "15.00");
    setTimeout(checkpoint, 1000); // the service's checkpointer, a second later
    const started = Date.now();
    const proof = await spendBudget(
      {
        membership: member,
        challenge,
        service: members.url,
        origin: SHOP_B,
        send: async (p) => {
          decide(challenge, p);
          throw new Error("the connection dropped before the answer");
        },
      },
      options(dir),
    );
    expect(Date.now() - started).toBeGreaterThan(900);
    expect(proof.notes_root).toBe(checkpoints[1]!.root);
    expect(proof.nullifier).not.toBe(proofs[0]!.nullifier);
    expect(notes.map(String)).toContain(proof.commitment);
    // The wallet resolved the lost answer from the feed: its note is the second's, 35.00 spent.
    const wallet = Wallet.open(dir, member);
    expect(wallet.chain(chain)).toMatchObject({ note: { spent: "3500", index: 2 }, pending: null, attempts: [] });
    expect(wallet.stopped).toBeNull();
    proofs.push(proof);
  });

  test("the roots a member names are the same at leaf 0 and at leaf n−1", async () => {
    checkpoint();
    const challenge = challengeFor(SHOP_A, "10.00");
    const a = await spendBudget({ membership: member, challenge, service: members.url, origin: SHOP_A }, options(join(work, "member")));
    const b = await spendBudget({ membership: last, challenge, service: members.url, origin: SHOP_A }, options(join(work, "last")));
    expect([a.enrolment_root, a.notes_root]).toEqual([b.enrolment_root, b.notes_root]);
    expect(a.enrolment_root).toBe(members.state(GROUP).root.toString());
    expect(a.notes_root).toBe(checkpoints[checkpoints.length - 1]!.root);
    expect(decide(challenge, a)).toBe("accepted");
    expect(decide(challenge, b)).toBe("accepted");
  });
});

describe("refused before anything is proved", () => {
  const dir = join(work, "refusals");
  const attempt = (challenge: unknown, origin: string, m = member) =>
    spendBudget({ membership: m, challenge, service: members.url, origin }, options(dir)).then(
      () => "proved",
      (error) => (error instanceof BudgetSpendError ? `${error.code}: ${error.message}` : `${(error as Error).name}: ${(error as Error).message}`),
    );

  test("a challenge whose public values are not the ones the agent computes", async () => {
    const c = challengeFor(SHOP_A);
    expect(await attempt(c, SHOP_B)).toMatch(/^challenge: the challenge pays https:\/\/shop-a.example, the agent is paying https:\/\/shop-b.example/);
    expect(await attempt({ ...c, budget: { ...c.budget, payee_field: "5" } }, SHOP_A)).toMatch(/payee_field is not the field value/);
    expect(await attempt({ ...c, budget: { ...c.budget, amount: "200" } }, SHOP_A)).toMatch(/amount is 200 minor units, the context's 2000/);
    expect(await attempt({ ...c, budget: { ...c.budget, currency: "USD" } }, SHOP_A)).toMatch(/currency is USD/);
    expect(await attempt({ ...c, budget: { ...c.budget, ctx: "5" } }, SHOP_A)).toMatch(/ctx is not the one its nonce, action and context give/);
    expect(await attempt({ ...c, budget: { ...c.budget, group: "5" } }, SHOP_A)).toMatch(/budget.group is not the value of group/);
    const periods = { ...c.budget.periods, day: String(BigInt(c.budget.periods.day) - 1n) };
    expect(await attempt({ ...c, budget: { ...c.budget, periods } }, SHOP_A)).toMatch(/day .* is not the day of its minute/);
    const yesterday = challengeFor(SHOP_A, "20.00", "EUR", NOW - 2 * 86_400_000);
    expect(await attempt(yesterday, SHOP_A)).toMatch(/day \d+ is more than one from this agent's/);
    expect(await attempt({ ...c, circuit_id: "budget_spend-0000000000000000" }, SHOP_A)).toMatch(/not the pinned/);
    expect(await attempt({ ...c, budget: undefined }, SHOP_A)).toMatch(/budget must be an object/);
  });

  test("a spend the member's own terms refuse: named, never proved", async () => {
    expect(await attempt(challengeFor(SHOP_A, "30.01"), SHOP_A)).toMatch(/^terms: .*3001 minor units is outside the per-purchase range 1–3000/);
    expect(await attempt(challengeFor("https://shop-c.example"), "https://shop-c.example")).toMatch(/shop-c.example is not an allowed payee/);
    expect(await attempt(challengeFor(SHOP_A, "20.00", "USD"), SHOP_A)).toMatch(/they are in EUR, the spend in USD/);
  });
});

describe("the SDK's fetch answers a merchant's budget 401 with a spend", () => {
  const SHOP = "https://shop-m.example";
  const dir = join(work, "fetch");
  saveMembership(dir, anyPayee);
  const issued = new Map<string, Challenge>();
  const seen: string[] = [];

  /** A merchant in front of the stand-in service, as the guard's exchange answers (docs/http-auth.md). */
  async function shop(request: Request): Promise<Response> {
    const auth = request.headers.get("authorization");
    const params = auth === null ? null : parseAuth(auth)?.[0];
    seen.push(auth === null ? "none" : params?.challenge_id ? `credentials ${Object.keys(params).sort().join(",")}` : `claim ${params?.budget}`);
    if (!params)
      return Response.json({ reason: "claim_required" }, { status: 401, headers: { "www-authenticate": formatAuth({ realm: "zkagent", budget: GROUP }) } });
    if (params.challenge_id === undefined) {
      const body = (await request.json()) as JsonObject;
      const context = { amount: body.amount!, currency: body.currency!, "@request": boundRequest(request.method, request.url) } as unknown as JsonObject;
      const c = challengeFor(SHOP, String(body.amount), String(body.currency), Date.now(), context);
      issued.set(c.challenge_id, c);
      const header = formatAuth({
        realm: "zkagent",
        challenge_id: c.challenge_id,
        nonce: c.nonce,
        action: c.action,
        context: toBase64url(canonicalJson(context)),
        group_id: GROUP,
        circuit_id: c.circuit_id,
        circuit: `${members.url}/v1/circuits/${c.circuit_id}`,
        expires_in: "300",
        timestamp: String(c.timestamp),
      });
      return Response.json({ reason: "proof_required", challenge: c }, { status: 401, headers: { "www-authenticate": header } });
    }
    const c = issued.get(params.challenge_id)!;
    const outcome = decide(c, JSON.parse(fromBase64url(params.proof!)!));
    if (outcome === "accepted") return Response.json({ ok: true, spend: "recorded" });
    return Response.json({ reason: outcome }, { status: 401, headers: { "www-authenticate": formatAuth({ realm: "zkagent", error: outcome }) } });
  }

  const transportWithShop = (request: Request) => (new URL(request.url).origin === SHOP ? shop(request) : transport(request));
  const agentFetch = () =>
    zkagentFetch({
      identity: {}, // no claim named: the 401's budget offer is taken, as a membership of it is kept
      trustedServices: [members.url],
      allowInsecureLoopback: true,
      treeCache: false,
      precompute: false,
      maxAmount: { amount: "30", currency: "EUR" },
      budget: { dir, notesCache: false, checkpointPollMs: 200 },
      fetch: transportWithShop,
    });
  const order = (amount: string) =>
    agentFetch()(`${SHOP}/orders`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ amount, currency: "EUR" }) });

  test("claim offered → challenge → spend sent after the wallet recorded it → 200; the note is the wallet's", async () => {
    const before = notes.length;
    const response = await order("20.00");
    expect(response.status).toBe(200);
    expect(seen).toEqual(["none", `claim ${GROUP}`, "credentials budget,challenge_id,proof"]);
    expect(notes.length).toBe(before + 1);
    const wallet = Wallet.open(dir, anyPayee);
    const chains = Object.values(wallet.chains());
    expect(chains.map((c) => ({ spent: c.note?.spent, index: c.note?.index, pending: c.pending }))).toEqual([{ spent: "2000", index: before, pending: null }]);
  });

  test("maxAmount still applies: a 31 EUR order is refused before anything is proved or sent", async () => {
    seen.length = 0;
    const before = notes.length;
    const error = await order("31.00").catch((e) => e);
    expect(error).toBeInstanceOf(ChallengeError);
    expect(error.code).toBe("limit");
    expect(seen).toEqual(["none", `claim ${GROUP}`]);
    expect(notes.length).toBe(before);
  });
});
