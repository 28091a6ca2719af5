// The wide build's field products: fpMul, frMul, fpSqr, frSqr, fp2Mul, fp2Sqr
// (method and bounds in ./core.ts).

import { P } from "../asc-constants.ts";
import { Fn, ZERO, addWords, k, mul, mulAdd, pack, redcStore, sqr, words } from "./core.ts";

/** out = a·b·2^−261 mod q (fpMul, frMul). */
export function fieldMul(name: string, q: bigint): string {
  const f = new Fn();
  pack(f, "a", 0, "x", q);
  pack(f, "b", 0, "y", q);
  mul(f, "x", "y", "t");
  redcStore(f, "t", q, "out", 0);
  return f.text(name, ["out", "a", "b"]);
}

/** out = a·b in Fp2 = Fp[u]/(u² + 1): schoolbook, one reduction per coefficient (fp2Mul). */
export function fp2Mul(name: string): string {
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

/** out = a²·2^−261 mod q (fpSqr, frSqr): 10 word products instead of 16. */
export function fieldSqr(name: string, q: bigint): string {
  const f = new Fn();
  pack(f, "a", 0, "x", q);
  sqr(f, "x", "t");
  redcStore(f, "t", q, "out", 0);
  return f.text(name, ["out", "a"]);
}

/**
 * out = a² in Fp2 (fp2Sqr), coefficients < 2p: c0 = (a0 + a1)(a0 + 2p − a1),
 * both factors < 4p < 2^256, product < 16p²; c1 = 2·a0·a1 < 8p². Two
 * products of 4 × 4 words and one reduction per coefficient, with the
 * operands packed once (the portable build calls fpMul twice and three
 * additions).
 */
export function fp2Sqr(name: string): string {
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
