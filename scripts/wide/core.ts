// The wide build's building blocks (scripts/asc-wide.ts assembles them): a
// function body of i64 locals, and the word-level pieces of a Montgomery
// product on i64.mul_wide_u.
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

export const MASK64 = (1n << 64n) - 1n;
export const words = (x: bigint): bigint[] => [0, 1, 2, 3].map((i) => (x >> BigInt(64 * i)) & MASK64);
export const signed = (x: bigint): string => (x >= 1n << 63n ? x - (1n << 64n) : x).toString();
/** −q⁻¹ mod 2^64 (Newton's iteration on the odd q). */
export function negInv64(q: bigint): bigint {
  let x = 1n;
  for (let i = 0; i < 7; i++) x = (x * (2n - q * x)) & MASK64;
  if (((x * q) & MASK64) !== 1n) throw new Error("inverse");
  return (1n << 64n) - x;
}

/** One function's body: i64 locals and flat/folded instructions. */
export class Fn {
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

export const ZERO = "(i64.const 0)";
export const k = (x: bigint): string => `(i64.const ${signed(x)})`;

/** Loads the nine limbs at ptr + offset into words x0..x3; reduces by 4q when the value has a bit at 2^256. */
export function pack(f: Fn, ptr: string, offset: number, x: string, q: bigint): void {
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
export function mul(f: Fn, x: string, y: string, T: string): void {
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
export function mulAdd(f: Fn, x: string, y: string, T: string): void {
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
export function carryUp(f: Fn, T: string, from: number): void {
  for (let k2 = from; k2 < 8; k2++) {
    f.add128(`${T}${k2}`, "c", f.get(`${T}${k2}`), ZERO, f.get("c"), ZERO);
  }
  f.set(`${T}8`, `(i64.add ${f.get(`${T}8`)} ${f.get("c")})`);
}

/** w0..w3 = T·2^−261 mod q, fully reduced (T < 33q·2^256, nine words; T is consumed). */
export function redc(f: Fn, T: string, q: bigint): void {
  const qw = words(q);
  const mu = negInv64(q);
  wordRounds(f, T, q, true);
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
export function redcStore(f: Fn, T: string, q: bigint, out: string, offset: number): void {
  redc(f, T, q);
  store(f, out, offset);
}

/** Stores the words w0..w3 (< q) at out + offset as nine 29-bit limbs. */
export function store(f: Fn, out: string, offset: number): void {
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

/** T[0..8] = x² (words x0..x3): the six cross products once, doubled, plus the four squares; T8 = 0. */
export function sqr(f: Fn, x: string, T: string): void {
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

/** (prefix0..3) = x + y (words; the sum must stay below 2^256). */
export function addWords(f: Fn, out: string, x: (i: number) => string, y: (i: number) => string): void {
  f.add128(`${out}0`, "c", x(0), ZERO, y(0), ZERO);
  for (let i = 1; i < 4; i++) {
    f.add128(`${out}${i}`, "g", x(i), ZERO, y(i), ZERO);
    f.add128(`${out}${i}`, "c", f.get(`${out}${i}`), f.get("g"), f.get("c"), ZERO);
  }
}

/**
 * Montgomery's four word rounds on T (m = t_i·µ mod 2^64, T += m·q·2^(64i)):
 * afterwards T4.. hold (T + M·q)/2^256. `ninth`: the carries run into T8
 * (redc's T < 33q·2^256 needs it); without, they stop at T7 (the caller
 * proves T + M·q < 2^512).
 */
export function wordRounds(f: Fn, T: string, q: bigint, ninth: boolean): void {
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
    if (ninth) carryUp(f, T, i + 4);
    else for (let k2 = i + 4; k2 < 8; k2++) f.add128(`${T}${k2}`, "c", f.get(`${T}${k2}`), ZERO, f.get("c"), ZERO);
  }
}
