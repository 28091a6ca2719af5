// Fp and Fp2 in wasm against their BigInt twin (test/assembly/support.ts):
// random values plus the edges 0, 1, p − 1, and the canonical-encoding check.
import { beforeAll, describe, expect, test } from "bun:test";
import * as S from "./support.ts";
import type { VerifierExports } from "../../src/verifier/wasm.ts";

let w: VerifierExports;
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
