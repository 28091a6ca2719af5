// The confidence score of a decided verification. A Groth16 proof with a
// ~128-bit security level leaves doubt only about the agent's secret having
// leaked, not about the mathematics; a second, independent key (the Ed25519
// signing key, which can live in different custody) lowers that doubt.
export const CONFIDENCE_PROOF = 0.99;
export const CONFIDENCE_PROOF_AND_SIGNATURE = 0.999;

export interface Evidence {
  proofValid: boolean;
  signatureValid: boolean;
}

/** Confidence of a verification, or null when it failed: failures carry no score. */
export function confidence(evidence: Evidence): number | null {
  if (!evidence.proofValid) return null;
  return evidence.signatureValid ? CONFIDENCE_PROOF_AND_SIGNATURE : CONFIDENCE_PROOF;
}
