// Generates assembly/fp2wide.ts: Fp2 products kept double-width (no
// Montgomery reduction) and the linear forms that combine them and reduce
// once: lazy reduction across the Fp6 Karatsuba (Aranha, Karabina, Longa,
// Gebotys, López 2011, "Faster explicit formulas for computing pairings
// over ordinary curves", §3 and Algorithm 4 for Fp6 with lazy reduction).
//
//   bun scripts/asc-fp2wide.ts          regenerate
//   bun scripts/asc-fp2wide.ts --check  exit 1 when the committed file differs
//
// fp6Mul needs 6 Fp2 products. Reduced one by one they cost 6·(3·81 + 2·81)
// limb multiplications; kept wide and combined first, 6·3·81 + 6·81: one
// Montgomery reduction per output Fp coefficient instead of two per product
// (20 % fewer i64 multiplies; the additions move to the wide side).
//
// Wide value: a signed integer of up to 18 limbs of 29 bits, stored
// normalised (limbs 0..16 in [0, 2^29), limb 17 signed) as i32 each, so a
// wide Fp2 takes 2·18·4 bytes. fp2MulWide(a, b) = (a0b0 − a1b1, a0b1 + a1b0)
// with operands < 4p whose limbs 0..7 are normalised (lazy sums), computed
// by the same column sums as fp2Mul (scripts/asc-fp2mul.ts) but carried
// instead of reduced.
//
// A form is Σ w·(wide input part) + K·p² with small integer weights, K the
// least integer that makes the value ≥ 0 for every input in its declared
// range, followed by REDC. Each input declares m, the product of its
// operands' bounds in units of p (operands < x·p and < y·p give m = x·y);
// then re ∈ (−m, m)·p² and im ∈ [0, 2m)·p². The generator checks that the
// value is below B·p² with B·p < R = 2^261, so REDC's result
// (< value/R + p) is < 2p and fpStoreReduced finishes it.

import { emit, finish } from "./asc-emit.ts";
import { P, LIMB_BITS, LIMBS } from "./asc-constants.ts";
import { column, range } from "./asc-fp2mul.ts";

const N = LIMBS;
const W = 2 * N; // wide limbs
const MONT_R = 1n << (LIMB_BITS * BigInt(N));
const MASK = (1n << LIMB_BITS) - 1n;

const digits = (x: bigint): bigint[] => {
  const out: bigint[] = [];
  for (let k = 0; k < W - 1; k++) {
    out.push(x & MASK);
    x >>= LIMB_BITS;
  }
  out.push(x); // the top limb takes the rest
  return out;
};

// --- the wide product ---------------------------------------------------------
const mul: string[] = [];
{
  const w = (s: string) => mul.push(`  ${s}`);
  for (let i = 0; i < N; i++) {
    w(`const x${i}: u64 = load<u32>(a + RE + ${i} * LIMB_BYTES) as u64, y${i}: u64 = load<u32>(a + IM + ${i} * LIMB_BYTES) as u64;`);
  }
  for (let i = 0; i < N; i++) {
    w(`const u${i}: u64 = load<u32>(b + RE + ${i} * LIMB_BYTES) as u64, v${i}: u64 = load<u32>(b + IM + ${i} * LIMB_BYTES) as u64;`);
  }
  for (let i = 0; i < N; i++) w(`const s${i}: u64 = x${i} + y${i}, t${i}: u64 = u${i} + v${i};`);
  for (let k = 0; k < W - 1; k++) {
    w(`const e${k}: u64 = ${column("x", "u", k)};`);
    w(`const f${k}: u64 = ${column("y", "v", k)};`);
    w(`let c${k}: i64 = (e${k} - f${k}) as i64;`);
    w(`let d${k}: i64 = (${column("s", "t", k)} - e${k} - f${k}) as i64;`);
  }
  w(`let c${W - 1}: i64 = 0, d${W - 1}: i64 = 0;`);
  for (const c of ["c", "d"]) for (let k = 0; k < W - 1; k++) w(`${c}${k + 1} += ${c}${k} >> LIMB_SHIFT; ${c}${k} &= LIMB_MASK;`);
  for (let k = 0; k < W; k++) w(`store<i32>(out + WIDE_RE + ${k} * LIMB_BYTES, c${k} as i32); store<i32>(out + WIDE_IM + ${k} * LIMB_BYTES, d${k} as i32);`);
}

// --- forms --------------------------------------------------------------------
type Part = "re" | "im";
type Lin = Map<string, number>;
type F2 = { re: Lin; im: Lin };
const input = (name: string): F2 => ({ re: new Map([[`${name}.re`, 1]]), im: new Map([[`${name}.im`, 1]]) });
const combine = (a: Lin, b: Lin, k: number): Lin => {
  const out = new Map(a);
  for (const [key, w] of b) out.set(key, (out.get(key) ?? 0) + k * w);
  for (const [key, w] of out) if (w === 0) out.delete(key);
  return out;
};
const add = (a: F2, b: F2): F2 => ({ re: combine(a.re, b.re, 1), im: combine(a.im, b.im, 1) });
const sub = (a: F2, b: F2): F2 => ({ re: combine(a.re, b.re, -1), im: combine(a.im, b.im, -1) });
const xi = (a: F2): F2 => ({ re: combine(combine(new Map(), a.re, 9), a.im, -1), im: combine(combine(new Map(), a.re, 1), a.im, 9) });

type Form = { name: string; doc: string; args: [string, number][]; body: (x: Record<string, F2>) => F2 };

const FORMS: Form[] = [
  // fp6Mul, operands reduced: v_i = a_i·b_i (m = 1), t_i products of lazy sums < 2p (m = 4).
  { name: "fp6MulC0", doc: "c0 = ξ(t − v1 − v2) + v0 of fp6Mul", args: [["t", 4], ["v1", 1], ["v2", 1], ["v0", 1]], body: ({ t, v1, v2, v0 }) => add(xi(sub(sub(t!, v1!), v2!)), v0!) },
  { name: "fp6MulC1", doc: "c1 = t − v0 − v1 + ξ·v2 of fp6Mul", args: [["t", 4], ["v0", 1], ["v1", 1], ["v2", 1]], body: ({ t, v0, v1, v2 }) => add(sub(sub(t!, v0!), v1!), xi(v2!)) },
  { name: "fp6MulC2", doc: "c2 = t − v0 − v2 + v1 of fp6Mul", args: [["t", 4], ["v0", 1], ["v2", 1], ["v1", 1]], body: ({ t, v0, v2, v1 }) => add(sub(sub(t!, v0!), v2!), v1!) },
  // fp6MulBy01(a, y0, y1), a reduced, y0 < 2p, y1 < p: v0 = a0y0 (2), v1 = a1y1 (1),
  // t0 = (a1 + a2)y1 (2), t1 = (a0 + a1)(y0 + y1) (2·3), t2 = (a0 + a2)y0 (2·2).
  { name: "fp6MulBy01C0", doc: "c0 = ξ(t0 − v1) + v0 of fp6MulBy01", args: [["t", 2], ["v1", 1], ["v0", 2]], body: ({ t, v1, v0 }) => add(xi(sub(t!, v1!)), v0!) },
  { name: "fp6MulBy01C1", doc: "c1 = t1 − v0 − v1 of fp6MulBy01", args: [["t", 6], ["v0", 2], ["v1", 1]], body: ({ t, v0, v1 }) => sub(sub(t!, v0!), v1!) },
  { name: "fp6MulBy01C2", doc: "c2 = t2 − v0 + v1 of fp6MulBy01", args: [["t", 4], ["v0", 2], ["v1", 1]], body: ({ t, v0, v1 }) => add(sub(t!, v0!), v1!) },
];

function emitForm(f: Form): { code: string } {
  const x = Object.fromEntries(f.args.map(([a]) => [a, input(a)]));
  const m = Object.fromEntries(f.args);
  const r = f.body(x);
  const lines: string[] = [];
  const one = (lin: Lin, part: Part, v: string) => {
    let lo = 0;
    let hi = 0;
    for (const [key, w] of lin) {
      const [arg, p] = key.split(".") as [string, Part];
      const [plo, phi] = p === "re" ? [-m[arg]!, m[arg]!] : [0, 2 * m[arg]!];
      lo += w > 0 ? w * plo : w * phi;
      hi += w > 0 ? w * phi : w * plo;
    }
    const K = Math.max(0, Math.ceil(-lo));
    if (BigInt(hi + K) * P >= MONT_R) throw new Error(`${f.name}.${part}: value may reach ${hi + K}p², REDC would not land below 2p`);
    const off = digits(BigInt(K) * P * P);
    for (let k = 0; k < W; k++) {
      const terms = [...lin.entries()].map(([key, w]) => {
        const [arg, p] = key.split(".") as [string, Part];
        const ld = `wide(${arg} + WIDE_${p.toUpperCase()}, ${k})`;
        return { neg: w < 0, text: Math.abs(w) === 1 ? ld : `${Math.abs(w)} * ${ld}` };
      });
      if (K > 0) terms.push({ neg: false, text: `${off[k]}` }); // limb k of K·p²
      terms.sort((a, b) => Number(a.neg) - Number(b.neg));
      lines.push(`  let ${v}${k}: i64 = ${terms.map((t, i) => (i === 0 ? t.text : `${t.neg ? "-" : "+"} ${t.text}`)).join(" ")};`);
    }
    return { lo, hi, K };
  };
  const re = one(r.re, "re", "c");
  const im = one(r.im, "im", "d");
  lines.push("  let m: i64;");
  for (const c of ["c", "d"]) {
    for (let i = 0; i < N; i++) {
      lines.push(`  m = (((${c}${i} as u32) * MU) & LIMB_MASK) as i64;`);
      lines.push(`  ${c}${i + 1} += ((${c}${i} + m * (P0 as i64)) >> LIMB_SHIFT) + m * (P1 as i64);`);
      for (let j = 2; j < N; j++) lines.push(`  ${c}${i + j} += m * (P${j} as i64);`);
    }
    for (let k = N; k < W - 1; k++) lines.push(`  ${c}${k + 1} += ${c}${k} >> LIMB_SHIFT; ${c}${k} &= LIMB_MASK;`);
  }
  const store = (c: string, dst: string) => `  fpStoreReduced(${dst}, ${range(N).map((i) => `${c}${N + i} as u64`).join(", ")});`;
  lines.push(store("c", "out + RE"), store("d", "out + IM"));
  const code = `/**
 * out = REDC(${f.doc}), reduced; inputs wide (fp2MulWide), out an ordinary Fp2.
 * Before REDC (the last literal of each limb sum is that limb of K·p²):
 * re + ${re.K}p² ∈ [0, ${re.hi + re.K}p²), im + ${im.K}p² ∈ [0, ${im.hi + im.K}p²).
 */
export function ${f.name}(out: usize, ${f.args.map(([a]) => `${a}: usize`).join(", ")}): void {
${lines.join("\n")}
}`;
  return { code };
}

const forms = FORMS.map(emitForm);
const text = `// generated by scripts/asc-fp2wide.ts, do not edit (run: bun scripts/asc-fp2wide.ts)
//
// Double-width Fp2 products and the reducing linear forms of the Fp6
// Karatsuba; the method and the bounds are explained in the generator.

import { FP_SIZE, LIMB_BYTES, fpStoreReduced } from "./fp";
import { P0, P1, P2, P3, P4, P5, P6, P7, P8, MU } from "./constants";

/** Byte offsets of the real and imaginary coefficients of an ordinary Fp2. */
const RE: usize = 0;
const IM: usize = FP_SIZE;
/** A wide Fp: ${W} limbs of ${LIMB_BITS} bits (the top one signed), i32 each. */
export const WIDE_LIMBS: usize = ${W};
export const FP_WIDE_SIZE: usize = WIDE_LIMBS * LIMB_BYTES;
/** A wide Fp2: re then im. */
const WIDE_RE: usize = 0;
const WIDE_IM: usize = FP_WIDE_SIZE;
export const FP2_WIDE_SIZE: usize = 2 * FP_WIDE_SIZE;
const LIMB_SHIFT: i64 = ${LIMB_BITS};
const LIMB_MASK: i64 = 0x${MASK.toString(16)};

// @ts-ignore: decorator
@inline function wide(a: usize, k: usize): i64 {
  return load<i32>(a + k * LIMB_BYTES) as i64;
}

/**
 * out = (a0b0 − a1b1, a0b1 + a1b0) unreduced, as two wide Fp (the column
 * sums of fp2Mul, carried). Operands < 4p with limbs 0..7 normalised.
 */
export function fp2MulWide(out: usize, a: usize, b: usize): void {
${mul.join("\n")}
}

${forms.map((f) => f.code).join("\n\n")}
`;

if (import.meta.main) finish([emit("assembly/fp2wide.ts", text)], "assembly/fp2wide.ts");
