// The test build's entry (build/prover-test.wasm): every production entry
// point of prover-index.ts, plus prove()'s stages one by one and readers of
// their intermediate results, for the differential tests (test/prover/) and
// the time breakdown of bench/prover.ts. The production module does not
// contain them.

export * from "./prover-index";
import { io } from "./prover-index";
import { fpMul, fpSqr, FP_SIZE } from "./fp";
import { frMul, frSqr } from "./fr";
import { g1AddChord, g1InvertBatch, invertFp2ByNorms } from "./msm";
export { stageWitness, stageQuotient, stageQuotientPart, stageMsm, stageFinish, stageSelfCheck, readQuotient, readMsm, msmCustom } from "./prover";

/**
 * fpMul (field 0), frMul (field 1), fpSqr of a (field 2) or frSqr of a (field 3) on raw limbs, for the differential tests
 * of the two builds (test/assembly/wide.test.ts): a ‖ b (9 little-endian u32
 * limbs each, Montgomery form, any value < 8q with limbs 0..7 below 2^29) →
 * a·b·2^−261 mod q raw at 2·FP_SIZE.
 */
export function fieldMulRaw(field: i32): void {
  const a = io(0);
  if (field == 0) fpMul(a + 2 * FP_SIZE, a, a + FP_SIZE);
  else if (field == 1) frMul(a + 2 * FP_SIZE, a, a + FP_SIZE);
  else if (field == 2) fpSqr(a + 2 * FP_SIZE, a);
  else frSqr(a + 2 * FP_SIZE, a);
}

/** n products in a chain on the operands fieldMulRaw left in the I/O buffer (bench/field.ts): fpMul (field 0), frMul (1), fpSqr (2), frSqr (3). */
export function benchMul(field: i32, n: i32): void {
  const a = io(0);
  for (let i = 0; i < n; i++) {
    if (field == 0) fpMul(a, a, a + FP_SIZE);
    else if (field == 1) frMul(a, a, a + FP_SIZE);
    else if (field == 2) fpSqr(a, a);
    else frSqr(a, a);
  }
}

/**
 * msm.ts g1AddChord on raw limbs, for the differential tests of the two
 * builds (test/assembly/wide-msm.test.ts): P ‖ Q ‖ inv (affine points and
 * an element, reduced, Montgomery form) → P + Q's chord formulas at 5·FP_SIZE.
 */
export function g1AddChordRaw(): void {
  const a = io(0);
  g1AddChord(a + 5 * FP_SIZE, a, a + 2 * FP_SIZE, a + 4 * FP_SIZE);
}

/** msm.ts g1InvertBatch on t raw elements at the I/O buffer (none zero), in place; its scratch follows them (36t + 36 bytes). */
export function g1InvertBatchRaw(t: i32): void {
  const a = io(<u32>(72 * t + 36));
  g1InvertBatch(a, a + <usize>(36 * t), <usize>t);
}


/** msm.ts invertFp2ByNorms on t raw Fp2 elements at the I/O buffer (none zero), in place; its scratch follows them (72t bytes). */
export function fp2InvertNormsRaw(t: i32): void {
  const a = io(<u32>(144 * t));
  invertFp2ByNorms(a, a + <usize>(72 * t), <usize>t);
}
