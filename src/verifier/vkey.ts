// Verification-key parsing: a snarkjs verification_key.json (Groth16, BN254)
// to the wasm key layout α ‖ β ‖ γ ‖ δ ‖ IC₀..ICₙ (see assembly/groth16.ts).
// A bad key is a configuration error, so problems throw with a message that
// names the field; curve-level checks (canonical, on curve, subgroup, γ ≠ δ)
// happen in the wasm module when the key is loaded.

import { G1_BYTES, G2_BYTES, g1ToBytes, g2ToBytes } from "./encoding.ts";

export const VK_ALPHA = 0;
export const VK_BETA = G1_BYTES;
export const VK_GAMMA = G1_BYTES + G2_BYTES;
export const VK_DELTA = G1_BYTES + 2 * G2_BYTES;
export const VK_IC = G1_BYTES + 3 * G2_BYTES;

export interface EncodedKey {
  nPublic: number;
  bytes: Uint8Array;
}

/** Validates the JSON shape of a snarkjs Groth16 BN254 key and encodes it. Throws Error. */
export function encodeVerificationKey(vkJson: unknown): EncodedKey {
  const fail = (msg: string): never => {
    throw new Error(`invalid verification key: ${msg}`);
  };
  let vk = vkJson;
  if (typeof vk === "string") {
    try {
      vk = JSON.parse(vk);
    } catch {
      fail("not JSON");
    }
  }
  if (typeof vk !== "object" || vk === null || Array.isArray(vk)) return fail("not an object");
  const k = vk as Record<string, unknown>;
  if (k.protocol !== "groth16") fail(`protocol must be "groth16", got ${JSON.stringify(k.protocol)}`);
  if (k.curve !== "bn128") fail(`curve must be "bn128", got ${JSON.stringify(k.curve)}`);
  const n = k.nPublic;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0) return fail("nPublic must be a non-negative integer");
  if (!Array.isArray(k.IC) || k.IC.length !== n + 1) fail(`IC must have nPublic + 1 = ${n + 1} points`);
  const bytes = new Uint8Array(VK_IC + (n + 1) * G1_BYTES);
  if (!g1ToBytes(k.vk_alpha_1, bytes, VK_ALPHA) || (k.vk_alpha_1 as string[])[2] !== "1") fail("vk_alpha_1 malformed");
  if (!g2ToBytes(k.vk_beta_2, bytes, VK_BETA)) fail("vk_beta_2 malformed");
  if (!g2ToBytes(k.vk_gamma_2, bytes, VK_GAMMA)) fail("vk_gamma_2 malformed");
  if (!g2ToBytes(k.vk_delta_2, bytes, VK_DELTA)) fail("vk_delta_2 malformed");
  (k.IC as unknown[]).forEach((p, j) => {
    if (!g1ToBytes(p, bytes, VK_IC + j * G1_BYTES)) fail(`IC[${j}] malformed`);
  });
  return { nPublic: n, bytes };
}
