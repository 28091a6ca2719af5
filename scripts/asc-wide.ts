// Generates assembly/wide.wat: the field products of the "wide" build, written
// on WebAssembly's wide-arithmetic instructions (i64.mul_wide_u: one 64×64 →
// 128-bit product; i64.add128 / i64.sub128), which AssemblyScript cannot emit.
// Run:
//
//   bun scripts/asc-wide.ts            (--check: compare with the committed file)
//
// How the wide build is made (scripts/asc-build.ts): asc compiles the same
// AssemblyScript sources as the portable build and also writes them as text;
// the functions named in assembly/wide.wat replace the same-named functions
// of that text (same signature, same memory representation), binaryen parses,
// validates and optimises the spliced functions, and emits the wide module.
// Nothing else differs between the two builds, so every other function — and
// every result — is the portable build's: a Montgomery product that is fully
// reduced is a unique number, whichever way it was computed.
//
// Why a splice and not a second engine on a new representation: the 29-bit
// limb layout (R = 2^261, 36 bytes an element) runs through every file of
// assembly/ and through the fused linear forms; changing it would fork all of
// them. Keeping the layout costs each product a pack (nine 29-bit limbs into
// four 64-bit words) and an unpack, a few shifts per word.
//
// The method, for modulus q (p or r) and operands a, b in the limb layout:
//   1. pack each operand into four words; an operand ≥ 2^256 (a lazy sum < 8q
//      has at most one bit above 2^256) is first reduced by 4q, so a, b < 2^256;
//   2. the product T = a·b as eight words (schoolbook, rows of four 64×64 →
//      128 products; a·b_j + t + carry never exceeds 128 bits);
//   3. Montgomery reduction by 2^261 = 2^(4·64) · 2^5: four word rounds
//      (m = t_i·µ mod 2^64, T += m·q·2^(64i)) leave U = (T + M·q)/2^256 <
//      T/2^256 + q, then one 5-bit round (m = u_0·µ mod 32) gives
//      V = (U + m·q)/32 < (U + 31q)/32 < 2q whenever U < 33q;
//   4. one conditional subtraction of q, then unpack into nine limbs.
// For fpMul/frMul, U < 2^256 + q < 6.3q. fp2Mul (operands < 4p, the lazy
// sums fp2mul.ts allows) keeps one reduction per coefficient with four
// products (schoolbook: Karatsuba's sums of operands < 4p would need a fifth
// word): c0 = a0b0 − a1b1 gets 4p·2^256 added when the difference is
// negative (4p·2^256 > 16p² > a1b1), so T < 4p·2^256 and U < 5p;
// c1 = a0b1 + a1b0 < 32p² needs a ninth word and gives U < 7.1p.

import { P, R } from "./asc-constants.ts";
import { emit, finish } from "./asc-emit.ts";

const MASK64 = (1n << 64n) - 1n;
const words = (x: bigint): bigint[] => [0, 1, 2, 3].map((i) => (x >> BigInt(64 * i)) & MASK64);
const signed = (x: bigint): string => (x >= 1n << 63n ? x - (1n << 64n) : x).toString();
/** −q⁻¹ mod 2^64 (Newton's iteration on the odd q). */
function negInv64(q: bigint): bigint {
  let x = 1n;
  for (let i = 0; i < 7; i++) x = (x * (2n - q * x)) & MASK64;
  if (((x * q) & MASK64) !== 1n) throw new Error("inverse");
  return (1n << 64n) - x;
}

/** One function's body: i64 locals and flat/folded instructions. */
class Fn {
  readonly locals = new Set<string>();
  readonly lines: string[] = [];
  line(s: string): void {
    this.lines.push(`  ${s}`);
  }
  /** An i64 local's name, declared on first use. */
  l(name: string): string {
    this.locals.add(name);
    return name;
  }
  get(name: string): string {
    return `(local.get $${this.l(name)})`;
  }
  set(name: string, expr: string): void {
    this.line(`(local.set $${this.l(name)} ${expr})`);
  }
  /** (lo, hi) = x·y, the full 128-bit product. */
  mulWide(lo: string, hi: string, x: string, y: string): void {
    this.line(`(i64.mul_wide_u ${x} ${y})`);
    this.line(`(local.set $${this.l(hi)})`);
    this.line(`(local.set $${this.l(lo)})`);
  }
  /** (lo, hi) = (alo, ahi) + (blo, bhi) mod 2^128. */
  add128(lo: string, hi: string, alo: string, ahi: string, blo: string, bhi: string): void {
    this.line(`(i64.add128 ${alo} ${ahi} ${blo} ${bhi})`);
    this.line(`(local.set $${this.l(hi)})`);
    this.line(`(local.set $${this.l(lo)})`);
  }
  sub128(lo: string, hi: string, alo: string, ahi: string, blo: string, bhi: string): void {
    this.line(`(i64.sub128 ${alo} ${ahi} ${blo} ${bhi})`);
    this.line(`(local.set $${this.l(hi)})`);
    this.line(`(local.set $${this.l(lo)})`);
  }
  text(name: string, params: string[]): string {
    const decl = [...this.locals].map((l) => `  (local $${l} i64)`).join("\n");
    return ` (func ${name} ${params.map((p) => `(param $${p} i32)`).join(" ")}\n${decl}\n${this.lines.join("\n")}\n )\n`;
  }
}

const ZERO = "(i64.const 0)";
const k = (x: bigint): string => `(i64.const ${signed(x)})`;

/** Loads the nine limbs at ptr + offset into words x0..x3; reduces by 4q when the value has a bit at 2^256. */
function pack(f: Fn, ptr: string, offset: number, x: string, q: bigint): void {
  const limb = (i: number) => `(i64.load32_u offset=${offset + 4 * i} (local.get $${ptr}))`;
  for (let i = 0; i < 9; i++) f.set(`${x}l${i}`, limb(i));
  const L = (i: number) => f.get(`${x}l${i}`);
  const or = (...xs: string[]) => xs.reduce((acc, e) => `(i64.or ${acc} ${e})`);
  const shl = (e: string, n: number) => `(i64.shl ${e} (i64.const ${n}))`;
  const shr = (e: string, n: number) => `(i64.shr_u ${e} (i64.const ${n}))`;
  f.set(`${x}0`, or(L(0), shl(L(1), 29), shl(L(2), 58)));
  f.set(`${x}1`, or(shr(L(2), 6), shl(L(3), 23), shl(L(4), 52)));
  f.set(`${x}2`, or(shr(L(4), 12), shl(L(5), 17), shl(L(6), 46)));
  f.set(`${x}3`, or(shr(L(6), 18), shl(L(7), 11), shl(L(8), 40)));
  // Bits 256.. (limb 8 above its 24th bit): at most one, the operand being < 8q.
  const q4 = words(4n * q);
  const sub = new Fn();
  for (const l of f.locals) sub.locals.add(l);
  sub.sub128("s", "h", sub.get(`${x}0`), ZERO, k(q4[0]!), ZERO);
  sub.set(`${x}0`, sub.get("s"));
  for (let i = 1; i < 4; i++) {
    sub.sub128("s", "g", sub.get(`${x}${i}`), ZERO, k(q4[i]!), ZERO);
    sub.add128("s", "h", sub.get("s"), sub.get("g"), sub.get("h"), sub.get("h"));
    sub.set(`${x}${i}`, sub.get("s"));
  }
  for (const l of sub.locals) f.locals.add(l);
  f.line(`(if (i64.ne ${shr(L(8), 24)} ${ZERO}) (then`);
  for (const s of sub.lines) f.line(s);
  f.line("))");
}

/** T[0..7] = x·y (words x0..x3, y0..y3); T8 = 0. */
function mul(f: Fn, x: string, y: string, T: string): void {
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 4; j++) {
      f.mulWide("lo", "hi", f.get(`${x}${i}`), f.get(`${y}${j}`));
      if (i > 0) f.add128("lo", "hi", f.get("lo"), f.get("hi"), f.get(`${T}${i + j}`), ZERO);
      if (j > 0) f.add128("lo", "hi", f.get("lo"), f.get("hi"), f.get("c"), ZERO);
      f.set(`${T}${i + j}`, f.get("lo"));
      f.set("c", f.get("hi"));
    }
    f.set(`${T}${i + 4}`, f.get("c"));
  }
  f.set(`${T}8`, ZERO);
}

/** T[0..8] += x·y. */
function mulAdd(f: Fn, x: string, y: string, T: string): void {
  for (let i = 0; i < 4; i++) {
    for (let j = 0; j < 4; j++) {
      f.mulWide("lo", "hi", f.get(`${x}${i}`), f.get(`${y}${j}`));
      f.add128("lo", "hi", f.get("lo"), f.get("hi"), f.get(`${T}${i + j}`), ZERO);
      if (j > 0) f.add128("lo", "hi", f.get("lo"), f.get("hi"), f.get("c"), ZERO);
      f.set(`${T}${i + j}`, f.get("lo"));
      f.set("c", f.get("hi"));
    }
    carryUp(f, T, i + 4);
  }
}

/** Adds the carry c into T[from..8]. */
function carryUp(f: Fn, T: string, from: number): void {
  for (let k2 = from; k2 < 8; k2++) {
    f.add128(`${T}${k2}`, "c", f.get(`${T}${k2}`), ZERO, f.get("c"), ZERO);
  }
  f.set(`${T}8`, `(i64.add ${f.get(`${T}8`)} ${f.get("c")})`);
}

/** w0..w3 = T·2^−261 mod q, fully reduced (T < 33q·2^256, nine words; T is consumed). */
function redc(f: Fn, T: string, q: bigint): void {
  const qw = words(q);
  const mu = negInv64(q);
  for (let i = 0; i < 4; i++) {
    f.set("m", `(i64.mul ${f.get(`${T}${i}`)} ${k(mu)})`);
    for (let j = 0; j < 4; j++) {
      f.mulWide("lo", "hi", f.get("m"), k(qw[j]!));
      f.add128("lo", "hi", f.get("lo"), f.get("hi"), f.get(`${T}${i + j}`), ZERO);
      if (j > 0) {
        f.add128("lo", "hi", f.get("lo"), f.get("hi"), f.get("c"), ZERO);
        f.set(`${T}${i + j}`, f.get("lo"));
      }
      f.set("c", f.get("hi"));
    }
    carryUp(f, T, i + 4);
  }
  // The 5-bit round on U = T4..T8.
  f.set("m", `(i64.and (i64.mul ${f.get(`${T}4`)} ${k(mu)}) (i64.const 31))`);
  for (let j = 0; j < 4; j++) {
    f.mulWide("lo", "hi", f.get("m"), k(qw[j]!));
    f.add128("lo", "hi", f.get("lo"), f.get("hi"), f.get(`${T}${4 + j}`), ZERO);
    if (j > 0) f.add128("lo", "hi", f.get("lo"), f.get("hi"), f.get("c"), ZERO);
    f.set(`${T}${4 + j}`, f.get("lo"));
    f.set("c", f.get("hi"));
  }
  f.set(`${T}8`, `(i64.add ${f.get(`${T}8`)} ${f.get("c")})`);
  for (let i = 0; i < 4; i++) {
    f.set(`v${i}`, `(i64.or (i64.shr_u ${f.get(`${T}${4 + i}`)} (i64.const 5)) (i64.shl ${f.get(`${T}${5 + i}`)} (i64.const 59)))`);
  }
  // V < 2q: subtract q unless that borrows.
  f.sub128("d0", "h", f.get("v0"), ZERO, k(qw[0]!), ZERO);
  for (let i = 1; i < 4; i++) {
    f.sub128(`d${i}`, "g", f.get(`v${i}`), ZERO, k(qw[i]!), ZERO);
    f.add128(`d${i}`, "h", f.get(`d${i}`), f.get("g"), f.get("h"), f.get("h"));
  }
  for (let i = 0; i < 4; i++) f.set(`w${i}`, `(select ${f.get(`d${i}`)} ${f.get(`v${i}`)} (i64.eqz ${f.get("h")}))`);
}

/** out + offset = T·2^−261 mod q, fully reduced, stored as nine limbs (T < 33q·2^256, nine words). */
function redcStore(f: Fn, T: string, q: bigint, out: string, offset: number): void {
  redc(f, T, q);
  store(f, out, offset);
}

/** Stores the words w0..w3 (< q) at out + offset as nine 29-bit limbs. */
function store(f: Fn, out: string, offset: number): void {
  const W = (i: number) => f.get(`w${i}`);
  const M = "(i64.const 536870911)";
  const limbs = [
    `(i64.and ${W(0)} ${M})`,
    `(i64.and (i64.shr_u ${W(0)} (i64.const 29)) ${M})`,
    `(i64.and (i64.or (i64.shr_u ${W(0)} (i64.const 58)) (i64.shl ${W(1)} (i64.const 6))) ${M})`,
    `(i64.and (i64.shr_u ${W(1)} (i64.const 23)) ${M})`,
    `(i64.and (i64.or (i64.shr_u ${W(1)} (i64.const 52)) (i64.shl ${W(2)} (i64.const 12))) ${M})`,
    `(i64.and (i64.shr_u ${W(2)} (i64.const 17)) ${M})`,
    `(i64.and (i64.or (i64.shr_u ${W(2)} (i64.const 46)) (i64.shl ${W(3)} (i64.const 18))) ${M})`,
    `(i64.and (i64.shr_u ${W(3)} (i64.const 11)) ${M})`,
    `(i64.shr_u ${W(3)} (i64.const 40))`,
  ];
  limbs.forEach((e, i) => f.line(`(i64.store32 offset=${offset + 4 * i} (local.get $${out}) ${e})`));
}

/** out = a·b·2^−261 mod q (fpMul, frMul). */
function fieldMul(name: string, q: bigint): string {
  const f = new Fn();
  pack(f, "a", 0, "x", q);
  pack(f, "b", 0, "y", q);
  mul(f, "x", "y", "t");
  redcStore(f, "t", q, "out", 0);
  return f.text(name, ["out", "a", "b"]);
}

/** out = a·b in Fp2 = Fp[u]/(u² + 1): schoolbook, one reduction per coefficient (fp2Mul). */
function fp2Mul(name: string): string {
  const f = new Fn();
  const IM = 36;
  // c1 = xv + yu first, so that its operands' words die before c0's product.
  pack(f, "a", 0, "x", P);
  pack(f, "a", IM, "y", P);
  pack(f, "b", 0, "u", P);
  pack(f, "b", IM, "v", P);
  mul(f, "x", "v", "t");
  mulAdd(f, "y", "u", "t");
  // c0 = xu − yv (+ 4p·2^256 when negative).
  mul(f, "x", "u", "s");
  mul(f, "y", "v", "r");
  f.sub128("s0", "h", f.get("s0"), ZERO, f.get("r0"), ZERO);
  for (let i = 1; i < 8; i++) {
    f.sub128(`s${i}`, "g", f.get(`s${i}`), ZERO, f.get(`r${i}`), ZERO);
    f.add128(`s${i}`, "h", f.get(`s${i}`), f.get("g"), f.get("h"), f.get("h"));
  }
  const p4 = words(4n * P);
  f.line(`(if (i64.ne ${f.get("h")} ${ZERO}) (then`);
  f.add128("s4", "c", f.get("s4"), ZERO, k(p4[0]!), ZERO);
  for (let i = 1; i < 4; i++) {
    f.add128(`s${4 + i}`, "g", f.get(`s${4 + i}`), ZERO, k(p4[i]!), ZERO);
    f.add128(`s${4 + i}`, "c", f.get(`s${4 + i}`), f.get("g"), f.get("c"), ZERO);
  }
  f.line("))");
  // Every input is read: out may alias a or b.
  redcStore(f, "s", P, "out", 0);
  redcStore(f, "t", P, "out", IM);
  return f.text(name, ["out", "a", "b"]);
}

/** T[0..8] = x² (words x0..x3): the six cross products once, doubled, plus the four squares; T8 = 0. */
function sqr(f: Fn, x: string, T: string): void {
  // Cross products x_i·x_j, i < j, into T1..T6.
  for (let i = 0; i < 3; i++) {
    for (let j = i + 1; j < 4; j++) {
      f.mulWide("lo", "hi", f.get(`${x}${i}`), f.get(`${x}${j}`));
      if (i > 0) f.add128("lo", "hi", f.get("lo"), f.get("hi"), f.get(`${T}${i + j}`), ZERO);
      if (j > i + 1) f.add128("lo", "hi", f.get("lo"), f.get("hi"), f.get("c"), ZERO);
      f.set(`${T}${i + j}`, f.get("lo"));
      f.set("c", f.get("hi"));
    }
    f.set(`${T}${i + 4}`, f.get("c"));
  }
  // Doubled: T7..T1 shifted left one bit (T7 takes T6's top bit).
  f.set(`${T}7`, `(i64.shr_u ${f.get(`${T}6`)} (i64.const 63))`);
  for (let i = 6; i >= 2; i--) {
    f.set(`${T}${i}`, `(i64.or (i64.shl ${f.get(`${T}${i}`)} (i64.const 1)) (i64.shr_u ${f.get(`${T}${i - 1}`)} (i64.const 63)))`);
  }
  f.set(`${T}1`, `(i64.shl ${f.get(`${T}1`)} (i64.const 1))`);
  // Plus the squares x_i² at T[2i], T[2i+1], one carry chain.
  f.set("c", ZERO);
  for (let i = 0; i < 4; i++) {
    f.mulWide("lo", "hi", f.get(`${x}${i}`), f.get(`${x}${i}`));
    if (i === 0) f.set(`${T}0`, f.get("lo"));
    else {
      f.add128("lo", "g", f.get("lo"), ZERO, f.get(`${T}${2 * i}`), ZERO);
      f.add128(`${T}${2 * i}`, "g", f.get("lo"), f.get("g"), f.get("c"), ZERO);
      f.add128("hi", "g", f.get("hi"), ZERO, f.get("g"), ZERO);
    }
    f.add128(`${T}${2 * i + 1}`, "c", f.get(`${T}${2 * i + 1}`), ZERO, f.get("hi"), i === 0 ? ZERO : f.get("g"));
  }
  f.set(`${T}8`, ZERO);
}

/** out = a²·2^−261 mod q (fpSqr, frSqr): 10 word products instead of 16. */
function fieldSqr(name: string, q: bigint): string {
  const f = new Fn();
  pack(f, "a", 0, "x", q);
  sqr(f, "x", "t");
  redcStore(f, "t", q, "out", 0);
  return f.text(name, ["out", "a"]);
}

/** (prefix0..3) = x + y (words; the sum must stay below 2^256). */
function addWords(f: Fn, out: string, x: (i: number) => string, y: (i: number) => string): void {
  f.add128(`${out}0`, "c", x(0), ZERO, y(0), ZERO);
  for (let i = 1; i < 4; i++) {
    f.add128(`${out}${i}`, "g", x(i), ZERO, y(i), ZERO);
    f.add128(`${out}${i}`, "c", f.get(`${out}${i}`), f.get("g"), f.get("c"), ZERO);
  }
}

/**
 * out = a² in Fp2 (fp2Sqr), coefficients < 2p: c0 = (a0 + a1)(a0 + 2p − a1),
 * both factors < 4p < 2^256, product < 16p²; c1 = 2·a0·a1 < 8p². Two
 * products of 4 × 4 words and one reduction per coefficient, with the
 * operands packed once (the portable build calls fpMul twice and three
 * additions).
 */
function fp2Sqr(name: string): string {
  const f = new Fn();
  const IM = 36;
  pack(f, "a", 0, "x", P);
  pack(f, "a", IM, "y", P);
  const p2 = words(2n * P);
  const X = (i: number) => f.get(`x${i}`);
  const Y = (i: number) => f.get(`y${i}`);
  addWords(f, "s", X, Y);
  addWords(f, "e", X, (i) => k(p2[i]!));
  f.sub128("d0", "h", f.get("e0"), ZERO, Y(0), ZERO);
  for (let i = 1; i < 4; i++) {
    f.sub128(`d${i}`, "g", f.get(`e${i}`), ZERO, Y(i), ZERO);
    f.add128(`d${i}`, "h", f.get(`d${i}`), f.get("g"), f.get("h"), f.get("h"));
  }
  // c1 = 2·a0·a1 first: x and y die with it.
  mul(f, "x", "y", "r");
  for (let i = 8; i >= 1; i--) f.set(`r${i}`, `(i64.or (i64.shl ${f.get(`r${i}`)} (i64.const 1)) (i64.shr_u ${f.get(`r${i - 1}`)} (i64.const 63)))`);
  f.set("r0", `(i64.shl ${f.get("r0")} (i64.const 1))`);
  mul(f, "s", "d", "t");
  // Every input is read: out may alias a.
  redcStore(f, "t", P, "out", 0);
  redcStore(f, "r", P, "out", IM);
  return f.text(name, ["out", "a"]);
}

const FR_BYTES = 36;

/**
 * out = a0·b0 + a1·b1 + a2·b2 mod r (poseidon.ts dot3: a row of Poseidon's
 * matrix times the state): the three products summed unreduced (T < 3·2^512,
 * below the 33r·2^256 redc allows), one reduction instead of three.
 */
function dot3(name: string): string {
  const f = new Fn();
  pack(f, "a", 0, "x", R);
  pack(f, "b", 0, "y", R);
  mul(f, "x", "y", "t");
  for (let j = 1; j < 3; j++) {
    pack(f, "a", j * FR_BYTES, "x", R);
    pack(f, "b", j * FR_BYTES, "y", R);
    mulAdd(f, "x", "y", "t");
  }
  redcStore(f, "t", R, "out", 0);
  return f.text(name, ["out", "a", "b"]);
}

/**
 * poseidon.ts poseidonLevel on the one-lane path: io holds n 32-byte
 * little-endian nodes; POSEIDON_NOT_CANONICAL (−1) when one is ≥ r, else
 * parent i = hashPair(node 2i, node 2i + 1) over node i (never a node still
 * to be read), a lone last node copied up, and the parent count returned.
 */
function poseidonLevel(name: string): string {
  const f = new Fn();
  const rw = words(R);
  // x ≥ r exactly when x − r does not borrow (h = 0).
  for (let i = 0; i < 4; i++) f.set(`x${i}`, `(i64.load offset=${8 * i} (local.get $p))`);
  f.sub128("d", "h", f.get("x0"), ZERO, k(rw[0]!), ZERO);
  for (let i = 1; i < 4; i++) {
    f.sub128("d", "g", f.get(`x${i}`), ZERO, k(rw[i]!), ZERO);
    f.add128("d", "h", f.get("d"), f.get("g"), f.get("h"), f.get("h"));
  }
  const decl = [...f.locals].map((l) => `  (local $${l} i64)`).join("\n");
  const io = "(global.get $assembly/io/ioBase)";
  return ` (func ${name} (param $n i32) (result i32)
  (local $i i32) (local $p i32) (local $pairs i32)
${decl}
  (block $checked
   (loop $check
    (br_if $checked (i32.ge_u (local.get $i) (local.get $n)))
    (local.set $p (i32.add ${io} (i32.shl (local.get $i) (i32.const 5))))
${f.lines.map((l) => `   ${l}`).join("\n")}
    (if (i64.eqz (local.get $h)) (then (return (i32.const -1))))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (br $check)))
  (local.set $pairs (i32.shr_u (local.get $n) (i32.const 1)))
  (local.set $i (i32.const 0))
  (block $hashed
   (loop $hash
    (br_if $hashed (i32.ge_u (local.get $i) (local.get $pairs)))
    (call $assembly/poseidon/hashPair
     (i32.add ${io} (i32.shl (local.get $i) (i32.const 5)))
     (i32.add ${io} (i32.shl (local.get $i) (i32.const 6)))
     (i32.add ${io} (i32.add (i32.shl (local.get $i) (i32.const 6)) (i32.const 32))))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (br $hash)))
  (if (i32.and (local.get $n) (i32.const 1))
   (then
    (memory.copy
     (i32.add ${io} (i32.shl (local.get $pairs) (i32.const 5)))
     (i32.add ${io} (i32.shl (i32.sub (local.get $n) (i32.const 1)) (i32.const 5)))
     (i32.const 32))))
  (i32.add (local.get $pairs) (i32.and (local.get $n) (i32.const 1)))
 )
`;
}

/** Every replacement, by the name of the function it replaces (in file order). */
export const WIDE_FUNCTIONS: Record<string, () => string> = {
  "$assembly/fp/fpMul": () => fieldMul("$assembly/fp/fpMul", P),
  "$assembly/fr/frMul": () => fieldMul("$assembly/fr/frMul", R),
  "$assembly/fp2mul/fp2Mul": () => fp2Mul("$assembly/fp2mul/fp2Mul"),
  "$assembly/fp/fpSqr": () => fieldSqr("$assembly/fp/fpSqr", P),
  "$assembly/fr/frSqr": () => fieldSqr("$assembly/fr/frSqr", R),
  "$assembly/fp2/fp2Sqr": () => fp2Sqr("$assembly/fp2/fp2Sqr"),
  "$assembly/poseidon/dot3": () => dot3("$assembly/poseidon/dot3"),
  "$assembly/poseidon/poseidonLevel": () => poseidonLevel("$assembly/poseidon/poseidonLevel"),
};

/** assembly/wide.wat's text with the given replacements (default: all; bench/field.ts --without builds variants to measure one piece's gain). */
export function wideText(names: string[] = Object.keys(WIDE_FUNCTIONS)): string {
  return `;; generated by scripts/asc-wide.ts, do not edit (run: bun scripts/asc-wide.ts)
;;
;; The wide build's replacements for same-named functions of the AssemblyScript
;; modules (scripts/asc-build.ts splices them in); the method and its bounds
;; are explained in the generator.

${names.map((n) => WIDE_FUNCTIONS[n]!()).join("\n")}`;
}

if (import.meta.main) finish([emit("assembly/wide.wat", wideText())], "assembly/wide.wat");
