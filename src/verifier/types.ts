// The verification contract the service depends on. Implementations must be
// total: malformed input yields a reason, never an exception.

/** A Groth16 proof in snarkjs's JSON shape (decimal strings, projective with z = 1). */
export interface SnarkjsProof {
  pi_a: string[];
  pi_b: string[][];
  pi_c: string[];
  protocol?: string;
  curve?: string;
}

/** A snarkjs Groth16 verification key (verification_key.json). */
export interface SnarkjsVerificationKey {
  protocol: string;
  curve: string;
  nPublic: number;
  vk_alpha_1: string[];
  vk_beta_2: string[][];
  vk_gamma_2: string[][];
  vk_delta_2: string[][];
  IC: string[][];
  vk_alphabeta_12?: unknown;
}

/** Why a proof was not accepted; a closed set, documented in docs/protocol.md. */
export type VerifyFailure =
  | "invalid_proof_format" // not a proof: wrong shape, not numbers, wrong length, coordinate ≥ p
  | "invalid_curve_point" // a point not on the curve, not in the subgroup, or at infinity
  | "invalid_public_input" // wrong count, or a value not canonical below r
  | "proof_rejected"; // well-formed, but the pairing equation does not hold

export type VerifyResult = { ok: true } | { ok: false; reason: VerifyFailure };

/**
 * The one verifier contract: the service depends on it (src/deps.ts), main.ts
 * wires the WebAssembly Groth16Verifier into it, tests may substitute their own.
 */
export interface Verifier {
  /**
   * `options.tenant` names whose work this is (the service passes the
   * challenge's API key id); a verifier that queues (verifier/batching.ts)
   * shares its time fairly between tenants. Others ignore it.
   */
  verify(proof: SnarkjsProof | string, publicSignals: readonly (string | bigint)[], options?: VerifyOptions): VerifyResult | Promise<VerifyResult>;
}

export interface VerifyOptions {
  tenant?: string;
}
