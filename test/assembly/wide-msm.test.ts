// The wide build's MSM pieces (scripts/wide/msm.ts, spliced into assembly/msm.ts):
// the chord step of the bucket trees' affine additions (g1AddChord) against a
// BigInt reference and the portable build on raw field elements, including
// the edges of its reductions; then whole MSMs (msmCustom) and whole proofs
// with the same randomness, which must be identical on both builds.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { instantiate } from "@assemblyscript/loader";
// @ts-ignore — untyped nested dependency (the copy snarkjs itself uses)
import { buildBn128 } from "ffjavascript";
import { buildPath, PROVER_TEST_WASM_PATH, PROVER_WASM_PATH } from "../../scripts/asc-build.ts";
import { createProver, writeProveInput } from "../../src/prover";
import { readIo, writeIo } from "../../src/prover/wasm";
import { fp2FromBytes, fromBytes32 } from "../../src/verifier/encoding";
import type { WitnessCalculator } from "../../src/prover/witness";
import type { WasmBuild } from "../../src/wasm-engine.ts";
import { identityCommitment } from "../../src/identity/commitment";
import { agentCircuit, randomField } from "../prover/support";

setDefaultTimeout(120_000);

const P = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
const FP = 36;
const LIMB = (1n << 29n) - 1n;
const mod = (a: bigint) => ((a % P) + P) % P;
const pow = (b: bigint, e: bigint): bigint => {
  let r = 1n;
  for (b = mod(b); e > 0n; e >>= 1n, b = (b * b) % P) if (e & 1n) r = (r * b) % P;
  return r;
};
const RINV = pow(1n << 261n, P - 2n);
/** The Montgomery product of raw elements: a·b·2^−261 mod p. */
const mont = (a: bigint, b: bigint) => (a * b * RINV) % P;
const ONE = (1n << 261n) % P; // Montgomery one: mont(x, ONE) = x

type Raw = {
  memory: WebAssembly.Memory;
  io(size: number): number;
  g1AddChordRaw(): void;
  g1InvertBatchRaw(t: number): void;
  fp2InvertNormsRaw(t: number): void;
  msmCustom(g2: number, count: number, window: number, tables: number): number;
};
const raw: Partial<Record<WasmBuild, Raw>> = {};
let curve: any;
beforeAll(async () => {
  for (const b of ["portable", "wide"] as const) {
    const module = await WebAssembly.compile(readFileSync(buildPath(PROVER_TEST_WASM_PATH, b)));
    raw[b] = (await instantiate<Raw>(module, {})).exports as unknown as Raw;
  }
  curve = await buildBn128(true);
});

function put(view: DataView, at: number, x: bigint): void {
  for (let i = 0; i < 9; i++) view.setUint32(at + 4 * i, Number((x >> BigInt(29 * i)) & LIMB), true);
}
function get(view: DataView, at: number): bigint {
  let x = 0n;
  for (let i = 8; i >= 0; i--) x = (x << 29n) + BigInt(view.getUint32(at + 4 * i, true));
  return x;
}

/** g1AddChord(P, Q, inv) on one build: [x₃, y₃] raw. */
function chord(b: WasmBuild, px: bigint, py: bigint, qx: bigint, qy: bigint, inv: bigint): [bigint, bigint] {
  const w = raw[b]!;
  const ptr = w.io(7 * FP);
  const view = new DataView(w.memory.buffer, ptr, 7 * FP);
  [px, py, qx, qy, inv].forEach((x, i) => put(view, i * FP, x));
  w.g1AddChordRaw();
  const out = new DataView(w.memory.buffer, w.io(0), 7 * FP);
  return [get(out, 5 * FP), get(out, 6 * FP)];
}
/** The chord formulas on raw Montgomery-form elements, in BigInt. */
function reference(px: bigint, py: bigint, qx: bigint, qy: bigint, inv: bigint): [bigint, bigint] {
  const l = mont(mod(qy - py), inv);
  const x3 = mod(mont(l, l) - px - qx);
  return [x3, mod(mont(l, mod(px - x3)) - py)];
}

describe("g1AddChord (the bucket trees' affine chord step)", () => {
  test("random and edge elements (0, 1, p − 1): both builds equal the BigInt reference", () => {
    const edges = [0n, 1n, 2n, P - 1n, P - 2n, ONE, (1n << 253n) + 12345n];
    const pick = (i: number) => (i % 3 === 0 ? edges[i % edges.length]! : randomField() % P);
    let n = 0;
    for (let i = 0; i < 300; i++) {
      const args = [pick(i), pick(i + 1), pick(i + 2), pick(i + 5), pick(i + 7)] as const;
      const want = reference(...args);
      expect(chord("wide", ...args)).toEqual(want);
      expect(chord("portable", ...args)).toEqual(want);
      n++;
    }
    expect(n).toBe(300);
  });
  test("results at the ends of each reduction: x₃ = 0, y₃ = 0, x₃ = p − 1, y₃ = p − 1, λ = 0, λ = p − 1", () => {
    // With inv = Montgomery one, λ = y_Q − y_P; choosing λ and x_P fixes x_Q (x₃ wanted) and y_P (y₃ wanted).
    for (const [lambda, x3, y3] of [
      [randomField() % P, 0n, 0n],
      [randomField() % P, P - 1n, P - 1n],
      [0n, 0n, 0n],
      [0n, P - 1n, 5n],
      [P - 1n, 0n, P - 1n],
      [P - 1n, P - 1n, 0n],
      [1n, 1n, 1n],
    ] as const) {
      const px = randomField() % P;
      const qx = mod(mont(lambda, lambda) - px - x3);
      const py = mod(mont(lambda, mod(px - x3)) - y3);
      const qy = mod(py + lambda);
      expect(reference(px, py, qx, qy, ONE)).toEqual([x3, y3]);
      expect(chord("wide", px, py, qx, qy, ONE)).toEqual([x3, y3]);
      expect(chord("portable", px, py, qx, qy, ONE)).toEqual([x3, y3]);
    }
  });
});

describe("g1InvertBatch (one inversion per tree level)", () => {
  test("t = 1, 2, 3, 17, 200 elements, random and edge (1, p − 1, Montgomery one): both builds give each element's Montgomery inverse", () => {
    for (const t of [1, 2, 3, 17, 200]) {
      const xs = Array.from({ length: t }, (_, i) => [1n, P - 1n, ONE, 2n][i % 7] ?? (randomField() % (P - 1n)) + 1n);
      for (const b of ["portable", "wide"] as const) {
        const w = raw[b]!;
        const size = 72 * t + 36;
        const view = new DataView(w.memory.buffer, w.io(size), size);
        xs.forEach((x, i) => put(view, 36 * i, x));
        w.g1InvertBatchRaw(t);
        const out = new DataView(w.memory.buffer, w.io(0), size);
        // The Montgomery inverse of x (raw): y with mont(x, y) = ONE.
        xs.forEach((x, i) => expect(mont(x, get(out, 36 * i))).toBe(ONE));
      }
    }
  });
});

describe("invertFp2ByNorms (G2's one inversion per level, over the norms)", () => {
  test("t = 1, 2, 3, 17, 100 elements of Fp2, random and edge coefficients (0, 1, p − 1): both builds give each element's inverse", () => {
    for (const t of [1, 2, 3, 17, 100]) {
      const edge = [
        [1n, 0n],
        [0n, 1n],
        [P - 1n, P - 1n],
        [ONE, 0n],
        [0n, P - 1n],
      ];
      const xs = Array.from({ length: t }, (_, i) => edge[i % 9] ?? [randomField() % P, randomField() % P]) as [bigint, bigint][];
      for (const b of ["portable", "wide"] as const) {
        const w = raw[b]!;
        const size = 144 * t;
        const view = new DataView(w.memory.buffer, w.io(size), size);
        xs.forEach(([x0, x1], i) => {
          put(view, 72 * i, x0);
          put(view, 72 * i + 36, x1);
        });
        w.fp2InvertNormsRaw(t);
        const out = new DataView(w.memory.buffer, w.io(0), size);
        xs.forEach(([x0, x1], i) => {
          const [y0, y1] = [get(out, 72 * i), get(out, 72 * i + 36)];
          // (x0 + x1·u)(y0 + y1·u) = Montgomery one, u² = −1.
          expect([mod(mont(x0, y0) - mont(x1, y1)), mod(mont(x0, y1) + mont(x1, y0))]).toEqual([ONE, 0n]);
        });
      }
    }
  });
});

type Term = [point: bigint, scalar: bigint]; // point = multiple of the generator
const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/** msmCustom on each build over the same bytes, and ffjavascript's sum: bytes out, and the reference's encoding. */
function msmBoth(g2: boolean, terms: Term[], window: number, tables: boolean) {
  const group = g2 ? curve.G2 : curve.G1;
  const size = g2 ? 128 : 64;
  const input = new Uint8Array(terms.length * (size + 32));
  let expected = group.zero;
  terms.forEach(([k, s], i) => {
    const p = group.toAffine(group.timesScalar(group.g, ((k % R) + R) % R));
    group.toRprLEM(input, i * size, p);
    let x = s;
    for (let b = 0; b < 32; b++, x >>= 8n) input[terms.length * size + i * 32 + b] = Number(x & 0xffn);
    expected = group.add(expected, group.timesScalar(p, s));
  });
  const out = (["portable", "wide"] as const).map((b) => {
    const w = raw[b]! as unknown as Parameters<typeof writeIo>[0];
    writeIo(w, input);
    expect(raw[b]!.msmCustom(g2 ? 1 : 0, terms.length, window, tables ? 1 : 0)).toBe(size);
    return Buffer.from(readIo(w, size)).toString("hex");
  });
  const bytes = Buffer.from(out[1]!, "hex");
  const ours = bytes.every((b) => b === 0) ? null : g2 ? [fp2FromBytes(bytes, 0), fp2FromBytes(bytes, 64)] : [fromBytes32(bytes, 0), fromBytes32(bytes, 32)];
  const reference = group.isZero(expected) ? null : group.toObject(group.toAffine(expected)).slice(0, 2);
  return { portable: out[0]!, wide: out[1]!, ours, reference };
}

describe("whole MSMs: both builds give identical results, equal to ffjavascript's", () => {
  const cases: [string, Term[]][] = [
    ["random terms", Array.from({ length: 200 }, (): Term => [randomField(), randomField()])],
    [
      "a point and its negation in one bucket (the pair vanishes)",
      [
        [5n, 77n],
        [-5n, 77n],
        [9n, 3n],
      ],
    ],
    ["copies of one point (equal x: the doubling branch)", Array.from({ length: 40 }, (): Term => [7n, 0x1234n])],
    [
      "the sum is infinity",
      [
        [5n, 1234567n],
        [-5n, 1234567n],
      ],
    ],
    [
      "zero scalars and the zero point's multiple",
      [
        [3n, 0n],
        [0n, 99n],
        [4n, 5n],
      ],
    ],
  ];
  for (const g2 of [false, true])
    for (const tables of [true, false])
      for (const [name, terms] of cases)
        test(`${g2 ? "G2" : "G1"}, ${tables ? "tables" : "no tables"}: ${name}`, () => {
          const r = msmBoth(g2, terms, 4, tables);
          expect(r.wide).toBe(r.portable);
          expect(r.ours).toEqual(r.reference);
        });
});

describe("whole proofs", () => {
  test("the agent circuit's proof with the same witness and randomness is byte-identical on both builds", async () => {
    const secret = randomField();
    const input = {
      secret,
      identity_commitment: await identityCommitment(secret),
      nonce: randomField(),
      action_hash: randomField(),
      context_hash: randomField(),
    };
    const [r, s] = [randomField() || 1n, randomField() || 1n];
    const proofs: string[] = [];
    for (const b of ["portable", "wide"] as const) {
      const module = await WebAssembly.compile(readFileSync(buildPath(PROVER_WASM_PATH, b)));
      const prover = (await createProver(agentCircuit, { module })) as unknown as {
        wasm: Parameters<typeof writeProveInput>[0] & { prove(): number };
        witness: WitnessCalculator;
      };
      writeProveInput(prover.wasm, await prover.witness.calculate(input as any), r, s);
      expect(prover.wasm.prove()).toBe(0);
      proofs.push(Buffer.from(readIo(prover.wasm, 256)).toString("hex"));
    }
    expect(proofs[1]).toBe(proofs[0]!);
    expect(proofs[0]).not.toBe("0".repeat(512));
  });
});
