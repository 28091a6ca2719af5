// Interim verifier: snarkjs's groth16.verify behind the ProofVerifier
// contract, until the project's own WebAssembly verifier (assembly/) replaces
// it. snarkjs hangs under Bun unless a single-threaded curve is cached first;
// snarkjs must be imported before that curve is built (see test/support/snarkjs.ts).
import * as snarkjs from "snarkjs";
// @ts-ignore — untyped nested dependency, the copy snarkjs itself uses
import { buildBn128 } from "../../node_modules/snarkjs/node_modules/ffjavascript/main.js";
import { parseFieldElement } from "../identity/field";
import type { SnarkjsProof, SnarkjsVerificationKey, VerifyResult } from "./types";

const P = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;
const canonical = (x: unknown) => typeof x === "string" && DECIMAL.test(x) && BigInt(x) < P;
const pair = (x: unknown): x is string[] => Array.isArray(x) && x.length === 2 && x.every(canonical);

function parse(input: string): SnarkjsProof | null {
  let proof: any;
  try {
    proof = JSON.parse(input);
  } catch {
    return null;
  }
  if (typeof proof !== "object" || proof === null) return null;
  const { pi_a, pi_b, pi_c } = proof;
  const g1 = (p: any) => Array.isArray(p) && p.length === 3 && p.every(canonical) && p[2] === "1";
  const g2 = (p: any) => Array.isArray(p) && p.length === 3 && pair(p[0]) && pair(p[1]) && p[2][0] === "1" && p[2][1] === "0";
  return g1(pi_a) && g1(pi_c) && g2(pi_b) ? { pi_a, pi_b, pi_c, protocol: "groth16", curve: "bn128" } : null;
}

export async function interimVerifier(vk: SnarkjsVerificationKey) {
  (globalThis as any).curve_bn128 ??= await buildBn128(true);
  const quiet = { log() {}, info() {}, debug() {}, warn() {}, error() {} };
  return {
    async verify(proofText: string, publicSignals: readonly string[]): Promise<VerifyResult> {
      const proof = parse(proofText);
      if (!proof) return { ok: false, reason: "invalid_proof_format" };
      if (publicSignals.length !== vk.nPublic || publicSignals.some((s) => parseFieldElement(s) === null)) return { ok: false, reason: "invalid_public_input" };
      try {
        return (await snarkjs.groth16.verify(vk as any, [...publicSignals], proof as any, quiet as any)) ? { ok: true } : { ok: false, reason: "proof_rejected" };
      } catch {
        return { ok: false, reason: "invalid_curve_point" };
      }
    },
  };
}
