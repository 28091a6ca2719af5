// The relaxed-SIMD experiment: a Montgomery product of TWO independent field
// elements at once, one per f64x2 lane, on five 52-bit limbs (R = 2^260),
// with the exact product split by fused multiply-add. It is measured against
// two wide (i64.mul_wide_u) products by bench/simd.ts and tested against
// BigInt by test/assembly/wide-simd.test.ts; it is NOT part of the wide build
// (docs/performance.md, "Relaxed SIMD (tried)", says why: it loses).
//
// The split, for integers a, b < 2^52 held exactly in f64 lanes (a·b < 2^104):
//   h  = fma(a, b, 2^104): 2^104 + a·b rounded to a multiple of 2^52 (the ulp
//        of [2^104, 2^105)); bits(h) − bits(2^104) = hi/2^52 exactly, as an
//        integer (h stays in that binade: a·b ≤ (2^52−1)² < 2^104 − 2^53);
//   nh = 2^104 − h = −hi (exact: both are multiples of 2^52 below 2^105);
//   l  = fma(a, b, nh) = a·b − hi, exact, in [−2^51, 2^51] (round to nearest);
//   lf = l + 3·2^51 ∈ [2^52, 2^53], exact (ulp 1 there), and
//        bits(lf) − bits(3·2^51) = l (at 2^53 the formula still holds: the
//        bit pattern continues across the binade boundary).
// So a product costs two FMAs, one subtraction and one addition, and its two
// halves are added to i64x2 columns as RAW bit patterns; each column keeps a
// count of the constants it carries and subtracts them once (mod 2^64) before
// it is read. No float→int conversion is ever needed; int→float for a value
// x < 2^52 is bits(2^52) | x reinterpreted, minus 2^52.
//
// Bounds: a column receives at most 5 hi (< 2^52) and 5 lo (|lo| ≤ 2^51) from
// the product, as many from the reduction, and a carry < 2^5: < 2^56, no i64
// overflow. Inputs < 2^256 in limbs < 2^52 (top limb < 2^48): the reduction
// gives V = (a·b + M·q)/2^260 < 2^252 + q < 2q < 2^256 (M < 2^260), so the
// outputs are valid inputs (lazy: in [0, 2q), no final subtraction).
//
// JSC must lower f64x2.relaxed_madd to a fused multiply-add for the split to
// be exact (relaxed SIMD allows either); the test checks it on this engine.

import { P } from "../asc-constants.ts";

const MASK52 = (1n << 52n) - 1n;
const f64bits = (x: number): bigint => new BigUint64Array(new Float64Array([x]).buffer)[0]!;
const C104 = 2 ** 104;
const C104BITS = f64bits(C104);
const C3_51 = 3 * 2 ** 51;
const C3_51BITS = f64bits(C3_51);
const BITS52 = f64bits(2 ** 52);
const i64 = (x: bigint): string => {
  const v = BigInt.asIntN(64, x);
  return `(v128.const i64x2 ${v} ${v})`;
};
const f64 = (x: number): string => `(v128.const f64x2 ${x} ${x})`;

/** −q⁻¹ mod 2^52. */
function negInv52(q: bigint): bigint {
  let x = 1n;
  for (let i = 0; i < 7; i++) x = (x * (2n - q * x)) & MASK52;
  return ((1n << 52n) - x) & MASK52;
}

/** The function $mul2 (a, b, out: i32): out ← a·b·2^−260 mod q, lane by lane; each operand is five v128 (limb i of both elements at +16i). */
export function mul2Text(q: bigint): string {
  const lines: string[] = [];
  const locals = new Set<string>();
  const L = (n: string) => {
    locals.add(n);
    return `(local.get $${n})`;
  };
  const set = (n: string, e: string) => {
    locals.add(n);
    lines.push(`  (local.set $${n} ${e})`);
  };
  const toF = (x: string) => `(f64x2.sub (v128.or ${x} ${i64(BITS52)}) ${f64(2 ** 52)})`;
  // Column k: raw sum, with pending[k] (the constants its raw bit patterns
  // carry, mod 2^64) still to subtract.
  const pending = new Array<bigint>(10).fill(0n);
  for (let k = 0; k < 10; k++) set(`t${k}`, i64(0n));
  const add = (k: number, e: string) => set(`t${k}`, `(i64x2.add ${L(`t${k}`)} ${e})`);
  const settle = (k: number, bias = 0n) => {
    const c = pending[k]! - bias;
    if (c !== 0n) set(`t${k}`, `(i64x2.sub ${L(`t${k}`)} ${i64(c)})`);
    pending[k] = 0n;
  };
  // The carry of column k into k + 1: ⌊t_k / 2^52⌋. JavaScriptCore lowers
  // i64x2.shr_s slowly (it cost 15 ns of a 63 ns product), so the column is
  // settled with a bias B = 2^57 added (|t_k| < 2^57: non-negative after) and
  // shifted logically; B is a multiple of 2^52, so ⌊(t + B)/2^52⌋ =
  // ⌊t/2^52⌋ + 2^5 and t + B ≡ t mod 2^52; the 2^5 joins column k + 1's
  // pending constants, so the bias costs no instruction.
  const BIAS = 1n << 57n;
  const carry = (k: number) => {
    settle(k, BIAS);
    add(k + 1, `(i64x2.shr_u ${L(`t${k}`)} (i32.const 52))`);
    pending[k + 1]! += BIAS >> 52n;
  };
  /** Adds x·y (f64 lanes) into columns k (low 52 bits) and k+1 (high). */
  const product = (x: string, y: string, k: number) => {
    set("h", `(f64x2.relaxed_madd ${x} ${y} ${f64(C104)})`);
    set("l", `(f64x2.relaxed_madd ${x} ${y} (f64x2.sub ${f64(C104)} ${L("h")}))`);
    add(k, `(f64x2.add ${L("l")} ${f64(C3_51)})`);
    pending[k]! += C3_51BITS;
    add(k + 1, L("h"));
    pending[k + 1]! += C104BITS;
  };
  for (let i = 0; i < 5; i++) {
    set(`a${i}`, toF(`(v128.load offset=${16 * i} (local.get $a))`));
    set(`b${i}`, toF(`(v128.load offset=${16 * i} (local.get $b))`));
  }
  for (let i = 0; i < 5; i++) for (let j = 0; j < 5; j++) product(L(`a${i}`), L(`b${j}`), i + j);
  const mu = negInv52(q);
  const qf = Array.from({ length: 5 }, (_, j) => Number((q >> BigInt(52 * j)) & MASK52));
  for (let i = 0; i < 5; i++) {
    settle(i);
    // m = t_i·µ mod 2^52 (low bits of the two's complement product are exact), so t_i + m·q ≡ 0 mod 2^52.
    set("m", toF(`(v128.and (i64x2.mul ${L(`t${i}`)} ${i64(mu)}) ${i64(MASK52)})`));
    for (let j = 0; j < 5; j++) product(L("m"), f64(qf[j]!), i + j);
    // t_i is now a multiple of 2^52: its carry is the exact quotient.
    carry(i);
  }
  for (let k = 5; k < 9; k++) {
    carry(k);
    set(`t${k}`, `(v128.and ${L(`t${k}`)} ${i64(MASK52)})`);
  }
  settle(9);
  for (let k = 5; k < 10; k++) lines.push(`  (v128.store offset=${16 * (k - 5)} (local.get $out) ${L(`t${k}`)})`);
  const decl = [...locals].map((n) => `  (local $${n} v128)`).join("\n");
  return ` (func $mul2 (export "mul2") (param $a i32) (param $b i32) (param $out i32)\n${decl}\n${lines.join("\n")}\n )\n`;
}

/** The experiment's module: memory, mul2, and bench2(n) — n dependent products x ← x·y at 0 and 80. */
export function simdModuleText(q: bigint = P): string {
  return `(module
 (memory (export "memory") 1)
${mul2Text(q)}
 (func (export "bench2") (param $n i32)
  (loop $l
   (if (local.get $n) (then
    (call $mul2 (i32.const 0) (i32.const 80) (i32.const 0))
    (local.set $n (i32.sub (local.get $n) (i32.const 1)))
    (br $l))))
 )
)
`;
}

/**
 * A module whose f(x, y, z) is f64x2.relaxed_madd(x, y, z) in lane 0. With
 * x = y = 2^52 − 1 and z = −round(x·y), a fused multiply-add gives 1 (the
 * product's rounding error) and a multiply then add gives 0.
 */
const PROBE = `(module (func (export "f") (param $x f64) (param $y f64) (param $z f64) (result f64)
  (f64x2.extract_lane 0 (f64x2.relaxed_madd (f64x2.splat (local.get $x)) (f64x2.splat (local.get $y)) (f64x2.splat (local.get $z))))))`;

/** The probe's module: f(2^52 − 1, 2^52 − 1, −(2^52 − 1)²) is 1 where relaxed_madd fuses, 0 where it does not. */
export const relaxedMaddProbe = (): Promise<Uint8Array> => assemble(PROBE, false);

/** True when this engine's f64x2.relaxed_madd is a fused multiply-add (the split above needs it); checked after 20,000 calls, so in the optimising tier too. */
export async function relaxedMaddFuses(): Promise<boolean> {
  const { instance } = await WebAssembly.instantiate(await relaxedMaddProbe(), {});
  const f = instance.exports.f as (x: number, y: number, z: number) => number;
  const x = 2 ** 52 - 1;
  let fused = true;
  for (let i = 0; i < 20_000; i++) fused &&= f(x, x, -(x * x)) === 1;
  return fused;
}

/** The module assembled and optimised by binaryen (SIMD and relaxed SIMD enabled). */
export function simdModuleBinary(q: bigint = P): Promise<Uint8Array> {
  return assemble(simdModuleText(q), true);
}

async function assemble(text: string, optimise: boolean): Promise<Uint8Array> {
  const binaryen = (await import("binaryen")).default;
  const module = binaryen.parseText(text);
  try {
    const F = binaryen.Features;
    module.setFeatures(F.MVP | F.SIMD128 | F.RelaxedSIMD | F.MutableGlobals);
    if (!module.validate()) throw new Error("the SIMD module does not validate");
    if (optimise) {
      binaryen.setOptimizeLevel(3);
      binaryen.setShrinkLevel(0);
      module.optimize();
    }
    return module.emitBinary();
  } finally {
    module.dispose();
  }
}
