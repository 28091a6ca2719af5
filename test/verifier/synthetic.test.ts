// A verification key with 20 public inputs (more than the fixed-base MSM
// tables cover, so vk_x goes through the Straus path) built with known
// discrete logs, and proofs made from that trapdoor:
//   α = a·G1, β = b·G2, γ = g·G2, δ = d·G2, ICⱼ = kⱼ·G1, A = x·G1, B = y·G2,
//   C = c·G1 with c = (x·y − a·b − g·Σ sⱼkⱼ)/d mod r,
// so e(A, B) = e(α, β)·e(vk_x, γ)·e(C, δ). snarkjs must agree on every case.
import { beforeAll, describe, expect, test } from "bun:test";
import { Groth16Verifier } from "../../src/verifier/index.ts";
import * as S from "../assembly/support.ts";
import { reference } from "./pool.ts";

const N_PUBLIC = 20;
const rand = () => S.randomBelow(S.R - 1n) + 1n;
const g1Json = (p: S.G1) => [p!.x.toString(), p!.y.toString(), "1"];
const g2Json = (q: S.G2) => [
  [q!.x[0].toString(), q!.x[1].toString()],
  [q!.y[0].toString(), q!.y[1].toString()],
  ["1", "0"],
];

let vk: any;
let trapdoor: { a: bigint; b: bigint; g: bigint; d: bigint; k: bigint[] };
let B: S.G2;
let y: bigint;
function prove(signals: bigint[]) {
  const x = rand();
  const { a, b, g, d, k } = trapdoor;
  const vkx = k.reduce((acc, kj, j) => acc + kj * (j === 0 ? 1n : signals[j - 1]!), 0n);
  const c = S.mod((x * y - a * b - g * vkx) * S.invMod(d, S.R), S.R);
  return { pi_a: g1Json(S.g1Mul(S.G1_GEN, x)), pi_b: g2Json(B), pi_c: g1Json(S.g1Mul(S.G1_GEN, c)), protocol: "groth16", curve: "bn128" };
}

beforeAll(() => {
  trapdoor = { a: rand(), b: rand(), g: rand(), d: rand(), k: Array.from({ length: N_PUBLIC + 1 }, rand) };
  y = rand();
  B = S.g2Mul(S.G2_GEN, y);
  vk = {
    protocol: "groth16",
    curve: "bn128",
    nPublic: N_PUBLIC,
    vk_alpha_1: g1Json(S.g1Mul(S.G1_GEN, trapdoor.a)),
    vk_beta_2: g2Json(S.g2Mul(S.G2_GEN, trapdoor.b)),
    vk_gamma_2: g2Json(S.g2Mul(S.G2_GEN, trapdoor.g)),
    vk_delta_2: g2Json(S.g2Mul(S.G2_GEN, trapdoor.d)),
    IC: trapdoor.k.map((kj) => g1Json(S.g1Mul(S.G1_GEN, kj))),
  };
}, 60_000);

describe(`synthetic key with ${N_PUBLIC} public inputs`, () => {
  test("trapdoor proofs verify, altered ones do not, in agreement with snarkjs", async () => {
    const verifier = await Groth16Verifier.fromVerificationKey(vk);
    for (let t = 0; t < 3; t++) {
      const signals = Array.from({ length: N_PUBLIC }, (_, j) => (j === 0 ? 0n : j === 1 ? S.R - 1n : S.randomBelow(S.R)));
      const strs = signals.map(String);
      const proof = prove(signals);
      expect(verifier.verify(proof, strs)).toEqual({ ok: true });
      expect(await reference(vk, strs, proof)).toBe(true);
      const changed = [...strs];
      changed[N_PUBLIC - 1] = String((signals[N_PUBLIC - 1]! + 1n) % S.R);
      expect(verifier.verify(proof, changed)).toEqual({ ok: false, reason: "proof_rejected" });
      expect(await reference(vk, changed, proof)).toBe(false);
      expect(
        verifier
          .verifyBatch([
            { proof, publicSignals: strs },
            { proof, publicSignals: changed },
          ])
          .map((r) => r.ok),
      ).toEqual([true, false]);
    }
  }, 30_000);
});
