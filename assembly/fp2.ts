// Fp2 = Fp[u]/(u² + 1). An element c0 + c1·u is stored as c0 then c1
// (FP2_C0, FP2_C1). The wire order of EIP-197 (imaginary part first) is a
// matter of the byte codec only (fp2FromBytes / fp2ToBytes below).

import {
  FP_SIZE, FP_BYTES, fpAdd, fpSub, fpMul, fpNeg, fpInv, fpCopy, fpIsZero, fpEq,
  fpFromBytes, fpToBytes, fpSetZero, fpSetOne, fpDouble, fpAddLazy, fpStoreReduced,
} from "./fp";
import { P0, P1, P2, P3, P4, P5, P6, P7, P8, MU } from "./constants";

export const FP2_C0: usize = 0;
export const FP2_C1: usize = FP_SIZE;
export const FP2_SIZE: usize = 2 * FP_SIZE;
/** Wire encoding: c1 (imaginary) then c0 (real), 32 bytes each, as in EIP-197. */
export const FP2_BYTES: usize = 2 * FP_BYTES;
const WIRE_C1: usize = 0;
const WIRE_C0: usize = FP_BYTES;

const T0: usize = memory.data(36, 4);
const T1: usize = memory.data(36, 4);
const T2: usize = memory.data(36, 4);
const T3: usize = memory.data(36, 4);

export function fp2Add(out: usize, a: usize, b: usize): void {
  fpAdd(out + FP2_C0, a + FP2_C0, b + FP2_C0);
  fpAdd(out + FP2_C1, a + FP2_C1, b + FP2_C1);
}
/** out = a + b lazily (see fpAddLazy): only for operands of fp2Mul. */
export function fp2AddLazy(out: usize, a: usize, b: usize): void {
  fpAddLazy(out + FP2_C0, a + FP2_C0, b + FP2_C0);
  fpAddLazy(out + FP2_C1, a + FP2_C1, b + FP2_C1);
}
export function fp2Sub(out: usize, a: usize, b: usize): void {
  fpSub(out + FP2_C0, a + FP2_C0, b + FP2_C0);
  fpSub(out + FP2_C1, a + FP2_C1, b + FP2_C1);
}
export function fp2Double(out: usize, a: usize): void {
  fpDouble(out + FP2_C0, a + FP2_C0);
  fpDouble(out + FP2_C1, a + FP2_C1);
}
export function fp2Neg(out: usize, a: usize): void {
  fpNeg(out + FP2_C0, a + FP2_C0);
  fpNeg(out + FP2_C1, a + FP2_C1);
}
/** out = ā = c0 − c1·u (the p-power Frobenius on Fp2). */
export function fp2Conj(out: usize, a: usize): void {
  fpCopy(out + FP2_C0, a + FP2_C0);
  fpNeg(out + FP2_C1, a + FP2_C1);
}
export function fp2Copy(out: usize, a: usize): void {
  memory.copy(out, a, FP2_SIZE);
}
export function fp2SetZero(out: usize): void {
  memory.fill(out, 0, FP2_SIZE);
}
export function fp2SetOne(out: usize): void {
  fpSetOne(out + FP2_C0);
  fpSetZero(out + FP2_C1);
}
export function fp2IsZero(a: usize): bool {
  return fpIsZero(a + FP2_C0) && fpIsZero(a + FP2_C1);
}
export function fp2Eq(a: usize, b: usize): bool {
  return fpEq(a + FP2_C0, b + FP2_C0) && fpEq(a + FP2_C1, b + FP2_C1);
}

/**
 * out = a·b with lazy reduction (generated): the three Karatsuba products
 * a0·b0, a1·b1, (a0 + a1)(b0 + b1) are accumulated unreduced in 18 signed
 * 64-bit columns, combined into c0 = a0b0 − a1b1 + 16p² and c1 = a0b1 + a1b0
 * (per column: the cross terms, so every column is ≥ 0), and each is
 * Montgomery-reduced once: 3·81 limb products + 2·81 for the reductions
 * instead of 3·162. Operands may be lazy, < 4p (limbs 0..7 < 2^29): then
 * c0, c1 < 32p², the reduced result is < 32p²/R + p < 2p, and every column
 * stays below 27·2^58 < 2^63 in magnitude (Pk columns < 9·2^60 < 2^64 before the subtraction, exact in wrapping u64). out may alias a or b.
 */
export function fp2Mul(out: usize, a: usize, b: usize): void {
  const x0: u64 = load<u32>(a + 0) as u64, y0: u64 = load<u32>(a + 36) as u64;
  const x1: u64 = load<u32>(a + 4) as u64, y1: u64 = load<u32>(a + 40) as u64;
  const x2: u64 = load<u32>(a + 8) as u64, y2: u64 = load<u32>(a + 44) as u64;
  const x3: u64 = load<u32>(a + 12) as u64, y3: u64 = load<u32>(a + 48) as u64;
  const x4: u64 = load<u32>(a + 16) as u64, y4: u64 = load<u32>(a + 52) as u64;
  const x5: u64 = load<u32>(a + 20) as u64, y5: u64 = load<u32>(a + 56) as u64;
  const x6: u64 = load<u32>(a + 24) as u64, y6: u64 = load<u32>(a + 60) as u64;
  const x7: u64 = load<u32>(a + 28) as u64, y7: u64 = load<u32>(a + 64) as u64;
  const x8: u64 = load<u32>(a + 32) as u64, y8: u64 = load<u32>(a + 68) as u64;
  const u0: u64 = load<u32>(b + 0) as u64, v0: u64 = load<u32>(b + 36) as u64;
  const u1: u64 = load<u32>(b + 4) as u64, v1: u64 = load<u32>(b + 40) as u64;
  const u2: u64 = load<u32>(b + 8) as u64, v2: u64 = load<u32>(b + 44) as u64;
  const u3: u64 = load<u32>(b + 12) as u64, v3: u64 = load<u32>(b + 48) as u64;
  const u4: u64 = load<u32>(b + 16) as u64, v4: u64 = load<u32>(b + 52) as u64;
  const u5: u64 = load<u32>(b + 20) as u64, v5: u64 = load<u32>(b + 56) as u64;
  const u6: u64 = load<u32>(b + 24) as u64, v6: u64 = load<u32>(b + 60) as u64;
  const u7: u64 = load<u32>(b + 28) as u64, v7: u64 = load<u32>(b + 64) as u64;
  const u8: u64 = load<u32>(b + 32) as u64, v8: u64 = load<u32>(b + 68) as u64;
  const s0: u64 = x0 + y0, t0: u64 = u0 + v0;
  const s1: u64 = x1 + y1, t1: u64 = u1 + v1;
  const s2: u64 = x2 + y2, t2: u64 = u2 + v2;
  const s3: u64 = x3 + y3, t3: u64 = u3 + v3;
  const s4: u64 = x4 + y4, t4: u64 = u4 + v4;
  const s5: u64 = x5 + y5, t5: u64 = u5 + v5;
  const s6: u64 = x6 + y6, t6: u64 = u6 + v6;
  const s7: u64 = x7 + y7, t7: u64 = u7 + v7;
  const s8: u64 = x8 + y8, t8: u64 = u8 + v8;
  const e0: u64 = x0 * u0;
  const f0: u64 = y0 * v0;
  let c0: i64 = (e0 - f0 + 366385936) as i64;
  let d0: i64 = (s0 * t0 - e0 - f0) as i64;
  const e1: u64 = x0 * u1 + x1 * u0;
  const f1: u64 = y0 * v1 + y1 * v0;
  let c1: i64 = (e1 - f1 + 170676499) as i64;
  let d1: i64 = (s0 * t1 + s1 * t0 - e1 - f1) as i64;
  const e2: u64 = x0 * u2 + x1 * u1 + x2 * u0;
  const f2: u64 = y0 * v2 + y1 * v1 + y2 * v0;
  let c2: i64 = (e2 - f2 + 184812781) as i64;
  let d2: i64 = (s0 * t2 + s1 * t1 + s2 * t0 - e2 - f2) as i64;
  const e3: u64 = x0 * u3 + x1 * u2 + x2 * u1 + x3 * u0;
  const f3: u64 = y0 * v3 + y1 * v2 + y2 * v1 + y3 * v0;
  let c3: i64 = (e3 - f3 + 15049021) as i64;
  let d3: i64 = (s0 * t3 + s1 * t2 + s2 * t1 + s3 * t0 - e3 - f3) as i64;
  const e4: u64 = x0 * u4 + x1 * u3 + x2 * u2 + x3 * u1 + x4 * u0;
  const f4: u64 = y0 * v4 + y1 * v3 + y2 * v2 + y3 * v1 + y4 * v0;
  let c4: i64 = (e4 - f4 + 182232578) as i64;
  let d4: i64 = (s0 * t4 + s1 * t3 + s2 * t2 + s3 * t1 + s4 * t0 - e4 - f4) as i64;
  const e5: u64 = x0 * u5 + x1 * u4 + x2 * u3 + x3 * u2 + x4 * u1 + x5 * u0;
  const f5: u64 = y0 * v5 + y1 * v4 + y2 * v3 + y3 * v2 + y4 * v1 + y5 * v0;
  let c5: i64 = (e5 - f5 + 82013366) as i64;
  let d5: i64 = (s0 * t5 + s1 * t4 + s2 * t3 + s3 * t2 + s4 * t1 + s5 * t0 - e5 - f5) as i64;
  const e6: u64 = x0 * u6 + x1 * u5 + x2 * u4 + x3 * u3 + x4 * u2 + x5 * u1 + x6 * u0;
  const f6: u64 = y0 * v6 + y1 * v5 + y2 * v4 + y3 * v3 + y4 * v2 + y5 * v1 + y6 * v0;
  let c6: i64 = (e6 - f6 + 303207430) as i64;
  let d6: i64 = (s0 * t6 + s1 * t5 + s2 * t4 + s3 * t3 + s4 * t2 + s5 * t1 + s6 * t0 - e6 - f6) as i64;
  const e7: u64 = x0 * u7 + x1 * u6 + x2 * u5 + x3 * u4 + x4 * u3 + x5 * u2 + x6 * u1 + x7 * u0;
  const f7: u64 = y0 * v7 + y1 * v6 + y2 * v5 + y3 * v4 + y4 * v3 + y5 * v2 + y6 * v1 + y7 * v0;
  let c7: i64 = (e7 - f7 + 183772293) as i64;
  let d7: i64 = (s0 * t7 + s1 * t6 + s2 * t5 + s3 * t4 + s4 * t3 + s5 * t2 + s6 * t1 + s7 * t0 - e7 - f7) as i64;
  const e8: u64 = x0 * u8 + x1 * u7 + x2 * u6 + x3 * u5 + x4 * u4 + x5 * u3 + x6 * u2 + x7 * u1 + x8 * u0;
  const f8: u64 = y0 * v8 + y1 * v7 + y2 * v6 + y3 * v5 + y4 * v4 + y5 * v3 + y6 * v2 + y7 * v1 + y8 * v0;
  let c8: i64 = (e8 - f8 + 273058281) as i64;
  let d8: i64 = (s0 * t8 + s1 * t7 + s2 * t6 + s3 * t5 + s4 * t4 + s5 * t3 + s6 * t2 + s7 * t1 + s8 * t0 - e8 - f8) as i64;
  const e9: u64 = x1 * u8 + x2 * u7 + x3 * u6 + x4 * u5 + x5 * u4 + x6 * u3 + x7 * u2 + x8 * u1;
  const f9: u64 = y1 * v8 + y2 * v7 + y3 * v6 + y4 * v5 + y5 * v4 + y6 * v3 + y7 * v2 + y8 * v1;
  let c9: i64 = (e9 - f9 + 442718662) as i64;
  let d9: i64 = (s1 * t8 + s2 * t7 + s3 * t6 + s4 * t5 + s5 * t4 + s6 * t3 + s7 * t2 + s8 * t1 - e9 - f9) as i64;
  const e10: u64 = x2 * u8 + x3 * u7 + x4 * u6 + x5 * u5 + x6 * u4 + x7 * u3 + x8 * u2;
  const f10: u64 = y2 * v8 + y3 * v7 + y4 * v6 + y5 * v5 + y6 * v4 + y7 * v3 + y8 * v2;
  let c10: i64 = (e10 - f10 + 465037680) as i64;
  let d10: i64 = (s2 * t8 + s3 * t7 + s4 * t6 + s5 * t5 + s6 * t4 + s7 * t3 + s8 * t2 - e10 - f10) as i64;
  const e11: u64 = x3 * u8 + x4 * u7 + x5 * u6 + x6 * u5 + x7 * u4 + x8 * u3;
  const f11: u64 = y3 * v8 + y4 * v7 + y5 * v6 + y6 * v5 + y7 * v4 + y8 * v3;
  let c11: i64 = (e11 - f11 + 116048068) as i64;
  let d11: i64 = (s3 * t8 + s4 * t7 + s5 * t6 + s6 * t5 + s7 * t4 + s8 * t3 - e11 - f11) as i64;
  const e12: u64 = x4 * u8 + x5 * u7 + x6 * u6 + x7 * u5 + x8 * u4;
  const f12: u64 = y4 * v8 + y5 * v7 + y6 * v6 + y7 * v5 + y8 * v4;
  let c12: i64 = (e12 - f12 + 193286422) as i64;
  let d12: i64 = (s4 * t8 + s5 * t7 + s6 * t6 + s7 * t5 + s8 * t4 - e12 - f12) as i64;
  const e13: u64 = x5 * u8 + x6 * u7 + x7 * u6 + x8 * u5;
  const f13: u64 = y5 * v8 + y6 * v7 + y7 * v6 + y8 * v5;
  let c13: i64 = (e13 - f13 + 110159232) as i64;
  let d13: i64 = (s5 * t8 + s6 * t7 + s7 * t6 + s8 * t5 - e13 - f13) as i64;
  const e14: u64 = x6 * u8 + x7 * u7 + x8 * u6;
  const f14: u64 = y6 * v8 + y7 * v7 + y8 * v6;
  let c14: i64 = (e14 - f14 + 467599570) as i64;
  let d14: i64 = (s6 * t8 + s7 * t7 + s8 * t6 - e14 - f14) as i64;
  const e15: u64 = x7 * u8 + x8 * u7;
  const f15: u64 = y7 * v8 + y8 * v7;
  let c15: i64 = (e15 - f15 + 523809588) as i64;
  let d15: i64 = (s7 * t8 + s8 * t7 - e15 - f15) as i64;
  const e16: u64 = x8 * u8;
  const f16: u64 = y8 * v8;
  let c16: i64 = (e16 - f16 + 193422283) as i64;
  let d16: i64 = (s8 * t8 - e16 - f16) as i64;
  let c17: i64 = 299746, d17: i64 = 0;
  let m: i64;
  m = ((((c0 as u32) * MU) & 0x1fffffff) as i64);
  c1 += ((c0 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  c2 += m * (P2 as i64);
  c3 += m * (P3 as i64);
  c4 += m * (P4 as i64);
  c5 += m * (P5 as i64);
  c6 += m * (P6 as i64);
  c7 += m * (P7 as i64);
  c8 += m * (P8 as i64);
  m = ((((c1 as u32) * MU) & 0x1fffffff) as i64);
  c2 += ((c1 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  c3 += m * (P2 as i64);
  c4 += m * (P3 as i64);
  c5 += m * (P4 as i64);
  c6 += m * (P5 as i64);
  c7 += m * (P6 as i64);
  c8 += m * (P7 as i64);
  c9 += m * (P8 as i64);
  m = ((((c2 as u32) * MU) & 0x1fffffff) as i64);
  c3 += ((c2 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  c4 += m * (P2 as i64);
  c5 += m * (P3 as i64);
  c6 += m * (P4 as i64);
  c7 += m * (P5 as i64);
  c8 += m * (P6 as i64);
  c9 += m * (P7 as i64);
  c10 += m * (P8 as i64);
  m = ((((c3 as u32) * MU) & 0x1fffffff) as i64);
  c4 += ((c3 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  c5 += m * (P2 as i64);
  c6 += m * (P3 as i64);
  c7 += m * (P4 as i64);
  c8 += m * (P5 as i64);
  c9 += m * (P6 as i64);
  c10 += m * (P7 as i64);
  c11 += m * (P8 as i64);
  m = ((((c4 as u32) * MU) & 0x1fffffff) as i64);
  c5 += ((c4 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  c6 += m * (P2 as i64);
  c7 += m * (P3 as i64);
  c8 += m * (P4 as i64);
  c9 += m * (P5 as i64);
  c10 += m * (P6 as i64);
  c11 += m * (P7 as i64);
  c12 += m * (P8 as i64);
  m = ((((c5 as u32) * MU) & 0x1fffffff) as i64);
  c6 += ((c5 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  c7 += m * (P2 as i64);
  c8 += m * (P3 as i64);
  c9 += m * (P4 as i64);
  c10 += m * (P5 as i64);
  c11 += m * (P6 as i64);
  c12 += m * (P7 as i64);
  c13 += m * (P8 as i64);
  m = ((((c6 as u32) * MU) & 0x1fffffff) as i64);
  c7 += ((c6 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  c8 += m * (P2 as i64);
  c9 += m * (P3 as i64);
  c10 += m * (P4 as i64);
  c11 += m * (P5 as i64);
  c12 += m * (P6 as i64);
  c13 += m * (P7 as i64);
  c14 += m * (P8 as i64);
  m = ((((c7 as u32) * MU) & 0x1fffffff) as i64);
  c8 += ((c7 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  c9 += m * (P2 as i64);
  c10 += m * (P3 as i64);
  c11 += m * (P4 as i64);
  c12 += m * (P5 as i64);
  c13 += m * (P6 as i64);
  c14 += m * (P7 as i64);
  c15 += m * (P8 as i64);
  m = ((((c8 as u32) * MU) & 0x1fffffff) as i64);
  c9 += ((c8 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  c10 += m * (P2 as i64);
  c11 += m * (P3 as i64);
  c12 += m * (P4 as i64);
  c13 += m * (P5 as i64);
  c14 += m * (P6 as i64);
  c15 += m * (P7 as i64);
  c16 += m * (P8 as i64);
  c10 += c9 >> 29; c9 &= 0x1fffffff;
  c11 += c10 >> 29; c10 &= 0x1fffffff;
  c12 += c11 >> 29; c11 &= 0x1fffffff;
  c13 += c12 >> 29; c12 &= 0x1fffffff;
  c14 += c13 >> 29; c13 &= 0x1fffffff;
  c15 += c14 >> 29; c14 &= 0x1fffffff;
  c16 += c15 >> 29; c15 &= 0x1fffffff;
  c17 += c16 >> 29; c16 &= 0x1fffffff;
  m = ((((d0 as u32) * MU) & 0x1fffffff) as i64);
  d1 += ((d0 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  d2 += m * (P2 as i64);
  d3 += m * (P3 as i64);
  d4 += m * (P4 as i64);
  d5 += m * (P5 as i64);
  d6 += m * (P6 as i64);
  d7 += m * (P7 as i64);
  d8 += m * (P8 as i64);
  m = ((((d1 as u32) * MU) & 0x1fffffff) as i64);
  d2 += ((d1 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  d3 += m * (P2 as i64);
  d4 += m * (P3 as i64);
  d5 += m * (P4 as i64);
  d6 += m * (P5 as i64);
  d7 += m * (P6 as i64);
  d8 += m * (P7 as i64);
  d9 += m * (P8 as i64);
  m = ((((d2 as u32) * MU) & 0x1fffffff) as i64);
  d3 += ((d2 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  d4 += m * (P2 as i64);
  d5 += m * (P3 as i64);
  d6 += m * (P4 as i64);
  d7 += m * (P5 as i64);
  d8 += m * (P6 as i64);
  d9 += m * (P7 as i64);
  d10 += m * (P8 as i64);
  m = ((((d3 as u32) * MU) & 0x1fffffff) as i64);
  d4 += ((d3 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  d5 += m * (P2 as i64);
  d6 += m * (P3 as i64);
  d7 += m * (P4 as i64);
  d8 += m * (P5 as i64);
  d9 += m * (P6 as i64);
  d10 += m * (P7 as i64);
  d11 += m * (P8 as i64);
  m = ((((d4 as u32) * MU) & 0x1fffffff) as i64);
  d5 += ((d4 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  d6 += m * (P2 as i64);
  d7 += m * (P3 as i64);
  d8 += m * (P4 as i64);
  d9 += m * (P5 as i64);
  d10 += m * (P6 as i64);
  d11 += m * (P7 as i64);
  d12 += m * (P8 as i64);
  m = ((((d5 as u32) * MU) & 0x1fffffff) as i64);
  d6 += ((d5 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  d7 += m * (P2 as i64);
  d8 += m * (P3 as i64);
  d9 += m * (P4 as i64);
  d10 += m * (P5 as i64);
  d11 += m * (P6 as i64);
  d12 += m * (P7 as i64);
  d13 += m * (P8 as i64);
  m = ((((d6 as u32) * MU) & 0x1fffffff) as i64);
  d7 += ((d6 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  d8 += m * (P2 as i64);
  d9 += m * (P3 as i64);
  d10 += m * (P4 as i64);
  d11 += m * (P5 as i64);
  d12 += m * (P6 as i64);
  d13 += m * (P7 as i64);
  d14 += m * (P8 as i64);
  m = ((((d7 as u32) * MU) & 0x1fffffff) as i64);
  d8 += ((d7 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  d9 += m * (P2 as i64);
  d10 += m * (P3 as i64);
  d11 += m * (P4 as i64);
  d12 += m * (P5 as i64);
  d13 += m * (P6 as i64);
  d14 += m * (P7 as i64);
  d15 += m * (P8 as i64);
  m = ((((d8 as u32) * MU) & 0x1fffffff) as i64);
  d9 += ((d8 + m * (P0 as i64)) >> 29) + m * (P1 as i64);
  d10 += m * (P2 as i64);
  d11 += m * (P3 as i64);
  d12 += m * (P4 as i64);
  d13 += m * (P5 as i64);
  d14 += m * (P6 as i64);
  d15 += m * (P7 as i64);
  d16 += m * (P8 as i64);
  d10 += d9 >> 29; d9 &= 0x1fffffff;
  d11 += d10 >> 29; d10 &= 0x1fffffff;
  d12 += d11 >> 29; d11 &= 0x1fffffff;
  d13 += d12 >> 29; d12 &= 0x1fffffff;
  d14 += d13 >> 29; d13 &= 0x1fffffff;
  d15 += d14 >> 29; d14 &= 0x1fffffff;
  d16 += d15 >> 29; d15 &= 0x1fffffff;
  d17 += d16 >> 29; d16 &= 0x1fffffff;
  fpStoreReduced(out, c9 as u64, c10 as u64, c11 as u64, c12 as u64, c13 as u64, c14 as u64, c15 as u64, c16 as u64, c17 as u64);
  fpStoreReduced(out + FP2_C1, d9 as u64, d10 as u64, d11 as u64, d12 as u64, d13 as u64, d14 as u64, d15 as u64, d16 as u64, d17 as u64);
}

/** out = a², complex squaring: 2 Fp multiplications. */
export function fp2Sqr(out: usize, a: usize): void {
  fpAddLazy(T0, a + FP2_C0, a + FP2_C1); // a0 + a1 (lazy: only multiplied)
  fpSub(T1, a + FP2_C0, a + FP2_C1); // a0 − a1 (a must be reduced)
  fpMul(T2, a + FP2_C0, a + FP2_C1); // a0·a1
  fpMul(out + FP2_C0, T0, T1); // a0² − a1²
  fpDouble(out + FP2_C1, T2); // 2·a0·a1
}

/** out = a·s for s ∈ Fp. */
export function fp2MulFp(out: usize, a: usize, s: usize): void {
  fpMul(out + FP2_C0, a + FP2_C0, s);
  fpMul(out + FP2_C1, a + FP2_C1, s);
}

/** out = a·ξ with ξ = 9 + u: (9a0 − a1) + (a0 + 9a1)·u. */
export function fp2MulByXi(out: usize, a: usize): void {
  fpDouble(T0, a + FP2_C0);
  fpDouble(T0, T0);
  fpDouble(T0, T0);
  fpAdd(T0, T0, a + FP2_C0); // 9·a0
  fpDouble(T1, a + FP2_C1);
  fpDouble(T1, T1);
  fpDouble(T1, T1);
  fpAdd(T1, T1, a + FP2_C1); // 9·a1
  fpSub(T0, T0, a + FP2_C1); // 9a0 − a1
  fpAdd(out + FP2_C1, T1, a + FP2_C0); // a0 + 9a1
  fpCopy(out + FP2_C0, T0);
}

/** out = a⁻¹ = ā / (a0² + a1²); out = 0 when a = 0. */
export function fp2Inv(out: usize, a: usize): void {
  fpMul(T0, a + FP2_C0, a + FP2_C0);
  fpMul(T1, a + FP2_C1, a + FP2_C1);
  fpAdd(T0, T0, T1); // norm
  fpInv(T0, T0);
  fpMul(out + FP2_C0, a + FP2_C0, T0);
  fpMul(T1, a + FP2_C1, T0);
  fpNeg(out + FP2_C1, T1);
}

/** Decodes the EIP-197 wire form (c1 ‖ c0, big-endian); false if a coordinate is ≥ p. */
export function fp2FromBytes(out: usize, src: usize): bool {
  if (!fpFromBytes(out + FP2_C1, src + WIRE_C1)) return false;
  return fpFromBytes(out + FP2_C0, src + WIRE_C0);
}
export function fp2ToBytes(dst: usize, a: usize): void {
  fpToBytes(dst + WIRE_C1, a + FP2_C1);
  fpToBytes(dst + WIRE_C0, a + FP2_C0);
}
