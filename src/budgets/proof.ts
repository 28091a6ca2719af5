// A budget spend's proof as the agent sends it (docs/api.md, "Budget
// spends"): the two outputs and two roots it claims, and the snarkjs Groth16
// proof object (src/prover returns it). Read here only for its shape; the
// service verifies it against the public signals it rebuilds itself
// (src/budgets/statement.ts spendPublicSignals), so nothing here is trusted.
import type { SnarkjsProof } from "../verifier/types";

export interface SpendProof {
  nullifier: bigint;
  commitment: bigint;
  enrolmentRoot: bigint;
  notesRoot: bigint;
  groth16: SnarkjsProof;
}

const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;
const FIELDS = ["nullifier", "commitment", "enrolment_root", "notes_root", "groth16"] as const;

const isStringArray = (value: unknown, length: number): value is string[] =>
  Array.isArray(value) && value.length === length && value.every((x) => typeof x === "string");

/**
 * The proof object (or its JSON text), or null when it is not one: exactly
 * the five fields, four canonical decimals (no sign, no leading zero: one
 * value, one spelling, so a nullifier cannot be written two ways), and a
 * Groth16 object of snarkjs's shape. Values at or above r pass here and are
 * refused by the verifier as public inputs (invalid_public_input).
 */
export function parseSpendProof(input: unknown): SpendProof | null {
  let value = input;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const o = value as Record<string, unknown>;
  if (Object.keys(o).length !== FIELDS.length || !FIELDS.every((f) => Object.hasOwn(o, f))) return null;
  const decimals = [o.nullifier, o.commitment, o.enrolment_root, o.notes_root];
  if (!decimals.every((d) => typeof d === "string" && DECIMAL.test(d))) return null;
  const g = o.groth16 as Record<string, unknown> | null;
  if (typeof g !== "object" || g === null || Array.isArray(g)) return null;
  if (!isStringArray(g.pi_a, 3) || !isStringArray(g.pi_c, 3)) return null;
  if (!Array.isArray(g.pi_b) || g.pi_b.length !== 3 || !g.pi_b.every((row) => isStringArray(row, 2))) return null;
  if ((g.protocol !== undefined && g.protocol !== "groth16") || (g.curve !== undefined && g.curve !== "bn128")) return null;
  const [nullifier, commitment, enrolmentRoot, notesRoot] = decimals.map((d) => BigInt(d as string)) as [bigint, bigint, bigint, bigint];
  return {
    nullifier,
    commitment,
    enrolmentRoot,
    notesRoot,
    groth16: { pi_a: g.pi_a, pi_b: g.pi_b as string[][], pi_c: g.pi_c, protocol: "groth16", curve: "bn128" },
  };
}
