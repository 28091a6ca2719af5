// The Fp6 product of both builds against an independent BigInt reference,
// and the wide tower kernel of scripts/wide/tower.ts (not registered in the
// wide build: it measured slower on Bun, see the generator) assembled on its
// own with binaryen, on random and edge coefficients up to the lazy bound it
// claims (8p), so that its bounds stay proven if an engine makes it worth
// registering.
import { beforeAll, describe, expect, test } from "bun:test";
import binaryen from "binaryen";
import { fp6Mul as fp6MulKernel } from "../../scripts/wide/tower.ts";
import * as S from "./support.ts";
import { fromLimbs, limbs } from "./support.ts";

const P = S.P;
const FP_SIZE = 36;
const RINV = S.invMod((1n << 261n) % P);

const random = (bound: bigint): bigint => {
  const x = BigInt(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(40))).toString("hex")}`);
  return x % bound;
};

type F6 = [S.F2, S.F2, S.F2];
/** The Fp6 product (v³ = ξ) of raw coefficients, then ·2^−261 per coefficient: what a Montgomery-form product returns raw. */
function fp6MulRef(a: F6, b: F6): bigint[] {
  const m = S.f2.mul;
  const xi = (x: S.F2) => m(x, S.XI);
  const c0 = S.f2.add(m(a[0], b[0]), xi(S.f2.add(m(a[1], b[2]), m(a[2], b[1]))));
  const c1 = S.f2.add(S.f2.add(m(a[0], b[1]), m(a[1], b[0])), xi(m(a[2], b[2])));
  const c2 = S.f2.add(S.f2.add(m(a[0], b[2]), m(a[1], b[1])), m(a[2], b[0]));
  return [c0, c1, c2].flat().map((x) => S.mod(x * RINV));
}
const toF6 = (x: bigint[]): F6 => [
  [x[0]!, x[1]!],
  [x[2]!, x[3]!],
  [x[4]!, x[5]!],
];

type Raw = S.TestExports & { fp6MulRaw(): void };
let portable: Raw;
let wide: Raw;
/** The kernel alone: a module of one memory and the generated function, (out, a, b) → void. */
let kernel: { memory: WebAssembly.Memory; fp6Mul(out: number, a: number, b: number): void };
beforeAll(async () => {
  portable = (await S.newWasm("portable")) as Raw;
  wide = (await S.newWasm("wide")) as Raw;
  const m = binaryen.parseText(`(module (memory (export "memory") 1)\n${fp6MulKernel("$fp6Mul")} (export "fp6Mul" (func $fp6Mul)))`);
  try {
    m.setFeatures(binaryen.Features.MVP | binaryen.Features.Multivalue | binaryen.Features.WideArithmetic);
    if (!m.validate()) throw new Error("the kernel does not validate");
    binaryen.setOptimizeLevel(3);
    m.optimize();
    kernel = (await WebAssembly.instantiate(m.emitBinary())).instance.exports as unknown as typeof kernel;
  } finally {
    m.dispose();
  }
}, 120_000);

/** a·b raw through the test build's fp6MulRaw (a ‖ b ‖ out in the I/O buffer). */
function fp6MulRaw(w: Raw, a: bigint[], b: bigint[]): bigint[] {
  const ptr = w.io(18 * FP_SIZE);
  const view = new Uint8Array(w.memory.buffer, ptr, 18 * FP_SIZE);
  [...a, ...b].forEach((x, i) => view.set(limbs(x), i * FP_SIZE));
  w.fp6MulRaw();
  const out = new Uint8Array(w.memory.buffer, w.io(0) + 12 * FP_SIZE, 6 * FP_SIZE).slice();
  return Array.from({ length: 6 }, (_, i) => fromLimbs(out.subarray(i * FP_SIZE, (i + 1) * FP_SIZE)));
}
/** a·b raw through the standalone kernel (a at 0, b at 216, out at `out`: 432, or 0 / 216 to alias an operand). */
function fp6MulKernelRaw(a: bigint[], b: bigint[], out = 12 * FP_SIZE): bigint[] {
  const view = new Uint8Array(kernel.memory.buffer);
  [...a, ...b].forEach((x, i) => view.set(limbs(x), i * FP_SIZE));
  kernel.fp6Mul(out, 0, 6 * FP_SIZE);
  return Array.from({ length: 6 }, (_, i) => fromLimbs(view.subarray(out + i * FP_SIZE, out + (i + 1) * FP_SIZE)));
}

// Edges of the wide kernel's operand range: 0, 1, p − 1, p, the steps of its reductions (2p, 4p),
// values near 2^256 (pack's reduction by 4p) and 8p − 1 (its bound), and the extremes of the lazy
// sums (every coefficient p − 1 makes every product near p², the bound the proof uses).
const EDGES = [0n, 1n, P - 1n, P, 2n * P - 1n, 2n * P, 4n * P - 1n, 4n * P, (1n << 256n) - 1n, 1n << 256n, 8n * P - 1n];

/** Cases: every coefficient an edge (against p − 1, itself, 8p − 1), then random coefficients below p, 2p, 2^256 and 8p with edges mixed in. */
function cases(bounds: bigint[], edges: bigint[]): [bigint[], bigint[]][] {
  const out: [bigint[], bigint[]][] = [];
  for (const e of edges) for (const f of [P - 1n, e, edges.at(-1)!]) out.push([Array(6).fill(e), Array(6).fill(f)]);
  // ξ's real part 9X − Y negative, down to ≈ −2p² (a's real parts 0, b's imaginary parts p − 1: X small,
  // Y ≈ 2p²): the case the kernel's p·2^256 offset exists for. Without it the reduction still comes out
  // right when its multiple of p happens to exceed −(9X − Y) (about 60 % of values), hence many of them.
  const near = () => P - 1n - random(1n << 200n);
  for (let i = 0; i < 24; i++) out.push([[0n, near(), 0n, near(), 0n, near()], Array.from({ length: 6 }, near)]);
  for (let i = 0; i < 48; i++) {
    const bound = bounds[i % bounds.length]!;
    const pick = () => (i % 5 === 0 ? edges[Number(random(BigInt(edges.length)))]! : random(bound));
    out.push([Array.from({ length: 6 }, pick), Array.from({ length: 6 }, pick)]);
  }
  return out;
}

describe("Fp6 products", () => {
  test("fp6Mul of both builds on raw limbs equals the BigInt reference, fully reduced, for coefficients below 2p (the lazy sums fp12.ts passes it): edges and random", () => {
    const edges = EDGES.filter((e) => e < 2n * P);
    for (const [a, b] of cases([P, 2n * P], edges)) {
      const expected = fp6MulRef(toF6(a), toF6(b));
      expect(fp6MulRaw(portable, a, b)).toEqual(expected);
      expect(fp6MulRaw(wide, a, b)).toEqual(expected);
    }
  });
  test("the wide kernel (scripts/wide/tower.ts) equals the reference up to its bound 8p (edges: 0, 1, p − 1, p, 2p, 4p, near 2^256, 8p − 1; every coefficient p − 1 makes every product reach the bound the proof uses), and out may alias a or b", () => {
    for (const [a, b] of cases([P, 2n * P, 1n << 256n, 8n * P], EDGES)) expect(fp6MulKernelRaw(a, b)).toEqual(fp6MulRef(toF6(a), toF6(b)));
    const a = Array.from({ length: 6 }, () => random(8n * P));
    const b = Array.from({ length: 6 }, () => random(8n * P));
    const expected = fp6MulRef(toF6(a), toF6(b));
    expect(fp6MulKernelRaw(a, b, 0)).toEqual(expected);
    expect(fp6MulKernelRaw(a, b, 6 * FP_SIZE)).toEqual(expected);
  });
});
