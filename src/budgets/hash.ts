// The Poseidon hashes of the budget scheme (docs/protocol.md, "Budgets across
// merchants"): circomlib's Poseidon with 1 to 8 inputs over BN254's scalar
// field, the function circuits/budget_spend.circom computes.
//
// H2 is the project's WebAssembly Poseidon (src/groups/poseidon.ts), which
// hashes the trees; the project's module has only the two-input width, so
// the other widths are poseidon-lite's, the library Semaphore's own packages
// use. test/budgets/hash.test.ts checks every width against circomlibjs.
import { poseidon1 } from "poseidon-lite/poseidon1";
import { poseidon3 } from "poseidon-lite/poseidon3";
import { poseidon4 } from "poseidon-lite/poseidon4";
import { poseidon5 } from "poseidon-lite/poseidon5";
import { poseidon8 } from "poseidon-lite/poseidon8";
import { poseidon2 } from "../groups/poseidon";

export const H1 = (a: bigint): bigint => poseidon1([a]);
export const H2 = (a: bigint, b: bigint): bigint => poseidon2(a, b);
export const H3 = (a: bigint, b: bigint, c: bigint): bigint => poseidon3([a, b, c]);
export const H4 = (a: bigint, b: bigint, c: bigint, d: bigint): bigint => poseidon4([a, b, c, d]);
export const H5 = (a: bigint, b: bigint, c: bigint, d: bigint, e: bigint): bigint => poseidon5([a, b, c, d, e]);
export function H8(inputs: readonly bigint[]): bigint {
  if (inputs.length !== 8) throw new RangeError("H8 takes exactly 8 inputs");
  return poseidon8([...inputs]);
}
