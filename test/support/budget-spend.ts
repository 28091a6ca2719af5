// A consistent budget spend for the circuit's tests (witness, setup, proof):
// a group tree with the member's leaf at a chosen position, a notes tree
// holding its note, and the circuit input with the outputs computed off the
// circuit (src/budgets/).
import { budgetGroup, budgetMessage, currencyField, NOTES_GENESIS_LEAF, payeeField, periodsAt } from "../../src/budgets/encoding";
import { H1, H4 } from "../../src/budgets/hash";
import { chainOf, type Note, noteCommitment } from "../../src/budgets/notes";
import { type SpendPrivate, type SpendPublic, spendInput, spendPublicSignals } from "../../src/budgets/statement";
import { type BudgetTerms, budgetLeaf, type PackedTerms, packTerms } from "../../src/budgets/terms";
import { readFileSync } from "node:fs";
import { LeanTree } from "../../src/groups/lean-tree";
import { Groth16Verifier } from "../../src/verifier";
import { BUDGET_CIRCUIT_ID } from "../../src/circuits/budget";
import type { JsonObject } from "../../src/identity/encoding";

export const SHOP_A = "https://shop-a.example";
export const SHOP_B = "https://shop-b.example";
export const NOW = Date.UTC(2026, 10, 28, 12, 30);
const g = budgetGroup("grp_budget");
export const secret = 0x1234_5678_9abc_def0_1234_5678_9abc_def0n;
const salt = 0xfeed_beefn;
export const baseTerms: BudgetTerms = {
  currency: "EUR",
  min: 1n,
  max: 3000n,
  budget: 10_000n,
  kind: "day",
  once: false,
  payees: [SHOP_A, SHOP_B],
  expiresAt: Date.UTC(2027, 0, 1) / 1000,
  mandate: 777n,
};

export interface Scenario {
  terms?: BudgetTerms;
  /** Where the member's leaf lies among 6. */
  position?: number;
  amount?: bigint;
  payee?: string;
  currency?: string;
  /** The note spent (its running total); undefined: the chain's first spend. */
  spent?: bigint;
  at?: number;
  /** Packed terms changed by hand (what packTerms would refuse), the leaf built from them. */
  repack?: (packed: PackedTerms) => { TA?: bigint; TM?: bigint };
}

/** A consistent spend: the group's tree with the member at `position`, the notes tree holding its note. */
export function scenario(s: Scenario = {}) {
  const terms = s.terms ?? baseTerms;
  let packed = packTerms(terms);
  if (s.repack) {
    const { TA = packed.TA, TM = packed.TM } = s.repack(packed);
    packed = { ...packed, TA, TM, hash: H4(TA, TM, packed.TQ, packed.mandate) };
  }
  const leaf = budgetLeaf(H1(secret), packed.hash, salt);
  const position = s.position ?? 0;
  const others = [11n, 12n, 13n, 14n, 15n];
  const leaves = [...others.slice(0, position), leaf, ...others.slice(position)];
  const enrolTree = LeanTree.fromLeaves(leaves);
  const at = periodsAt(s.at ?? NOW);
  const chain = chainOf(g, currencyField(terms.currency), terms.kind, at, terms.mandate);
  let from: SpendPrivate["from"] = null;
  const notes = [NOTES_GENESIS_LEAF, 21n];
  if (s.spent !== undefined) {
    const note: Note = { chain, spent: s.spent, rho: 9999n };
    notes.push(noteCommitment(secret, chain, note.spent, note.rho), 22n);
    const tree = LeanTree.fromLeaves(notes);
    from = { note, proof: tree.pathOf(2) };
  }
  const notesTree = LeanTree.fromLeaves(notes);
  const pub: SpendPublic = {
    group: g,
    rootEnrolment: enrolTree.root,
    rootNotes: notesTree.root,
    periods: at,
    amount: s.amount ?? 2000n,
    currency: currencyField(s.currency ?? terms.currency),
    payee: payeeField(s.payee ?? SHOP_A),
    ctx: budgetMessage({ nonce: "ab".repeat(31), action: "purchase", context: { amount: "20.00", currency: "EUR" } }),
  };
  const priv: SpendPrivate = { secret, salt, terms: packed, enrolment: enrolTree.pathOf(position), from, chain };
  return { pub, priv, ...spendInput(pub, priv) };
}

/**
 * A budget challenge as the service issues it for a "purchase", its budget
 * object computed here with the same encoders: for tests that prove without
 * the service's challenge route (the CLI, the binary, the agent against a
 * stand-in feed). amount: minor units; notes: the checkpoint it names.
 */
export function budgetChallengeFor(o: {
  id: string;
  nonce: string;
  group: string;
  payee: string;
  amount: string;
  currency: string;
  context: JsonObject;
  at: number;
  notes?: { root: string; size: number };
}) {
  const periods = periodsAt(o.at);
  return {
    challenge_id: o.id,
    nonce: o.nonce,
    group_id: o.group,
    circuit_id: BUDGET_CIRCUIT_ID,
    expires_in: 300,
    timestamp: Math.floor(o.at / 1000),
    budget: {
      group: budgetGroup(o.group).toString(),
      payee: o.payee,
      payee_field: payeeField(o.payee).toString(),
      amount: o.amount,
      currency: o.currency,
      currency_field: currencyField(o.currency).toString(),
      periods: { day: `${periods.day}`, week: `${periods.week}`, month: `${periods.month}`, minute: `${periods.minute}` },
      ctx: budgetMessage({ nonce: o.nonce, action: "purchase", context: o.context }).toString(),
      ...(o.notes ? { notes_root: o.notes.root, notes_size: o.notes.size } : {}),
    },
  };
}

/**
 * Whether a first spend's printed proof (the CLI's and the binary's JSON)
 * verifies against the signals a service rebuilds: 20.00 EUR at SHOP_A from
 * the notes genesis, in the group's current enrolment tree, at the periods
 * of `at` — computed here from the encoders, not taken from the agent.
 */
export async function firstSpendVerifies(
  proof: { nullifier: string; commitment: string; groth16: unknown },
  o: { group: string; rootEnrolment: bigint; at: number; ctx: string },
): Promise<boolean> {
  const verifier = await Groth16Verifier.fromVerificationKey(JSON.parse(readFileSync("circuits/artifacts/budget_spend/verification_key.json", "utf8")));
  const signals = spendPublicSignals(BigInt(proof.nullifier), BigInt(proof.commitment), {
    group: budgetGroup(o.group),
    rootEnrolment: o.rootEnrolment,
    rootNotes: NOTES_GENESIS_LEAF,
    periods: periodsAt(o.at),
    amount: 2000n,
    currency: currencyField("EUR"),
    payee: payeeField(SHOP_A),
    ctx: BigInt(o.ctx),
  });
  return verifier.verify(proof.groth16 as any, signals).ok;
}
