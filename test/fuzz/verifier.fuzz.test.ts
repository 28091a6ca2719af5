// Fuzzing the service's verifier through its contract only:
//   verify(proofString, publicSignals) → { ok: true } | { ok: false, reason }
// (src/verifier/types.ts, src/modules/proofs/service.ts `Verifier`), so the
// suite holds for the interim snarkjs verifier and the WebAssembly one alike.
// Every mutated proof must be rejected with a reason from the closed set and
// must not throw; the untouched proofs must be accepted (so a verifier that
// rejects everything fails here too).
import { beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { prove } from "../../src/agent";
import { publicSignals } from "../../src/identity/encoding";
import type { Verifier } from "../../src/verifier/types";
import { serviceVerifier } from "../../src/verifier/service";
import { identity, sampleProof } from "../support/proofs";
import { announce, fuzzParams, FUZZ_RUNS } from "./support";

const P = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const VERIFY_FAILURES = new Set(["invalid_proof_format", "invalid_curve_point", "invalid_public_input", "proof_rejected"]);

type Json = { pi_a: string[]; pi_b: string[][]; pi_c: string[]; protocol?: string; curve?: string };
interface Real {
  text: string;
  json: Json;
  signals: string[];
}

let verifier: Verifier;
let real: Real[] = [];
const tally: Record<string, number> = {};

/** Calls verify, failing the test if it throws, and returns the verdict. */
async function verdict(proof: string, signals: readonly string[]) {
  let result: Awaited<ReturnType<Verifier["verify"]>>;
  try {
    result = await verifier.verify(proof, signals);
  } catch (error) {
    throw new Error(`verify threw instead of returning a reason: ${String(error)}`);
  }
  return result;
}

async function expectRejected(label: string, proof: string, signals: readonly string[], reasons?: string[]) {
  tally[label] = (tally[label] ?? 0) + 1;
  const result = await verdict(proof, signals);
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(VERIFY_FAILURES.has(result.reason)).toBe(true);
  if (reasons) expect(reasons).toContain(result.reason);
}

const be32 = (n: bigint) => Buffer.from(n.toString(16).padStart(64, "0"), "hex");
/** docs/protocol.md compact form: A.x‖A.y‖B.x.c1‖B.x.c0‖B.y.c1‖B.y.c0‖C.x‖C.y, 32-byte big-endian each, base64url. */
function compact(p: Json): string {
  const n = (s: string) => BigInt(s);
  return Buffer.concat([
    be32(n(p.pi_a[0]!)),
    be32(n(p.pi_a[1]!)),
    be32(n(p.pi_b[0]![1]!)),
    be32(n(p.pi_b[0]![0]!)),
    be32(n(p.pi_b[1]![1]!)),
    be32(n(p.pi_b[1]![0]!)),
    be32(n(p.pi_c[0]!)),
    be32(n(p.pi_c[1]!)),
  ]).toString("base64url");
}
const clone = (p: Json): Json => JSON.parse(JSON.stringify(p));

/** The eight affine coordinates of a proof as paths into its JSON. */
const COORDS: [keyof Json, number, number?][] = [
  ["pi_a", 0],
  ["pi_a", 1],
  ["pi_b", 0, 0],
  ["pi_b", 0, 1],
  ["pi_b", 1, 0],
  ["pi_b", 1, 1],
  ["pi_c", 0],
  ["pi_c", 1],
];
function getCoord(p: Json, [k, i, j]: (typeof COORDS)[number]): string {
  return j === undefined ? (p[k] as string[])[i]! : (p[k] as string[][])[i]![j]!;
}
function setCoord(p: Json, [k, i, j]: (typeof COORDS)[number], v: string) {
  if (j === undefined) (p[k] as string[])[i] = v;
  else (p[k] as string[][])[i]![j] = v;
}

beforeAll(async () => {
  announce("verifier.fuzz");
  verifier = await serviceVerifier();
  const sample = await sampleProof();
  const other = await identity("verifier-fuzz-2");
  const statement = { nonce: "ab".repeat(31), action: "refund", context: { amount: 5 } };
  const otherProof = await prove({ secret: other.secret, ...statement });
  real = [
    { text: sample.proof, json: JSON.parse(sample.proof), signals: sample.publicSignals },
    { text: otherProof, json: JSON.parse(otherProof), signals: publicSignals({ identityCommitment: BigInt(other.identity_commitment), ...statement }) },
  ];
});

describe("the untouched proofs", () => {
  test("are accepted in JSON form (so every rejection below is the verifier's judgement)", async () => {
    for (const r of real) expect(await verdict(r.text, r.signals)).toEqual({ ok: true });
  });

  test("are accepted in the compact base64url form of docs/protocol.md", async () => {
    for (const r of real) expect(await verdict(compact(r.json), r.signals)).toEqual({ ok: true });
  });

  test("are rejected against each other's statement (proof_rejected)", async () => {
    await expectRejected("swapped statement", real[0]!.text, real[1]!.signals, ["proof_rejected"]);
    await expectRejected("swapped statement", real[1]!.text, real[0]!.signals, ["proof_rejected"]);
  });
});

describe("random input", () => {
  test("random bytes, base64url (compact-looking) and raw text: rejected with a reason, no throw", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ minLength: 256, maxLength: 256 }).map((b) => Buffer.from(b).toString("base64url")),
          fc.uint8Array({ maxLength: 400 }).map((b) => Buffer.from(b).toString("base64url")),
          fc.uint8Array({ maxLength: 400 }).map((b) => new TextDecoder().decode(b)),
          fc.string({ unit: "binary", maxLength: 300 }),
          fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
        ),
        fc.integer({ min: 0, max: 1 }),
        async (proof, which) => expectRejected("random bytes/text", proof, real[which]!.signals),
      ),
      fuzzParams(),
    );
  });

  test("random field elements as coordinates (JSON and compact): not on the curve → invalid_curve_point", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.bigInt({ min: 0n, max: P - 1n }), { minLength: 8, maxLength: 8 }), fc.boolean(), async (n, asCompact) => {
        const p: Json = {
          pi_a: [String(n[0]), String(n[1]), "1"],
          pi_b: [
            [String(n[2]), String(n[3])],
            [String(n[4]), String(n[5])],
            ["1", "0"],
          ],
          pi_c: [String(n[6]), String(n[7]), "1"],
          protocol: "groth16",
          curve: "bn128",
        };
        await expectRejected("random field elements", asCompact ? compact(p) : JSON.stringify(p), real[0]!.signals, ["invalid_curve_point"]);
      }),
      fuzzParams(),
    );
  });
});

describe("a valid proof, damaged", () => {
  test("one coordinate moved off the curve (±k): invalid_curve_point", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...COORDS),
        fc.bigInt({ min: 1n, max: 1000n }),
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 0, max: 1 }),
        async (coord, k, up, asCompact, which) => {
          const p = clone(real[which]!.json);
          const v = BigInt(getCoord(p, coord));
          setCoord(p, coord, String((((up ? v + k : v - k) % P) + P) % P));
          await expectRejected("moved off curve", asCompact ? compact(p) : JSON.stringify(p), real[which]!.signals, ["invalid_curve_point"]);
        },
      ),
      fuzzParams(),
    );
  });

  test("a coordinate replaced by x + p (same point mod p, not canonical): invalid_proof_format", async () => {
    for (const coord of COORDS) {
      const p = clone(real[0]!.json);
      setCoord(p, coord, String(BigInt(getCoord(p, coord)) + P));
      await expectRejected("coordinate + p", JSON.stringify(p), real[0]!.signals, ["invalid_proof_format"]);
      // In compact form x + p does not fit 32 bytes only when ≥ 2^256; 2p < 2^256, so it does fit: still not canonical.
      const bytes = Buffer.from(compact(clone(real[0]!.json)), "base64url");
      const index = COORDS.indexOf(coord);
      const slot = [0, 1, 3, 2, 5, 4, 6, 7][index]!; // compact puts c1 before c0
      be32(BigInt(getCoord(real[0]!.json, coord)) + P).copy(bytes, slot * 32);
      await expectRejected("coordinate + p (compact)", bytes.toString("base64url"), real[0]!.signals, ["invalid_proof_format"]);
    }
  });

  test("points at infinity: rejected (invalid_curve_point; the projective z = 0 shape may read as a format error)", async () => {
    const cases: [string, (p: Json) => void, string[]][] = [
      ["A = (0,0)", (p) => (p.pi_a = ["0", "0", "1"]), ["invalid_curve_point"]],
      ["C = (0,0)", (p) => (p.pi_c = ["0", "0", "1"]), ["invalid_curve_point"]],
      [
        "B = (0,0)",
        (p) =>
          (p.pi_b = [
            ["0", "0"],
            ["0", "0"],
            ["1", "0"],
          ]),
        ["invalid_curve_point"],
      ],
      ["A projective infinity", (p) => (p.pi_a = ["0", "1", "0"]), ["invalid_curve_point", "invalid_proof_format"]],
      ["C projective infinity", (p) => (p.pi_c = ["0", "1", "0"]), ["invalid_curve_point", "invalid_proof_format"]],
      [
        "B projective infinity",
        (p) =>
          (p.pi_b = [
            ["0", "0"],
            ["1", "0"],
            ["0", "0"],
          ]),
        ["invalid_curve_point", "invalid_proof_format"],
      ],
    ];
    for (const [label, damage, reasons] of cases) {
      const p = clone(real[0]!.json);
      damage(p);
      await expectRejected(`infinity: ${label}`, JSON.stringify(p), real[0]!.signals, reasons);
      if (reasons.length === 1) await expectRejected(`infinity: ${label} (compact)`, compact(p), real[0]!.signals, reasons);
    }
  });

  test("single decimal digit changed in any coordinate: rejected", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...COORDS),
        fc.nat(),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 1 }),
        async (coord, at, delta, which) => {
          const p = clone(real[which]!.json);
          const s = getCoord(p, coord);
          const i = at % s.length;
          let next = s.slice(0, i) + String((Number(s[i]) + delta) % 10) + s.slice(i + 1);
          if (next.length > 1 && next.startsWith("0")) next = next.slice(1); // keep it canonical so the curve check is what rejects
          setCoord(p, coord, next);
          await expectRejected("digit flipped", JSON.stringify(p), real[which]!.signals);
        },
      ),
      fuzzParams(),
    );
  });

  test("single bit flipped in the compact form: rejected", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 256 * 8 - 1 }), fc.integer({ min: 0, max: 1 }), async (bit, which) => {
        const bytes = Buffer.from(compact(real[which]!.json), "base64url");
        bytes[bit >> 3]! ^= 1 << (bit & 7);
        await expectRejected("bit flipped (compact)", bytes.toString("base64url"), real[which]!.signals);
      }),
      fuzzParams(),
    );
  });

  test("points swapped or G2 halves in the wrong order: rejected", async () => {
    const base = real[0]!.json;
    const variants: Json[] = [
      { ...clone(base), pi_a: base.pi_c, pi_c: base.pi_a },
      {
        ...clone(base),
        pi_b: [
          [base.pi_b[0]![1]!, base.pi_b[0]![0]!],
          [base.pi_b[1]![1]!, base.pi_b[1]![0]!],
          ["1", "0"],
        ],
      },
      { ...clone(base), pi_a: [base.pi_a[0]!, String(P - BigInt(base.pi_a[1]!)), "1"] }, // −A: on the curve, wrong proof
      { ...clone(base), pi_a: real[1]!.json.pi_a }, // A from another valid proof
    ];
    for (const v of variants) await expectRejected("points swapped/negated", JSON.stringify(v), real[0]!.signals);
    await expectRejected("points swapped/negated", JSON.stringify(variants[2]), real[0]!.signals, ["proof_rejected"]);
  });

  test("shape damage: rejected as invalid_proof_format", async () => {
    const base = real[0]!.json;
    const shapes: unknown[] = [
      { ...base, protocol: "plonk" },
      { ...base, curve: "bls12381" },
      { ...base, pi_a: base.pi_a.slice(0, 2) },
      { ...base, pi_a: [...base.pi_a, "1"] },
      { ...base, pi_a: base.pi_a.map(Number) },
      { ...base, pi_a: [`0${base.pi_a[0]}`, base.pi_a[1], "1"] },
      { ...base, pi_a: [` ${base.pi_a[0]}`, base.pi_a[1], "1"] },
      { ...base, pi_a: [`0x${BigInt(base.pi_a[0]!).toString(16)}`, base.pi_a[1], "1"] },
      { ...base, pi_a: [`-${base.pi_a[0]}`, base.pi_a[1], "1"] },
      { ...base, pi_b: base.pi_b.slice(0, 2) },
      { ...base, pi_b: [base.pi_b[0], base.pi_b[1], ["1", "1"]] },
      { ...base, pi_c: null },
      { pi_a: base.pi_a, pi_b: base.pi_b },
      [base.pi_a, base.pi_b, base.pi_c],
      null,
      "proof",
      { ...base, pi_a: { 0: base.pi_a[0], 1: base.pi_a[1], 2: "1", length: 3 } },
    ];
    for (const s of shapes) await expectRejected("shape damage", JSON.stringify(s), real[0]!.signals, ["invalid_proof_format"]);
    const c = Buffer.from(compact(base), "base64url");
    for (const bad of [c.subarray(0, 255), Buffer.concat([c, Buffer.from([0])]), Buffer.alloc(0)])
      await expectRejected("compact wrong length", bad.toString("base64url"), real[0]!.signals, ["invalid_proof_format"]);
    await expectRejected("compact with padding/std alphabet", `${c.toString("base64")}==`, real[0]!.signals, ["invalid_proof_format"]);
    await expectRejected("huge input", "9".repeat(1 << 20), real[0]!.signals);
  });
});

describe("public signals", () => {
  test("wrong count (0–3, 5–8) with a valid proof: invalid_public_input", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 8 }).filter((n) => n !== 4),
        fc.integer({ min: 0, max: 1 }),
        async (n, which) => {
          const signals = Array.from({ length: n }, (_, i) => real[which]!.signals[i % 4]!);
          await expectRejected("wrong signal count", real[which]!.text, signals, ["invalid_public_input"]);
        },
      ),
      fuzzParams(Math.min(FUZZ_RUNS, 60)),
    );
  });

  test("a signal ≥ r (s + k·r), or not a canonical decimal: invalid_public_input", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3 }),
        fc.oneof(
          fc.bigInt({ min: 1n, max: 5n }).map((k) => (s: string) => String(BigInt(s) + k * R)),
          fc.constantFrom(
            (s: string) => `0${s}`,
            (s: string) => `-${s}`,
            (s: string) => `${s}.0`,
            (s: string) => ` ${s}`,
            (s: string) => `0x${BigInt(s).toString(16)}`,
            () => "",
            () => String(R),
            () => "1e3",
          ),
        ),
        async (index, damage) => {
          const signals = [...real[0]!.signals];
          signals[index] = damage(signals[index]!);
          await expectRejected("signal out of range", real[0]!.text, signals, ["invalid_public_input"]);
        },
      ),
      fuzzParams(Math.min(FUZZ_RUNS, 100)),
    );
  });

  test("any single signal changed within range: proof_rejected", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3 }), fc.bigInt({ min: 1n, max: R - 1n }), async (index, delta) => {
        const signals = [...real[0]!.signals];
        signals[index] = String((BigInt(signals[index]!) + delta) % R);
        await expectRejected("signal changed", real[0]!.text, signals, ["proof_rejected"]);
      }),
      fuzzParams(Math.min(FUZZ_RUNS, 40)),
    );
  });

  test("figures", () => {
    console.log(`[verifier.fuzz] cases per class: ${JSON.stringify(tally)}`);
    expect(Object.keys(tally).length).toBeGreaterThan(10);
  });
});
