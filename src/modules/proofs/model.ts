import { t } from "elysia";
import { invalidField } from "../../errors";
import { requireFields } from "../../http/body";

/** A proof's JSON text is ~700 bytes; this bound only stops abuse. */
export const PROOF_MAX_LENGTH = 8 * 1024;
export const SIGNATURE_MAX_LENGTH = 256;

export const proofRequest = t.Object({
  challenge_id: t.String({ examples: ["ch_3q2-7wEzX1pDk9cVt0mWlA"] }),
  proof: t.String({
    description:
      "The JSON text of a snarkjs Groth16 proof ({pi_a, pi_b, pi_c, protocol, curve}), or its compact form: base64url of 256 bytes (see docs/protocol.md).",
  }),
  agent_signature: t.Optional(t.String({ description: "Ed25519 signature (base64url) of the canonical challenge message; raises confidence." })),
});

export const proofResponse = t.Object({
  verified: t.Boolean({ examples: [true] }),
  agent_id: t.String(),
  action: t.String(),
  confidence: t.Number({ examples: [0.99] }),
  timestamp: t.String({ format: "date-time" }),
  session_id: t.String(),
});

export const proofFailure = t.Object({
  verified: t.Literal(false),
  error: t.String({ examples: ["Proof verification failed"] }),
  reason: t.Optional(t.String({ examples: ["proof_rejected"] })),
  previous_status: t.Optional(t.String({ examples: ["verified"] })),
});

export interface ProofInput {
  challengeId: string;
  proof: string;
  signature: string | undefined;
}

export function parseProofRequest(body: Record<string, unknown>): ProofInput {
  requireFields(body, ["challenge_id", "proof"]);
  const { challenge_id, proof, agent_signature } = body;
  if (typeof challenge_id !== "string" || challenge_id.length === 0 || challenge_id.length > 256) {
    throw invalidField("challenge_id", "must be a non-empty string of at most 256 characters");
  }
  if (typeof proof !== "string" || proof.length === 0 || proof.length > PROOF_MAX_LENGTH) {
    throw invalidField("proof", `must be a non-empty string of at most ${PROOF_MAX_LENGTH} characters`);
  }
  if (agent_signature !== undefined && agent_signature !== null && (typeof agent_signature !== "string" || agent_signature.length > SIGNATURE_MAX_LENGTH)) {
    throw invalidField("agent_signature", `must be a string of at most ${SIGNATURE_MAX_LENGTH} characters`);
  }
  return { challengeId: challenge_id, proof, signature: typeof agent_signature === "string" ? agent_signature : undefined };
}
