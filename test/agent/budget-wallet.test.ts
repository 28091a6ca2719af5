// The agent's budget membership and wallet (src/agent/budget/membership.ts,
// wallet.ts) with real files: the membership's leaf is recomputed, and the
// wallet's state machine is crashed at each transition (the process "dies"
// and a new one reads the wallet back from disk): never a second nullifier
// for one note, never a lost note, one spend in flight per chain, and the
// lock serialising spends across processes.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { budgetGroup, currencyField, periodsAt } from "../../src/budgets/encoding";
import { chainOf, nextRho, noteCommitment, noteNullifier, startNullifier } from "../../src/budgets/notes";
import { BudgetSpendError } from "../../src/agent/budget/error";
import { loadMembership, type Membership, membershipOf, membershipPaths, saveMembership } from "../../src/agent/budget/membership";
import { RESOLVE_MARGIN_MS, Wallet, withWalletLock } from "../../src/agent/budget/wallet";
import { baseTerms, NOW, secret } from "../support/budget-spend";
import { enrolmentAnswer, GROUP } from "./budget-member";

const SERVICE = "https://zk.example";
const root = mkdtempSync(join(tmpdir(), "zkagent-budget-wallet-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, `w${dirs++}`);

const membership = (): Membership => membershipOf(SERVICE, enrolmentAnswer(), secret.toString());
const chain = chainOf(budgetGroup(GROUP), currencyField("EUR"), "day", periodsAt(NOW), baseTerms.mandate);
const EXPIRES = NOW + 300_000;
const AFTER = EXPIRES + RESOLVE_MARGIN_MS + 1;
const none = () => null;
const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    if (error instanceof BudgetSpendError) return error.code;
    throw error;
  }
  return "none";
};

describe("membership", () => {
  test("the enrolment's answer and the secret give the leaf; the terms are read from the packed statement", () => {
    const m = membership();
    expect(m.leaf.toString()).toBe(enrolmentAnswer().leaf);
    expect(m.terms).toEqual({ ...baseTerms, expiresAt: Math.floor(baseTerms.expiresAt / 60) * 60 });
  });

  test("another secret, a changed salt, wider words than the statement, or a tampered statement are refused, naming it", () => {
    expect(() => membershipOf(SERVICE, enrolmentAnswer(), (secret + 1n).toString())).toThrow(/identity_commitment .* is not H1 of this secret/);
    const { identity_commitment: _, ...anonymous } = enrolmentAnswer();
    expect(() => membershipOf(SERVICE, anonymous, (secret + 1n).toString())).toThrow(/leaf .* is not H3/);
    expect(() => membershipOf(SERVICE, { ...enrolmentAnswer(), salt: "7" }, secret.toString())).toThrow(/leaf .* is not H3/);
    const wider = enrolmentAnswer();
    wider.terms.budget = "99999";
    expect(() => membershipOf(SERVICE, wider, secret.toString())).toThrow(/terms.budget is "99999", the statement holds "10000"/);
    const payees = enrolmentAnswer();
    payees.terms.payees = ["https://shop-c.example", "https://shop-a.example"];
    expect(() => membershipOf(SERVICE, payees, secret.toString())).toThrow(/payees are not the payees the statement holds/);
    const tampered = enrolmentAnswer();
    tampered.statement.ta = (BigInt(tampered.statement.ta) + (1n << 64n)).toString();
    expect(() => membershipOf(SERVICE, tampered, secret.toString())).toThrow(/leaf .* is not H3/);
    expect(() => membershipOf(SERVICE, { ...enrolmentAnswer(), statement: undefined }, secret.toString())).toThrow(/no statement/);
    expect(() => membershipOf(SERVICE, enrolmentAnswer(), "0")).toThrow(/secret is 0/);
  });

  test("kept 0600 in a 0700 directory, read back checked; another service's or group's is none", () => {
    const dir = freshDir();
    expect(saveMembership(dir, membership())).toBe(true);
    const { membership: path } = membershipPaths(dir, SERVICE, GROUP);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(loadMembership(dir, `${SERVICE}/`, GROUP)?.leaf).toBe(membership().leaf);
    expect(loadMembership(dir, "https://other.example", GROUP)).toBeNull();
    expect(loadMembership(dir, SERVICE, "grp_other")).toBeNull();
    const file = JSON.parse(readFileSync(path, "utf8"));
    writeFileSync(path, JSON.stringify({ ...file, salt: "8" }));
    expect(() => loadMembership(dir, SERVICE, GROUP)).toThrow(/leaf .* is not H3/);
  });
});

describe("the wallet's state machine, crashed at each transition", () => {
  test("PREPARED is on disk before anything else: a new process finds it and refuses a second spend of the note until it is resolved", () => {
    const dir = freshDir();
    const first = Wallet.open(dir, membership()).prepare(chain, { challengeId: "ch_1", amount: 2000n, expiresAt: EXPIRES });
    expect(first.nullifier).toBe(startNullifier(secret, chain));
    const reborn = Wallet.open(dir, membership());
    expect(reborn.chain(chain).pending?.state).toBe("prepared");
    expect(code(() => reborn.prepare(chain, { challengeId: "ch_2", amount: 500n, expiresAt: EXPIRES }))).toBe("in_flight");
    // Before expiry + margin an absent note proves nothing: the challenge may still be decided.
    expect(reborn.resolve(chain, none, EXPIRES)).toBe(EXPIRES + RESOLVE_MARGIN_MS);
    expect(Wallet.open(dir, membership()).resolve(chain, none, AFTER)).toBe("ready");
    // Absent after expiry: not spent, and the next attempt reveals the same nullifier, whatever its amount.
    const again = Wallet.open(dir, membership()).prepare(chain, { challengeId: "ch_3", amount: 700n, expiresAt: AFTER + 300_000 });
    expect(again.nullifier).toBe(first.nullifier);
  });

  test("a lost answer (crash after SENT) is recovered from the feed: the note is opened from ρ_new = H3(5, s, nf), never lost", () => {
    const dir = freshDir();
    const w = Wallet.open(dir, membership());
    const spend = w.prepare(chain, { challengeId: "ch_1", amount: 2000n, expiresAt: EXPIRES });
    w.mark(chain, "sent");
    // The service accepted it (the note is leaf 5), the process died before it read the answer.
    const feed = (cm: bigint) => (cm === spend.commitment ? 5 : null);
    const reborn = Wallet.open(dir, membership());
    expect(reborn.chain(chain).pending?.state).toBe("sent");
    expect(reborn.resolve(chain, feed, NOW)).toBe("ready"); // found: no need to wait for expiry
    const note = Wallet.open(dir, membership()).chain(chain).note!;
    const rho = nextRho(secret, spend.nullifier);
    expect(note).toEqual({ spent: "2000", rho: rho.toString(), commitment: noteCommitment(secret, chain, 2000n, rho).toString(), index: 5 });
    const next = Wallet.open(dir, membership()).prepare(chain, { challengeId: "ch_2", amount: 1000n, expiresAt: EXPIRES });
    expect(next.nullifier).toBe(noteNullifier(secret, rho));
    expect(next.nullifier).not.toBe(spend.nullifier);
    expect(next.next.spent).toBe(3000n);
  });

  test("UNKNOWN (no answer) resolves the same way; REFUSED keeps the note and the attempt, so a false refusal is found on already_spent", () => {
    const dir = freshDir();
    let w = Wallet.open(dir, membership());
    const one = w.prepare(chain, { challengeId: "ch_1", amount: 2000n, expiresAt: EXPIRES });
    w.mark(chain, "sent");
    w.refused(chain); // the merchant said no…
    w = Wallet.open(dir, membership());
    expect(w.chain(chain)).toMatchObject({ note: null, pending: null, attempts: [{ challenge_id: "ch_1", state: "refused" }] });
    const two = w.prepare(chain, { challengeId: "ch_2", amount: 1500n, expiresAt: EXPIRES });
    expect(two.nullifier).toBe(one.nullifier); // one note, one nullifier
    w.mark(chain, "unknown");
    // …but the service had accepted the first: the second meets already_spent, and the first's note is in the feed.
    w = Wallet.open(dir, membership());
    w.alreadySpent(chain, (cm) => (cm === one.commitment ? 9 : null));
    expect(Wallet.open(dir, membership()).chain(chain)).toMatchObject({ note: { spent: "2000", index: 9 }, pending: null, attempts: [] });
  });

  test("already_spent with none of the wallet's notes in the feed: someone else holds the secret, and the wallet stops for good", () => {
    const dir = freshDir();
    const w = Wallet.open(dir, membership());
    w.prepare(chain, { challengeId: "ch_1", amount: 2000n, expiresAt: EXPIRES });
    w.mark(chain, "sent");
    expect(code(() => w.alreadySpent(chain, none))).toBe("compromised");
    const reborn = Wallet.open(dir, membership());
    expect(reborn.stopped).toMatch(/someone else holds this membership's secret/);
    expect(code(() => reborn.prepare(chain, { challengeId: "ch_2", amount: 1n, expiresAt: EXPIRES }))).toBe("compromised");
  });

  test("every crash point over a run of spends: each note shows one nullifier, and every accepted spend's note is recovered", () => {
    // A run of three spends where the service accepts each; the process dies after step k of the run.
    const steps = ["prepare", "sent", "answer"] as const;
    for (let spends = 1; spends <= 3; spends++) {
      for (const crashAt of steps) {
        const dir = freshDir();
        const accepted = new Map<bigint, number>(); // the service's notes feed
        const nullifiersByNote = new Map<string, Set<bigint>>();
        let index = 1;
        for (let i = 0; i < spends; i++) {
          const last = i === spends - 1;
          let w = Wallet.open(dir, membership());
          expect(w.resolve(chain, (cm) => accepted.get(cm) ?? null, AFTER + i * 1e6)).toBe("ready");
          const noteKey = JSON.stringify(w.chain(chain).note);
          const spend = w.prepare(chain, { challengeId: `ch_${i}`, amount: 1000n, expiresAt: AFTER + i * 1e6 });
          const set = nullifiersByNote.get(noteKey) ?? new Set();
          nullifiersByNote.set(noteKey, set.add(spend.nullifier));
          if (last && crashAt === "prepare") break; // died before sending: nothing reached the service
          w.mark(chain, "sent");
          accepted.set(spend.commitment, index++);
          if (last && crashAt === "sent") break; // died after sending, before the answer
          w = Wallet.open(dir, membership());
          expect(w.resolve(chain, (cm) => accepted.get(cm) ?? null, AFTER + i * 1e6)).toBe("ready");
        }
        // A new process after the crash, after every challenge expired: what the service accepted is what the wallet holds.
        const w = Wallet.open(dir, membership());
        expect(w.resolve(chain, (cm) => accepted.get(cm) ?? null, AFTER + 1e7)).toBe("ready");
        expect({ spends, crashAt, spent: w.chain(chain).note?.spent ?? "0" }).toEqual({ spends, crashAt, spent: String(accepted.size * 1000) });
        for (const set of nullifiersByNote.values()) expect(set.size).toBe(1);
        // And the next spend comes from the last accepted note: its nullifier was never revealed before.
        const next = w.prepare(chain, { challengeId: "ch_next", amount: 1n, expiresAt: AFTER + 2e7 });
        const revealed = [...nullifiersByNote.values()].flatMap((s) => [...s]);
        const abandoned = spends > accepted.size; // the last attempt never reached the service
        expect(revealed.includes(next.nullifier)).toBe(abandoned);
      }
    }
  });
});

describe("the wallet lock", () => {
  test("in one process, spends of one membership run one after the other", async () => {
    const lock = join(freshDir(), "x.lock");
    const events: string[] = [];
    const run = (name: string) =>
      withWalletLock(lock, async () => {
        events.push(`${name} in`);
        await Bun.sleep(150);
        events.push(`${name} out`);
      });
    await Promise.all([run("a"), run("b")]);
    expect(events).toEqual(["a in", "a out", "b in", "b out"]);
  });

  test("across processes: a live holder is waited for; a dead holder's lock is taken over", async () => {
    const dir = freshDir();
    const lock = join(dir, "x.lock");
    const child = Bun.spawn(
      [
        "bun",
        "-e",
        `const { withWalletLock } = await import(${JSON.stringify(`${process.cwd()}/src/agent/budget/wallet.ts`)}); await withWalletLock(${JSON.stringify(lock)}, async () => { console.log("held"); await Bun.sleep(1500); });`,
      ],
      { stdout: "pipe" },
    );
    const reader = child.stdout.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("held");
    const started = Date.now();
    await withWalletLock(lock, async () => {});
    expect(Date.now() - started).toBeGreaterThan(500);
    await child.exited;
    // A holder that died without releasing: its pid is not running.
    writeFileSync(lock, "2147483646\n");
    const taken = Date.now();
    await withWalletLock(lock, async () => {}, 2000);
    expect(Date.now() - taken).toBeLessThan(1000);
  });

  test("a live holder past the wait is an in_flight refusal", async () => {
    const lock = join(freshDir(), "x.lock");
    await withWalletLock(lock, async () => {
      await expect(withWalletLock(lock, async () => {}, 300)).rejects.toMatchObject({ code: "in_flight" });
    });
  });
});
