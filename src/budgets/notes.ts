// Chains, notes and nullifiers (docs/protocol.md, "Notes and nullifiers").
// What a spend reveals is a nullifier and a note commitment; both are
// Poseidon values keyed by the member's secret, so neither says which member
// spent, and nothing one spend reveals is reused by the next.
//
//   χ        = H5(1, g, c, kind·2^40 + P, τ')   one chain per group, currency, period (and mandate, for lifetime budgets)
//   cm       = H5(2, s, χ, v, ρ)                a note: v spent so far in the chain, ρ fresh
//   nf_start = H3(3, s, χ)                      the first spend of a chain
//   nf_note  = H3(4, s, ρ)                      a later spend, consuming note (v, ρ)
//   ρ_new    = H3(5, s, nf)                     the next note's randomness, recomputable after a crash
import type { Periods } from "./encoding";
import { H3, H5 } from "./hash";
import { KINDS, type Kind } from "./terms";

const CHAIN_TAG = 1n;
const NOTE_TAG = 2n;
const START_TAG = 3n;
const NOTE_NULLIFIER_TAG = 4n;
const RHO_TAG = 5n;

/** The period index a kind counts in (0 for a lifetime budget). */
export function periodIndex(kind: Kind, periods: Periods): bigint {
  switch (kind) {
    case "lifetime":
      return 0n;
    case "day":
      return periods.day;
    case "week":
      return periods.week;
    case "month":
      return periods.month;
  }
}

/** χ: the chain a spend counts in. A recurring chain ignores the mandate, so replaced terms keep the period's total. */
export function chainOf(group: bigint, currency: bigint, kind: Kind, periods: Periods, mandate: bigint): bigint {
  const k = BigInt(KINDS.indexOf(kind));
  return H5(CHAIN_TAG, group, currency, (k << 40n) + periodIndex(kind, periods), kind === "lifetime" ? mandate : 0n);
}

export const noteCommitment = (secret: bigint, chain: bigint, spent: bigint, rho: bigint): bigint => H5(NOTE_TAG, secret, chain, spent, rho);
export const startNullifier = (secret: bigint, chain: bigint): bigint => H3(START_TAG, secret, chain);
export const noteNullifier = (secret: bigint, rho: bigint): bigint => H3(NOTE_NULLIFIER_TAG, secret, rho);
export const nextRho = (secret: bigint, nullifier: bigint): bigint => H3(RHO_TAG, secret, nullifier);

/** A member's open note: what it needs to spend from it. */
export interface Note {
  chain: bigint;
  spent: bigint;
  rho: bigint;
}

export interface SpendOutputs {
  nullifier: bigint;
  /** The new note's commitment (a public output) and its opening (the agent's). */
  commitment: bigint;
  next: Note;
}

/**
 * What a spend of `amount` reveals and leaves, from the chain's first spend
 * (`from` null) or from an open note: the agent's side of the statement,
 * which the circuit checks and the agent records before it sends a proof.
 */
export function spendOutputs(secret: bigint, chain: bigint, from: Note | null, amount: bigint): SpendOutputs {
  if (from && from.chain !== chain) throw new RangeError("the note belongs to another chain");
  const nullifier = from ? noteNullifier(secret, from.rho) : startNullifier(secret, chain);
  const spent = (from?.spent ?? 0n) + amount;
  const rho = nextRho(secret, nullifier);
  return { nullifier, commitment: noteCommitment(secret, chain, spent, rho), next: { chain, spent, rho } };
}
