// The wide build's MSM pieces (method and bounds of the product in ./core.ts).
//
// The bucket trees of assembly/msm.ts spend most of their time in the chord
// step of an affine addition: λ = (y_Q − y_P)·inv, x₃ = λ² − x_P − x_Q,
// y₃ = λ(x_P − x₃) − y_P. Through the spliced fpMul/fpSqr each product packs
// its operands (nine limbs → four words) and unpacks its result, and each of
// the four subtractions runs on limbs. Here the five inputs are packed once,
// λ stays in words, the subtractions are word carry chains, and only x₃, y₃
// are unpacked.

import { P } from "../asc-constants.ts";
import { Fn, ZERO, k, mul, pack, redc, sqr, store, words } from "./core.ts";

const FP_BYTES = 36;

/** out = x + C − y on words (C a constant; the caller proves 0 ≤ x + C − y < 2^256). */
function addConstSub(f: Fn, out: string, x: string, c: bigint, y: string): void {
  const cw = words(c);
  f.add128(`${out}0`, "c", f.get(`${x}0`), ZERO, k(cw[0]!), ZERO);
  for (let i = 1; i < 4; i++) {
    f.add128(`${out}${i}`, "g", f.get(`${x}${i}`), ZERO, k(cw[i]!), ZERO);
    f.add128(`${out}${i}`, "c", f.get(`${out}${i}`), f.get("g"), f.get("c"), ZERO);
  }
  // The borrow h is 0 or −1 (all ones): adding (h, h) propagates it as a 128-bit −1.
  f.sub128(`${out}0`, "h", f.get(`${out}0`), ZERO, f.get(`${y}0`), ZERO);
  for (let i = 1; i < 4; i++) {
    f.sub128(`${out}${i}`, "g", f.get(`${out}${i}`), ZERO, f.get(`${y}${i}`), ZERO);
    f.add128(`${out}${i}`, "h", f.get(`${out}${i}`), f.get("g"), f.get("h"), f.get("h"));
  }
}

/** x ← x − q unless that borrows (x < 2^256): one step of bringing x below q. */
function condSub(f: Fn, x: string, q: bigint): void {
  const qw = words(q);
  f.sub128("e0", "h", f.get(`${x}0`), ZERO, k(qw[0]!), ZERO);
  for (let i = 1; i < 4; i++) {
    f.sub128(`e${i}`, "g", f.get(`${x}${i}`), ZERO, k(qw[i]!), ZERO);
    f.add128(`e${i}`, "h", f.get(`e${i}`), f.get("g"), f.get("h"), f.get("h"));
  }
  for (let i = 0; i < 4; i++) f.set(`${x}${i}`, `(select ${f.get(`e${i}`)} ${f.get(`${x}${i}`)} (i64.eqz ${f.get("h")}))`);
}

const copy = (f: Fn, to: string, from: string): void => {
  for (let i = 0; i < 4; i++) f.set(`${to}${i}`, f.get(`${from}${i}`));
};

/**
 * msm.ts g1AddChord(dst, P, Q, inv): every input reduced (< p), so
 *   e = y_Q + p − y_P ∈ (0, 2p), λ = redc(e·inv) < p (T < 2p² < 33p·2^256);
 *   λ² = redc(λ·λ) < p; x₃ = λ² + 2p − x_P − x_Q ∈ [0, 3p), 3p < 2^256,
 *     brought below p by two conditional subtractions;
 *   e' = x_P + p − x₃ ∈ (0, 2p), y₃ = redc(λ·e') + p − y_P ∈ (0, 2p), one
 *     conditional subtraction.
 * Every input is packed before the first store: dst may alias P or Q.
 */
export function g1AddChord(name: string): string {
  const f = new Fn();
  pack(f, "P", 0, "px", P);
  pack(f, "P", FP_BYTES, "py", P);
  pack(f, "Q", 0, "qx", P);
  pack(f, "Q", FP_BYTES, "qy", P);
  pack(f, "inv", 0, "iv", P);
  addConstSub(f, "ey", "qy", P, "py");
  mul(f, "ey", "iv", "t");
  redc(f, "t", P);
  copy(f, "lam", "w");
  sqr(f, "lam", "t");
  redc(f, "t", P);
  addConstSub(f, "xa", "w", 2n * P, "px");
  addConstSub(f, "x3", "xa", 0n, "qx");
  condSub(f, "x3", P);
  condSub(f, "x3", P);
  addConstSub(f, "ex", "px", P, "x3");
  mul(f, "lam", "ex", "t");
  redc(f, "t", P);
  addConstSub(f, "y3", "w", P, "py");
  condSub(f, "y3", P);
  copy(f, "w", "y3");
  store(f, "dst", FP_BYTES);
  copy(f, "w", "x3");
  store(f, "dst", 0);
  return f.text(name, ["dst", "P", "Q", "inv"]);
}

/** Stores the words x0..x3 at ptr + offset (the word scratch area: 32 bytes an element). */
function storeWords(f: Fn, ptr: string, offset: number, x: string): void {
  for (let i = 0; i < 4; i++) f.line(`(i64.store offset=${offset + 8 * i} (local.get $${ptr}) ${f.get(`${x}${i}`)})`);
}
function loadWords(f: Fn, ptr: string, offset: number, x: string): void {
  for (let i = 0; i < 4; i++) f.set(`${x}${i}`, `(i64.load offset=${offset + 8 * i} (local.get $${ptr}))`);
}

/**
 * msm.ts g1InvertBatch(den, pre, t): den[0..t) (reduced, none zero) ← their
 * inverses by Montgomery's trick, with the prefix products kept as words in
 * pre (32 bytes an element, where the portable body keeps 36-byte limbs: the
 * two bodies never mix, both being in or out of a build together) and the
 * running product in locals: per element one pack forward, one pack and one
 * unpack back, instead of three products' six packs and three unpacks. The
 * one inversion is the module's fpInv, on limbs at pre + 32t (msm.ts reserves
 * pre with room for it). Every product is of two reduced elements: T < p²,
 * far inside redc's bound.
 */
export function g1InvertBatch(name: string): string {
  const f = new Fn();
  f.line("(local.set $first (local.get $pre))");
  // Forward: pre[i] = d₀·…·dᵢ; den and pre walk to element t − 1.
  pack(f, "den", 0, "acc", P);
  storeWords(f, "pre", 0, "acc");
  f.line("(block $fwdDone (loop $fwd");
  f.line("(br_if $fwdDone (i32.le_u (local.get $t) (i32.const 1)))");
  f.line("(local.set $t (i32.sub (local.get $t) (i32.const 1)))");
  f.line(`(local.set $den (i32.add (local.get $den) (i32.const ${FP_BYTES})))`);
  f.line("(local.set $pre (i32.add (local.get $pre) (i32.const 32)))");
  pack(f, "den", 0, "x", P);
  mul(f, "acc", "x", "t");
  redc(f, "t", P);
  copy(f, "acc", "w");
  storeWords(f, "pre", 0, "acc");
  f.line("(br $fwd)))");
  // The product's inverse, through fpInv on limbs just past the last word slot.
  f.line("(local.set $prev (i32.add (local.get $pre) (i32.const 32)))");
  copy(f, "w", "acc");
  store(f, "prev", 0);
  f.line("(call $assembly/fp/fpInv (local.get $prev) (local.get $prev))");
  pack(f, "prev", 0, "acc", P);
  // Back: at element i > 0 (den, pre there), acc = 1/(d₀·…·dᵢ): 1/dᵢ = acc·pre[i − 1], then acc ·= dᵢ.
  f.line("(block $backDone (loop $back");
  f.line("(br_if $backDone (i32.eq (local.get $pre) (local.get $first)))");
  f.line("(local.set $prev (i32.sub (local.get $pre) (i32.const 32)))");
  pack(f, "den", 0, "x", P);
  loadWords(f, "prev", 0, "y");
  mul(f, "acc", "y", "t");
  redc(f, "t", P);
  store(f, "den", 0);
  mul(f, "acc", "x", "t");
  redc(f, "t", P);
  copy(f, "acc", "w");
  f.line(`(local.set $den (i32.sub (local.get $den) (i32.const ${FP_BYTES})))`);
  f.line("(local.set $pre (local.get $prev))");
  f.line("(br $back)))");
  copy(f, "w", "acc");
  store(f, "den", 0);
  // Two i32 locals (pointers) beside Fn's i64 ones.
  return f.text(name, ["den", "pre", "t"]).replace("\n", "\n  (local $first i32)\n  (local $prev i32)\n");
}

/**
 * msm.ts invertFp2ByNorms(den, pre, t): den[0..t) (Fp2, reduced, none zero,
 * t ≥ 1) ← their inverses d̄/N(d) by Montgomery's trick over the norms, with
 * pre's 72-byte slots holding words: the prefix product at +0, the norm at
 * +32. N(d) = redc(d₀² + d₁²): one reduction of the two squares' sum
 * (T < 2p² < 33p·2^256) where the portable body reduces each square and adds.
 * The one inversion (the module's fpInv) runs on limbs written over the last
 * slot, whose norm is first read into locals. Back: 1/N(dᵢ) = acc·pre[i − 1]
 * and d ← (d₀·1/N, (p − d₁)·1/N): p − d₁ ∈ (0, p], every product < p².
 */
export function fp2InvertNorms(name: string): string {
  const f = new Fn();
  const SLOT = 2 * FP_BYTES;
  f.line("(local.set $first (local.get $pre))");
  const norm = () => {
    pack(f, "den", 0, "x", P);
    pack(f, "den", FP_BYTES, "y", P);
    sqr(f, "x", "t");
    sqr(f, "y", "u");
    f.add128("t0", "c", f.get("t0"), ZERO, f.get("u0"), ZERO);
    for (let i = 1; i < 8; i++) {
      f.add128(`t${i}`, "g", f.get(`t${i}`), ZERO, f.get(`u${i}`), ZERO);
      f.add128(`t${i}`, "c", f.get(`t${i}`), f.get("g"), f.get("c"), ZERO);
    }
    f.set("t8", f.get("c"));
    redc(f, "t", P);
    copy(f, "nm", "w");
    storeWords(f, "pre", 32, "nm");
  };
  norm();
  copy(f, "acc", "nm");
  storeWords(f, "pre", 0, "acc");
  f.line("(block $fwdDone (loop $fwd");
  f.line("(br_if $fwdDone (i32.le_u (local.get $t) (i32.const 1)))");
  f.line("(local.set $t (i32.sub (local.get $t) (i32.const 1)))");
  f.line(`(local.set $den (i32.add (local.get $den) (i32.const ${SLOT})))`);
  f.line(`(local.set $pre (i32.add (local.get $pre) (i32.const ${SLOT})))`);
  norm();
  mul(f, "acc", "nm", "t");
  redc(f, "t", P);
  copy(f, "acc", "w");
  storeWords(f, "pre", 0, "acc");
  f.line("(br $fwd)))");
  // nm holds the last norm; the last slot takes the product's limbs for fpInv.
  copy(f, "w", "acc");
  store(f, "pre", 0);
  f.line("(call $assembly/fp/fpInv (local.get $pre) (local.get $pre))");
  pack(f, "pre", 0, "acc", P);
  const pw = words(P);
  // Back, at element i (den, pre there), acc = 1/(N₀·…·Nᵢ), nm = Nᵢ.
  f.line("(block $backDone (loop $back");
  pack(f, "den", 0, "x", P);
  pack(f, "den", FP_BYTES, "y", P);
  // y ← p − y (in (0, p]).
  f.sub128("y0", "h", k(pw[0]!), ZERO, f.get("y0"), ZERO);
  for (let i = 1; i < 4; i++) {
    f.sub128(`y${i}`, "g", k(pw[i]!), ZERO, f.get(`y${i}`), ZERO);
    f.add128(`y${i}`, "h", f.get(`y${i}`), f.get("g"), f.get("h"), f.get("h"));
  }
  f.line("(if (i32.eq (local.get $pre) (local.get $first)) (then");
  copy(f, "iv", "acc");
  f.line(") (else");
  f.line(`(local.set $prev (i32.sub (local.get $pre) (i32.const ${SLOT})))`);
  loadWords(f, "prev", 0, "z");
  mul(f, "acc", "z", "t");
  redc(f, "t", P);
  copy(f, "iv", "w");
  mul(f, "acc", "nm", "t");
  redc(f, "t", P);
  copy(f, "acc", "w");
  loadWords(f, "prev", 32, "nm");
  f.line("))");
  mul(f, "x", "iv", "t");
  redc(f, "t", P);
  store(f, "den", 0);
  mul(f, "y", "iv", "t");
  redc(f, "t", P);
  store(f, "den", FP_BYTES);
  f.line("(br_if $backDone (i32.eq (local.get $pre) (local.get $first)))");
  f.line(`(local.set $den (i32.sub (local.get $den) (i32.const ${SLOT})))`);
  f.line("(local.set $pre (local.get $prev))");
  f.line("(br $back)))");
  return f.text(name, ["den", "pre", "t"]).replace("\n", "\n  (local $first i32)\n  (local $prev i32)\n");
}
