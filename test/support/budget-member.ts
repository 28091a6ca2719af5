// A budgeted group's member as the tests play it over HTTP (issue 40): the
// terms and salt its enrolment answered, the group's leaves and the notes
// feed read from the service, the circuit input built with src/budgets/
// from the challenge the service issued, and a real proof from the project's
// prover, its public signals compared with the statement before it is sent
// (as an agent does). Also: a re-randomised copy of a proof (Groth16's
// malleability: (−A, −B, C) verifies wherever (A, B, C) does).
import { readFileSync } from "node:fs";
import { currencyField, NOTES_GENESIS_LEAF, payeeField } from "../../src/budgets/encoding";
import { H4, H8 } from "../../src/budgets/hash";
import { chainOf, type Note } from "../../src/budgets/notes";
import { type SpendPublic, spendInput, spendPublicSignals } from "../../src/budgets/statement";
import type { Kind, PackedTerms } from "../../src/budgets/terms";
import { LeanTree } from "../../src/groups/lean-tree";
import { createProver, type Prover } from "../../src/prover";
import type { SnarkjsProof } from "../../src/verifier/types";

const DIR = "circuits/artifacts/budget_spend";
let prover: Promise<Prover> | undefined;
/** One prover per test process: its tables are built once. */
export const budgetProver = (): Promise<Prover> =>
  (prover ??= createProver(
    { zkey: new Uint8Array(readFileSync(`${DIR}/budget_spend.zkey`)), wasm: new Uint8Array(readFileSync(`${DIR}/budget_spend.wasm`)) },
    { precompute: false },
  ));

/** The member: its secret and what its enrolment answered (POST /v1/groups/{id}/enrolments). */
export interface Member {
  secret: bigint;
  enrolment: any;
}

export function packedOf(enrolment: any): PackedTerms {
  const s = enrolment.statement;
  const TA = BigInt(s.ta);
  const TM = BigInt(s.tm);
  const payees = s.payees.map(BigInt);
  const TQ = H8(payees);
  const mandate = BigInt(s.mandate);
  return { TA, TM, payees, TQ, mandate, hash: H4(TA, TM, TQ, mandate) };
}

export const kindOf = (enrolment: any): Kind => enrolment.terms.period ?? "lifetime";

/** The statement's public values as the challenge states them, and the two roots the member names. */
export function publicOf(challenge: any, rootEnrolment: bigint, rootNotes: bigint): SpendPublic {
  const b = challenge.budget;
  return {
    group: BigInt(b.group),
    rootEnrolment,
    rootNotes,
    periods: { day: BigInt(b.periods.day), week: BigInt(b.periods.week), month: BigInt(b.periods.month), minute: BigInt(b.periods.minute) },
    amount: BigInt(b.amount),
    currency: currencyField(b.currency),
    payee: payeeField(b.payee),
    ctx: BigInt(b.ctx),
  };
}

export interface SpendPlan {
  member: Member;
  challenge: any;
  /** The group's leaves as the members feed lists them. */
  leaves: readonly bigint[];
  /** The notes tree at the checkpoint named (genesis leaf first) and the note spent, with its leaf index; null: the chain's first spend. */
  notes?: { leaves: readonly bigint[]; note: Note; index: number } | null;
  /** The notes root named; default: the notes tree's (or the genesis root for a first spend). */
  notesRoot?: bigint;
}

/** The proof object of docs/api.md, and the note the spend leaves. */
export async function proveSpend(plan: SpendPlan): Promise<{ proof: any; next: Note; nullifier: string }> {
  const { member, challenge } = plan;
  const enrolTree = LeanTree.fromLeaves(plan.leaves);
  const index = plan.leaves.findIndex((leaf) => leaf.toString() === member.enrolment.leaf);
  if (index < 0) throw new Error("the member's leaf is not in the leaves given");
  const notesTree = LeanTree.fromLeaves(plan.notes?.leaves ?? [NOTES_GENESIS_LEAF]);
  const pub = publicOf(challenge, enrolTree.root, plan.notesRoot ?? notesTree.root);
  const terms = packedOf(member.enrolment);
  const chain = chainOf(pub.group, pub.currency, kindOf(member.enrolment), pub.periods, terms.mandate);
  const from = plan.notes ? { note: plan.notes.note, proof: notesTree.pathOf(plan.notes.index) } : null;
  const made = spendInput(pub, { secret: member.secret, salt: BigInt(member.enrolment.salt), terms, enrolment: enrolTree.pathOf(index), from, chain });
  const { proof, publicSignals } = await (await budgetProver()).prove(made.input);
  const expected = spendPublicSignals(made.nullifier, made.commitment, pub);
  if (JSON.stringify(publicSignals) !== JSON.stringify(expected)) throw new Error("the prover's public signals are not the statement's");
  return {
    proof: {
      nullifier: made.nullifier.toString(),
      commitment: made.commitment.toString(),
      enrolment_root: pub.rootEnrolment.toString(),
      notes_root: pub.rootNotes.toString(),
      groth16: proof,
    },
    next: made.next,
    nullifier: made.nullifier.toString(),
  };
}

/** BN254's base field modulus (EIP-196). */
const P = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
const neg = (y: string) => (P - BigInt(y)).toString();

/** Groth16's malleability: (−A, −B, C) satisfies e(A, B) = e(−A, −B), so it verifies wherever the original does, with other bytes. */
export function rerandomised(groth16: SnarkjsProof): SnarkjsProof {
  return {
    ...groth16,
    pi_a: [groth16.pi_a[0]!, neg(groth16.pi_a[1]!), "1"],
    pi_b: [groth16.pi_b[0]!, [neg(groth16.pi_b[1]![0]!), neg(groth16.pi_b[1]![1]!)], ["1", "0"]],
  };
}
