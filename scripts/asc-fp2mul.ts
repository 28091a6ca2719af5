// Generates assembly/fp2mul.ts: the Fp2 multiplication with one Montgomery
// reduction per output coefficient, as straight-line code (the limb loops of
// the schoolbook products and of the reduction are unrolled here so that
// asc keeps all 36 input limbs in locals).
//
//   bun scripts/asc-fp2mul.ts          regenerate
//   bun scripts/asc-fp2mul.ts --check  exit 1 when the committed file differs
//
// The method (Aranha, Karabina, Longa, Gebotys, López 2011, "Faster explicit
// formulas for computing pairings over ordinary curves", §3, lazy reduction
// in Fp2, adapted to 29-bit limbs):
//
//   a = x + y·i, b = u + v·i  (9 limbs each: x0..x8, y0..y8, u0..u8, v0..v8)
//   e = x·u, f = y·v, g = (x + y)(u + v)       three 9×9 schoolbook products, by column
//   c0 = e − f + 16p²,  c1 = g − e − f          double-width, unreduced (17 columns)
//   out.c0 = REDC(c0), out.c1 = REDC(c1)        REDC: Montgomery reduction, R = 2^261
//
// Why 16p²: e − f is negative when y·v > x·u. Operands are < 4p (the lazy
// sums of fpAddLazy), so f < 16p² and c0 = e − f + 16p² lies in [0, 32p²);
// 16p² ≡ 0 (mod p) changes nothing after reduction. It is added as its
// eighteen 29-bit digits (column k gets digit k of 16p²), so column 17,
// which no product reaches, starts at the top digit. Columns are signed i64
// meanwhile: a column holds at most 9 products of two limbs < 2^29 plus a
// digit, |column| < 9·2^58 + 2^29 < 2^63. The Karatsuba column of g uses
// limb sums < 2^30 and may reach 9·2^60 > 2^63, but it is computed in
// wrapping u64 and e + f is subtracted before the cast: the true value
// g − e − f = x·v + y·u is < 2·9·2^58 and the wrap-around cancels exactly.
//
// Reduction bound: REDC(c) = (c + m·p)/R with m < R, so REDC(c) < c/R + p.
// With c < 32p² and p/R < 2^-7, REDC(c) < p/4 + p < 2p, and fpStoreReduced
// brings it into [0, p).

import { emit, finish } from "./asc-emit.ts";
import { P, LIMB_BITS, LIMBS } from "./asc-constants.ts";

const N = LIMBS; // limbs per Fp
const COLS = 2 * N; // columns of a double-width value (0..16 products, 17 carry)
const OFFSET = 16n * P * P;
const digits: bigint[] = [];
{
  let x = OFFSET;
  for (let k = 0; k < COLS; k++) {
    digits.push(x & ((1n << LIMB_BITS) - 1n));
    x >>= LIMB_BITS;
  }
  if (x !== 0n) throw new Error("16p² does not fit 18 digits");
}

export const range = (n: number) => Array.from({ length: n }, (_, i) => i);
/** Terms a_i·b_j with i + j = k, as "a{i} * b{j}". */
export const column = (a: string, b: string, k: number) =>
  range(N)
    .filter((i) => k - i >= 0 && k - i < N)
    .map((i) => `${a}${i} * ${b}${k - i}`)
    .join(" + ");

/**
 * SIMD for the products e = x·u and f = y·v: the limb pairs (x_i, y_i) and
 * (u_j, v_j) sit in lanes 0 and 1 of an i32x4, and one
 * i64x2.extmul_low_i32x4_u yields x_i·u_j and y_i·v_j together, so each
 * column of e and f costs half the multiply instructions. Measured under
 * Bun: the 162 products of e and f in 35–50 ns against 54–66 ns scalar
 * (the third product g stays scalar: lanes 2–3 would waste half their
 * work). Set to false to generate the scalar form.
 */
export const SIMD_PRODUCTS = true;

/**
 * Emits the loads of a = x + y·i, b = u + v·i (named offsets RE, IM, never
 * literal byte addresses), the limb sums s = x + y, t = u + v, and the
 * product columns e0..e16, f0..f16 (u64); the column g_k of s·t is
 * column("s", "t", k).
 */
export function emitProducts(w: (line: string) => void): void {
  for (let i = 0; i < N; i++) {
    w(`const xa${i} = load<i32>(a + RE + ${i} * LIMB_BYTES), ya${i} = load<i32>(a + IM + ${i} * LIMB_BYTES);`);
    w(`const ub${i} = load<i32>(b + RE + ${i} * LIMB_BYTES), vb${i} = load<i32>(b + IM + ${i} * LIMB_BYTES);`);
  }
  for (let i = 0; i < N; i++) {
    w(`const x${i}: u64 = xa${i} as u64, y${i}: u64 = ya${i} as u64, u${i}: u64 = ub${i} as u64, v${i}: u64 = vb${i} as u64;`);
  }
  for (let i = 0; i < N; i++) w(`const s${i}: u64 = x${i} + y${i}, t${i}: u64 = u${i} + v${i};`);
  if (SIMD_PRODUCTS) {
    for (let i = 0; i < N; i++) {
      w(`const XY${i} = i32x4.replace_lane(i32x4.splat(xa${i}), 1, ya${i});`);
      w(`const UV${i} = i32x4.replace_lane(i32x4.splat(ub${i}), 1, vb${i});`);
    }
  }
  for (let k = 0; k < COLS - 1; k++) {
    if (SIMD_PRODUCTS) {
      const terms = range(N)
        .filter((i) => k - i >= 0 && k - i < N)
        .map((i) => `i64x2.extmul_low_i32x4_u(XY${i}, UV${k - i})`);
      const sum = terms.slice(1).reduce((acc, t) => `i64x2.add(${acc}, ${t})`, terms[0]!);
      w(`const EF${k} = ${sum}; // lanes: e${k}, f${k}`);
      w(`const e${k}: u64 = i64x2.extract_lane(EF${k}, 0) as u64, f${k}: u64 = i64x2.extract_lane(EF${k}, 1) as u64;`);
    } else {
      w(`const e${k}: u64 = ${column("x", "u", k)};`);
      w(`const f${k}: u64 = ${column("y", "v", k)};`);
    }
  }
}

const lines: string[] = [];
const w = (s: string) => lines.push(`  ${s}`);

emitProducts(w);
for (let k = 0; k < COLS - 1; k++) {
  w(`let c${k}: i64 = (e${k} - f${k} + OFFSET_16P2_${k}) as i64;`);
  w(`let d${k}: i64 = (${column("s", "t", k)} - e${k} - f${k}) as i64;`);
}
w(`let c${COLS - 1}: i64 = OFFSET_16P2_${COLS - 1}, d${COLS - 1}: i64 = 0;`);
w(`let m: i64, n: i64;`);
// The two Montgomery reductions (REDC by 2^29, nine rounds each) are
// independent; their rounds are interleaved so that each round's serial
// chain (column → m → m·p0 → carry into the next column) overlaps the
// other's. Measured on the reduction pair alone: 73 ns against 79 ns run
// one after the other. (Both in the two lanes of i64x2 vectors: 87 ns,
// slower, so the reduction stays scalar.)
for (let i = 0; i < N; i++) {
  for (const [c, m] of [
    ["c", "m"],
    ["d", "n"],
  ] as const) {
    w(`${m} = (((${c}${i} as u32) * MU) & LIMB_MASK) as i64; // ${c}${i} + ${m}·p ≡ 0 (mod 2^29)`);
  }
  for (const [c, m] of [
    ["c", "m"],
    ["d", "n"],
  ] as const) {
    w(`${c}${i + 1} += ((${c}${i} + ${m} * (P0 as i64)) >> LIMB_SHIFT) + ${m} * (P1 as i64);`);
  }
  for (let j = 2; j < N; j++) w(`c${i + j} += m * (P${j} as i64); d${i + j} += n * (P${j} as i64);`);
}
for (const c of ["c", "d"]) for (let k = N; k < COLS - 1; k++) w(`${c}${k + 1} += ${c}${k} >> LIMB_SHIFT; ${c}${k} &= LIMB_MASK;`);
const store = (c: string, dst: string) =>
  `fpStoreReduced(${dst}, ${range(N)
    .map((i) => `${c}${N + i} as u64`)
    .join(", ")});`;
w(store("c", "out + RE"));
w(store("d", "out + IM"));

const text = `// generated by scripts/asc-fp2mul.ts, do not edit (run: bun scripts/asc-fp2mul.ts)
//
// Fp2 multiplication with lazy reduction; the method, the 16p² offset and
// the bounds are explained in the generator.

import { FP_SIZE, LIMB_BYTES, fpStoreReduced } from "./fp";
import { P0, P1, P2, P3, P4, P5, P6, P7, P8, MU } from "./constants";

/** Byte offsets of the real and imaginary coefficients (fp2.ts FP2_C0, FP2_C1). */
const RE: usize = 0;
const IM: usize = FP_SIZE;
const LIMB_SHIFT: i64 = ${LIMB_BITS};
const LIMB_MASK: i64 = ${"0x" + ((1n << LIMB_BITS) - 1n).toString(16)};

/** 16p² as ${COLS} digits of ${LIMB_BITS} bits (column k of c0 starts at digit k), keeping c0 = a0b0 − a1b1 non-negative. */
${digits.map((d, k) => `const OFFSET_16P2_${k}: ${k === COLS - 1 ? "i64" : "u64"} = ${d};`).join("\n")}

/**
 * out = a·b in Fp2 (Karatsuba, three products, two Montgomery reductions).
 * Operands may be lazy sums < 4p whose limbs 0..7 are normalised (< 2^29),
 * as fpAddLazy produces; the result is fully reduced. out may alias a or b.
 */
export function fp2Mul(out: usize, a: usize, b: usize): void {
${lines.join("\n")}
}
`;

if (import.meta.main) finish([emit("assembly/fp2mul.ts", text)], "assembly/fp2mul.ts");
