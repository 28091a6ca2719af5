// Fp and Fp2 in wasm against their BigInt twin (test/assembly/support.ts):
// random values plus the edges 0, 1, p − 1, and the canonical-encoding check.
import { beforeAll, describe, expect, test } from "bun:test";
import * as S from "./support.ts";

let w: S.TestExports;
beforeAll(async () => {
  w = await S.newWasm();
}, 60_000); // may build the wasm on first use

const EDGES = [0n, 1n, 2n, S.P - 1n, S.P - 2n, (S.P - 1n) / 2n, 1n << 253n];
const randoms = (n: number) => Array.from({ length: n }, () => S.randomBelow(S.P));
const FP_OPS: [number, string, (a: bigint, b: bigint) => bigint][] = [
  [0, "add", (a, b) => S.mod(a + b)],
  [1, "sub", (a, b) => S.mod(a - b)],
  [2, "mul", (a, b) => S.mod(a * b)],
  [3, "inv", (a) => S.invMod(a)],
  [4, "neg", (a) => S.mod(-a)],
  [5, "sqr", (a) => S.mod(a * a)],
];

function fpOp(op: number, a: bigint, b: bigint): bigint {
  const r = S.call(w, S.concat(S.toBytes32(a), S.toBytes32(b)), 32, () => w.fpOp(op));
  expect(r.status).toBe(0);
  return S.fromBytes(r.io.subarray(64, 96));
}

describe("Fp matches BigInt arithmetic mod p", () => {
  const values = [...EDGES, ...randoms(40)];
  for (const [op, name, ref] of FP_OPS) {
    test(name, () => {
      for (let i = 0; i < values.length; i++) {
        const a = values[i]!;
        const b = values[(i * 7 + 3) % values.length]!;
        expect(fpOp(op, a, b)).toBe(ref(a, b));
      }
      for (const a of EDGES) for (const b of EDGES) expect(fpOp(op, a, b)).toBe(ref(a, b));
    });
  }
  test("inverse times value is one (random)", () => {
    for (const a of randoms(10)) expect(S.mod(fpOp(3, a, 0n) * a)).toBe(1n);
  });
});

describe("canonical encoding", () => {
  test("coordinates ≥ p are rejected, p − 1 accepted", () => {
    for (const bad of [S.P, S.P + 1n, (1n << 256n) - 1n, S.P + 5n]) {
      const r = S.call(w, S.concat(S.toBytes32(bad), S.toBytes32(1n)), 32, () => w.fpOp(0));
      expect(r.status).toBe(1);
    }
    expect(fpOp(0, S.P - 1n, 1n)).toBe(0n);
  });
});

const f2ops: [number, string, (a: S.F2, b: S.F2) => S.F2][] = [
  [0, "add", S.f2.add],
  [1, "sub", S.f2.sub],
  [2, "mul", S.f2.mul],
  [3, "inv", (a) => (S.f2.isZero(a) ? [0n, 0n] : S.f2.inv(a))],
  [4, "sqr", S.f2.sqr],
  [5, "mul by ξ = 9 + u", (a) => S.f2.mul(a, S.XI)],
  [6, "conjugate", (a) => [a[0], S.mod(-a[1])]],
];

describe("Fp2 matches BigInt arithmetic in Fp[u]/(u² + 1)", () => {
  const edge: S.F2[] = [
    [0n, 0n],
    [1n, 0n],
    [0n, 1n],
    [S.P - 1n, S.P - 1n],
    [S.P - 1n, 0n],
  ];
  const values: S.F2[] = [...edge, ...Array.from({ length: 24 }, () => [S.randomBelow(S.P), S.randomBelow(S.P)] as S.F2)];
  for (const [op, name, ref] of f2ops) {
    test(name, () => {
      for (let i = 0; i < values.length; i++) {
        const a = values[i]!;
        const b = values[(i * 5 + 1) % values.length]!;
        const r = S.call(w, S.concat(S.f2Bytes(a), S.f2Bytes(b)), 64, () => w.fp2Op(op));
        expect(r.status).toBe(0);
        expect(S.f2FromBytes(r.io.subarray(128, 192))).toEqual(ref(a, b));
      }
    });
  }
});

// fp2Mul accepts the non-reduced operands that lazy additions produce (up to
// 4p, limbs 0..7 normalised to 29 bits) and still returns the canonical
// product; the bound is derived in scripts/asc-fp2mul.ts. Operands go in as
// raw Montgomery limbs (x stands for x·R⁻¹, R = 2^261), bypassing the codec
// that would reject anything ≥ p.
describe("fp2Mul lazy-reduction input bound (operands < 4p)", () => {
  const LIMBS = 9;
  const LIMB_BITS = 29n;
  const MONT_R = 1n << (LIMB_BITS * BigInt(LIMBS));
  const R_INV = S.invMod(MONT_R % S.P);
  const FP_SIZE = LIMBS * 4;
  const toLimbs = (x: bigint, out: DataView, at: number) => {
    for (let i = 0; i < LIMBS; i++) {
      const limb = i < LIMBS - 1 ? x & ((1n << LIMB_BITS) - 1n) : x; // the top limb takes the rest
      out.setUint32(at + 4 * i, Number(limb), true);
      x >>= LIMB_BITS;
    }
  };
  const fromLimbs = (v: DataView, at: number) => {
    let x = 0n;
    for (let i = LIMBS - 1; i >= 0; i--) x = (x << LIMB_BITS) | BigInt(v.getUint32(at + 4 * i, true));
    return x;
  };
  const FOUR_P = 4n * S.P;
  const extremes = [FOUR_P - 1n, FOUR_P - 2n, 3n * S.P + 12345n, 2n * S.P, S.P, S.P - 1n, 0n, 1n];
  const randomLazy = () => S.randomBelow(FOUR_P);
  const cases: [S.F2, S.F2][] = [];
  for (const x of extremes)
    for (const y of extremes)
      cases.push(
        [
          [x, y],
          [y, x],
        ],
        [
          [x, x],
          [y, y],
        ],
      );
  for (let i = 0; i < 60; i++)
    cases.push([
      [randomLazy(), randomLazy()],
      [randomLazy(), randomLazy()],
    ]);

  test(`${cases.length} products of raw operands in [0, 4p) equal the BigInt twin's, fully reduced`, () => {
    for (const [a, b] of cases) {
      const ptr = w.io(3 * 2 * FP_SIZE);
      const view = new DataView(w.memory.buffer, ptr, 3 * 2 * FP_SIZE);
      toLimbs(a[0], view, 0);
      toLimbs(a[1], view, FP_SIZE);
      toLimbs(b[0], view, 2 * FP_SIZE);
      toLimbs(b[1], view, 3 * FP_SIZE);
      w.fp2MulRaw();
      const out = new DataView(w.memory.buffer, w.io(0), 3 * 2 * FP_SIZE);
      const got: S.F2 = [fromLimbs(out, 4 * FP_SIZE), fromLimbs(out, 5 * FP_SIZE)];
      // The twin works on field elements: x stands for x·R⁻¹.
      const elem = (x: bigint) => S.mod(x * R_INV);
      const want = S.f2.mul([elem(a[0]), elem(a[1])], [elem(b[0]), elem(b[1])]);
      expect(got[0] < S.P && got[1] < S.P).toBe(true);
      expect([elem(got[0]), elem(got[1])]).toEqual(want);
    }
  });
});
