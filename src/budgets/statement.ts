// The spend statement off the circuit (circuits/budget_spend.circom): the
// circuit's input for a spend, and its public signals in snarkjs order. The
// agent builds its input here and compares the prover's public signals with
// spendPublicSignals before it sends a proof; the service rebuilds the same
// signals from the challenge and the proof's two outputs and two roots.
import type { CircuitInput } from "../prover/witness";
import type { Periods } from "./encoding";
import { type Note, spendOutputs } from "./notes";
import type { PackedTerms } from "./terms";

/** The depths the circuit is compiled for: enrolment (GROUP_MAX_MEMBERS ≤ 2^20) and notes (Sapling's 32). */
export const ENROLMENT_DEPTH = 20;
export const NOTES_DEPTH = 32;

/** A LeanIMT proof as @zk-kit/lean-imt's generateProof gives it: the index's bits order the listed siblings. */
export interface TreeProof {
  index: number;
  siblings: readonly bigint[];
}

/** What the service sets (and the two roots the agent names). */
export interface SpendPublic {
  group: bigint;
  rootEnrolment: bigint;
  rootNotes: bigint;
  periods: Periods;
  amount: bigint;
  currency: bigint;
  payee: bigint;
  ctx: bigint;
}

/** What only the member knows. */
export interface SpendPrivate {
  secret: bigint;
  salt: bigint;
  terms: PackedTerms;
  enrolment: TreeProof;
  /** The note spent and its proof in the notes tree; null for the chain's first spend. */
  from: { note: Note; proof: TreeProof } | null;
  /** The chain this spend counts in (notes.ts chainOf). */
  chain: bigint;
}

function padded(proof: TreeProof, depth: number, name: string): bigint[] {
  if (proof.siblings.length > depth) throw new RangeError(`${name} proof has ${proof.siblings.length} siblings; the circuit takes at most ${depth}`);
  return [...proof.siblings, ...Array<bigint>(depth - proof.siblings.length).fill(0n)];
}

/** The circuit's input for one spend, with the outputs the circuit will compute. */
export function spendInput(pub: SpendPublic, priv: SpendPrivate): { input: CircuitInput; nullifier: bigint; commitment: bigint; next: Note } {
  const outputs = spendOutputs(priv.secret, priv.chain, priv.from?.note ?? null, pub.amount);
  const notesProof = priv.from?.proof ?? { index: 0, siblings: [] };
  const input: CircuitInput = {
    group: pub.group,
    root_enrolment: pub.rootEnrolment,
    root_notes: pub.rootNotes,
    p_day: pub.periods.day,
    p_week: pub.periods.week,
    p_month: pub.periods.month,
    t_min: pub.periods.minute,
    amount: pub.amount,
    currency: pub.currency,
    payee: pub.payee,
    ctx: pub.ctx,
    secret: priv.secret,
    salt: priv.salt,
    terms_amounts: priv.terms.TA,
    terms_meta: priv.terms.TM,
    payees: priv.terms.payees,
    mandate: priv.terms.mandate,
    enrol_length: priv.enrolment.siblings.length,
    enrol_index: priv.enrolment.index,
    enrol_siblings: padded(priv.enrolment, ENROLMENT_DEPTH, "the enrolment"),
    first: priv.from ? 0n : 1n,
    spent: priv.from?.note.spent ?? 0n,
    rho: priv.from?.note.rho ?? 0n,
    notes_length: notesProof.siblings.length,
    notes_index: notesProof.index,
    notes_siblings: padded(notesProof, NOTES_DEPTH, "the notes"),
    rho_next: outputs.next.rho,
  };
  return { input, nullifier: outputs.nullifier, commitment: outputs.commitment, next: outputs.next };
}

/** The 13 public signals in snarkjs order (outputs first), as decimal strings. */
export const spendPublicSignals = (nullifier: bigint, commitment: bigint, pub: SpendPublic): string[] =>
  [
    nullifier,
    commitment,
    pub.group,
    pub.rootEnrolment,
    pub.rootNotes,
    pub.periods.day,
    pub.periods.week,
    pub.periods.month,
    pub.periods.minute,
    pub.amount,
    pub.currency,
    pub.payee,
    pub.ctx,
  ].map(String);
