// The prover's one error type: every refusal names what was wrong, so a bad
// zkey, a circuit that does not match it, or an input the circuit rejects is
// an Error the caller can act on, never a wrong proof.

export type ProverErrorCode =
  /** The zkey is truncated, not a zkey, not Groth16, or its sections disagree with its header. */
  | "zkey_format"
  /** The zkey is for another curve than BN254 (q, r or n8 differ). */
  | "zkey_curve"
  /** A zkey point does not decode: a coordinate ≥ p, off the curve, or of small order. */
  | "zkey_points"
  /** A coefficient record of section 4 is out of range. */
  | "zkey_coefficients"
  /** The verification-key part (α, β, γ, δ, IC) fails the verifier's key checks. */
  | "zkey_key"
  /** The circuit's witness calculator does not belong to this zkey (field or witness size). */
  | "circuit_mismatch"
  /** The input is refused by the witness calculator (missing or unknown signal, failed assertion). */
  | "invalid_input"
  /** The witness does not satisfy the zkey's circuit: the proof did not verify, so none is returned. */
  | "unsatisfied"
  /** The circuit needs more than the prover's WebAssembly memory (4 GiB: window tables of ≈ 50× the zkey's point sections). */
  | "too_large"
  /** Anything else the prover module reports (a result at infinity, a witness value ≥ r). */
  | "internal";

export class ProverError extends Error {
  override readonly name = "ProverError";
  constructor(
    readonly code: ProverErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${code}: ${message}`, options);
  }
}
