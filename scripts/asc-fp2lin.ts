// Generates assembly/fp2lin.ts: fused linear forms over Fp2, each computed
// limb by limb in one pass and reduced once, instead of a chain of reduced
// additions, subtractions and multiplications by ξ (each a call with its own
// carry chain and conditional subtraction).
//
//   bun scripts/asc-fp2lin.ts          regenerate
//   bun scripts/asc-fp2lin.ts --check  exit 1 when the committed file differs
//
// A form is an Fp2-linear expression in reduced inputs (each coefficient in
// [0, p)) with small integer coefficients, ξ = 9 + i included
// (ξ·(a + b·i) = (9a − b) + (a + 9b)·i). Per output coefficient the
// generator collects the integer weight of every input coefficient, adds
// k·p with k = the sum of the negative weights' magnitudes (so the value is
// ≥ 0 whatever the inputs), and checks that the value stays below
// FORM_BOUND·p. The limb sums are signed i64 (|weight| ≤ 40, limbs < 2^29:
// far from overflow); fpStoreSmall (fp.ts) carries them, removes the
// quotient estimated from the top limb, and leaves the result in [0, p).
// This is the "lazy reduction" of Aranha et al. 2011 (§3) applied to the
// additive part of the tower arithmetic.

import { emit, finish } from "./asc-emit.ts";
import { LIMBS } from "./asc-constants.ts";

/** fpStoreSmall's precondition (fp.ts): 0 ≤ value < FORM_BOUND·p. */
const FORM_BOUND = 64;

type Part = "re" | "im";
type Lin = Map<string, number>; // "x.re" → weight
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
const scale = (a: F2, k: number): F2 => ({ re: combine(new Map(), a.re, k), im: combine(new Map(), a.im, k) });
const xi = (a: F2): F2 => ({ re: combine(combine(new Map(), a.re, 9), a.im, -1), im: combine(combine(new Map(), a.re, 1), a.im, 9) });

type Form = { name: string; doc: string; args: string[]; body: (x: Record<string, F2>) => F2 };

const FORMS: Form[] = [
  { name: "fp2MulByXi", doc: "out = ξ·a (ξ = 9 + i)", args: ["a"], body: ({ a }) => xi(a!) },
  { name: "fp2Sub2", doc: "out = t − u − v", args: ["t", "u", "v"], body: ({ t, u, v }) => sub(sub(t!, u!), v!) },
  { name: "fp2Sub2Add", doc: "out = t − u − v + w", args: ["t", "u", "v", "w"], body: ({ t, u, v, w }) => add(sub(sub(t!, u!), v!), w!) },
  { name: "fp2SubAdd", doc: "out = t − u + w", args: ["t", "u", "w"], body: ({ t, u, w }) => add(sub(t!, u!), w!) },
  { name: "fp2XiSub2Add", doc: "out = ξ·(t − u − v) + w", args: ["t", "u", "v", "w"], body: ({ t, u, v, w }) => add(xi(sub(sub(t!, u!), v!)), w!) },
  { name: "fp2XiSubAdd", doc: "out = ξ·(t − u) + w", args: ["t", "u", "w"], body: ({ t, u, w }) => add(xi(sub(t!, u!)), w!) },
  { name: "fp2Sub2AddXi", doc: "out = t − u − v + ξ·w", args: ["t", "u", "v", "w"], body: ({ t, u, v, w }) => add(sub(sub(t!, u!), v!), xi(w!)) },
  { name: "fp2SubSubXi", doc: "out = t − u − ξ·w", args: ["t", "u", "w"], body: ({ t, u, w }) => sub(sub(t!, u!), xi(w!)) },
  { name: "fp2AddXi", doc: "out = a + ξ·b", args: ["a", "b"], body: ({ a, b }) => add(a!, xi(b!)) },
  // Jacobian G2 doubling and additions (g2.ts), the doubling step of the Miller-loop lines (pairing.ts).
  { name: "fp2Triple", doc: "out = 3a", args: ["a"], body: ({ a }) => scale(a!, 3) },
  { name: "fp2Quadruple", doc: "out = 4a", args: ["a"], body: ({ a }) => scale(a!, 4) },
  { name: "fp2DoubleSub", doc: "out = 2(t − u)", args: ["t", "u"], body: ({ t, u }) => scale(sub(t!, u!), 2) },
  { name: "fp2DoubleSub2", doc: "out = 2(t − u − v)", args: ["t", "u", "v"], body: ({ t, u, v }) => scale(sub(sub(t!, u!), v!), 2) },
  { name: "fp2SubDouble", doc: "out = t − 2u", args: ["t", "u"], body: ({ t, u }) => sub(t!, scale(u!, 2)) },
  { name: "fp2SubOctuple", doc: "out = t − 8u", args: ["t", "u"], body: ({ t, u }) => sub(t!, scale(u!, 8)) },
  { name: "fp2SubTwelve", doc: "out = t − 12u", args: ["t", "u"], body: ({ t, u }) => sub(t!, scale(u!, 12)) },
  { name: "fp2SubSubDouble", doc: "out = t − u − 2v", args: ["t", "u", "v"], body: ({ t, u, v }) => sub(sub(t!, u!), scale(v!, 2)) },
  // Cyclotomic squaring with fp4 squares from two products (fp12.ts): t = (x + y)(x + ξy), u = xy.
  {
    name: "fp2CycRe",
    doc: "out = 3(t − u − ξu) − 2z = 3(x² + ξy²) − 2z",
    args: ["t", "u", "z"],
    body: ({ t, u, z }) => sub(scale(sub(sub(t!, u!), xi(u!)), 3), scale(z!, 2)),
  },
  { name: "fp2CycIm", doc: "out = 6u + 2z = 3·2xy + 2z", args: ["u", "z"], body: ({ u, z }) => add(scale(u!, 6), scale(z!, 2)) },
  { name: "fp2CycXiIm", doc: "out = 6ξu + 2z = 3ξ·2xy + 2z", args: ["u", "z"], body: ({ u, z }) => add(scale(xi(u!), 6), scale(z!, 2)) },
];

const N = LIMBS;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

function emitForm(f: Form): string {
  const x = Object.fromEntries(f.args.map((a) => [a, input(a)]));
  const r = f.body(x);
  const lines: string[] = [];
  const coeff = (lin: Lin, part: Part, name: string) => {
    const neg = [...lin.values()].filter((w) => w < 0).reduce((s, w) => s - w, 0);
    const pos = [...lin.values()].filter((w) => w > 0).reduce((s, w) => s + w, 0);
    if (pos + neg > FORM_BOUND - 1) throw new Error(`${f.name}.${part}: value may reach ${pos + neg}p`);
    for (let k = 0; k < N; k++) {
      const terms = [...lin.entries()].map(([key, w]) => {
        const [arg, p] = key.split(".") as [string, Part];
        const ld = `limb(${arg} + ${p === "re" ? "RE" : "IM"}, ${k})`;
        const mag = Math.abs(w) === 1 ? ld : `${Math.abs(w)} * ${ld}`;
        return { neg: w < 0, text: mag };
      });
      if (neg > 0) terms.push({ neg: false, text: neg === 1 ? `(P${k} as i64)` : `${neg} * (P${k} as i64)` });
      terms.sort((x, y) => Number(x.neg) - Number(y.neg)); // a positive term first
      const expr = terms.map((t, i) => (i === 0 ? t.text : `${t.neg ? "-" : "+"} ${t.text}`)).join(" ");
      lines.push(`  const ${name}${k}: i64 = ${expr};`);
    }
    return { neg, pos };
  };
  const re = coeff(r.re, "re", "r");
  const im = coeff(r.im, "im", "s");
  lines.push(
    `  fpStoreSmall(out + RE, ${range(N)
      .map((k) => `r${k}`)
      .join(", ")});`,
  );
  lines.push(
    `  fpStoreSmall(out + IM, ${range(N)
      .map((k) => `s${k}`)
      .join(", ")});`,
  );
  const bound = `value before reduction < ${re.pos + re.neg}p (re), ${im.pos + im.neg}p (im)`;
  return `/** ${f.doc}; inputs reduced, out may alias any. ${bound}. */
export function ${f.name}(out: usize, ${f.args.map((a) => `${a}: usize`).join(", ")}): void {
${lines.join("\n")}
}`;
}

const text = `// generated by scripts/asc-fp2lin.ts, do not edit (run: bun scripts/asc-fp2lin.ts)
//
// Fused Fp2 linear forms, one reduction per coefficient; the method and
// the bounds are explained in the generator.

import { FP_SIZE, LIMB_BYTES, fpStoreSmall } from "./fp";
import { P0, P1, P2, P3, P4, P5, P6, P7, P8 } from "./constants";

/** Byte offsets of the real and imaginary coefficients (fp2.ts FP2_C0, FP2_C1). */
const RE: usize = 0;
const IM: usize = FP_SIZE;

// @ts-ignore: decorator
@inline function limb(a: usize, k: usize): i64 {
  return load<u32>(a + k * LIMB_BYTES) as i64;
}

${FORMS.map(emitForm).join("\n\n")}
`;

if (import.meta.main) finish([emit("assembly/fp2lin.ts", text)], "assembly/fp2lin.ts");
