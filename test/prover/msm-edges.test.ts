// The MSM's special cases, which random keys and witnesses almost never
// reach, built on purpose through the test build's msmCustom and checked
// against ffjavascript (the curve snarkjs uses): a point and its negation in
// one bucket (the pair vanishes), many copies of one point (doublings in the
// bucket trees), and in G2's batched reduction a segment's running sum that
// cancels (R_j = 0) and one whose weighted sum cancels (U_j = 0) — each in
// G1 and G2, with and without window tables, at windows that use the plain
// and the batched reduction.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
// @ts-ignore — untyped nested dependency (the copy snarkjs itself uses)
import { buildBn128 } from "ffjavascript";
import { instantiateProver, type ProverTestExports, readIo, writeIo } from "../../src/prover/wasm";
import { fp2FromBytes, fromBytes32 } from "../../src/verifier/encoding";
import { R, ROOT, randomField } from "./support";
import { buildPath, PROVER_TEST_WASM_PATH } from "../../scripts/asc-build";
import { WASM_BUILD } from "../../src/wasm-engine";

setDefaultTimeout(120_000);

let wasm: ProverTestExports;
let curve: any;
beforeAll(async () => {
  wasm = (await instantiateProver(await WebAssembly.compile(readFileSync(buildPath(PROVER_TEST_WASM_PATH, WASM_BUILD))))) as ProverTestExports;
  curve = await buildBn128(true);
});

type Term = [point: bigint, scalar: bigint]; // point = multiple of the generator
const mod = (a: bigint) => ((a % R) + R) % R;

/** Σ sᵢ·(kᵢ·G) by our MSM (points given as generator multiples kᵢ) and by ffjavascript; both as [x, y] (G2: Fp2 pairs), null for infinity. */
function both(g2: boolean, terms: Term[], window: number, tables: boolean) {
  const group = g2 ? curve.G2 : curve.G1;
  const size = g2 ? 128 : 64;
  const input = new Uint8Array(terms.length * (size + 32));
  let expected = group.zero;
  terms.forEach(([k, s], i) => {
    const p = group.toAffine(group.timesScalar(group.g, mod(k)));
    group.toRprLEM(input, i * size, p);
    let x = s;
    for (let b = 0; b < 32; b++, x >>= 8n) input[terms.length * size + i * 32 + b] = Number(x & 0xffn);
    expected = group.add(expected, group.timesScalar(p, s));
  });
  writeIo(wasm, input);
  const n = wasm.msmCustom(g2 ? 1 : 0, terms.length, window, tables ? 1 : 0);
  expect(n).toBe(size);
  const out = readIo(wasm, n);
  const ours = out.every((b) => b === 0) ? null : g2 ? [fp2FromBytes(out, 0), fp2FromBytes(out, 64)] : [fromBytes32(out, 0), fromBytes32(out, 32)];
  const reference = group.isZero(expected) ? null : group.toObject(group.toAffine(expected)).slice(0, 2);
  return { ours, reference };
}

const cases: [string, Term[]][] = [
  [
    "a point and its negation, same scalar (one bucket, the pair vanishes)",
    [
      [5n, 77n],
      [-5n, 77n],
      [9n, 3n],
    ],
  ],
  [
    "a point and its negation only: the sum is infinity",
    [
      [5n, 1234567n],
      [-5n, 1234567n],
    ],
  ],
  ["64 copies of one point with one scalar (doublings up the tree)", Array.from({ length: 64 }, (): Term => [7n, 0x1234n])],
  [
    "copies and negations mixed with random terms",
    [...Array.from({ length: 20 }, (): Term => [3n, 99n]), [-3n, 99n], [11n, randomField()], [-11n, randomField()]],
  ],
  // Window 0 of a base is the base itself: scalar d puts it in bucket d − 1. Buckets 19 and 18 share the
  // 16-bucket segment 1: R = X, then R + (−X) = 0 (the segment's running sum cancels).
  [
    "G2 segment: the running sum cancels",
    [
      [13n, 20n],
      [-13n, 19n],
    ],
  ],
  // Buckets 19 and 17: R = X, U = X; U + R = 2X (doubling); R + (−3X) = −2X; U + R = 0 (the weighted sum cancels).
  [
    "G2 segment: the weighted sum cancels",
    [
      [13n, 20n],
      [-39n, 18n],
    ],
  ],
  ["random terms", Array.from({ length: 40 }, (): Term => [randomField(), randomField()])],
];

describe.each([
  ["G1", false],
  ["G2", true],
])("%s", (_name, g2) => {
  for (const [name, terms] of cases) {
    test(`${name}: equal to ffjavascript at windows 4, 12 (batched reduction in G2) and 13, with and without tables`, () => {
      for (const window of [4, 12, 13]) {
        for (const tables of [true, false]) {
          const { ours, reference } = both(g2, terms, window, tables);
          expect({ window, tables, sum: ours }).toEqual({ window, tables, sum: reference });
        }
      }
    });
  }
});
