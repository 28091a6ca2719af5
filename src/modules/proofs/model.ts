import { t } from "elysia";

/** A proof's JSON text is ~700 bytes; this bound only stops abuse. */
export const PROOF_MAX_LENGTH = 8 * 1024;
export const SIGNATURE_MAX_LENGTH = 256;

/** The request body, validated by src/http/validate.ts; a null agent_signature is the same as none. */
export const proofRequest = t.Object({
  challenge_id: t.String({ minLength: 1, maxLength: 256, examples: ["ch_3q2-7wEzX1pDk9cVt0mWlA"] }),
  proof: t.String({
    minLength: 1,
    maxLength: PROOF_MAX_LENGTH,
    description:
      "The JSON text of a snarkjs Groth16 proof ({pi_a, pi_b, pi_c, protocol, curve}), or its compact form: base64url of 256 bytes (see docs/protocol.md).",
  }),
  agent_signature: t.Optional(
    t.Union([
      t.String({ maxLength: SIGNATURE_MAX_LENGTH, description: "Ed25519 signature (base64url) of the canonical challenge message; raises confidence." }),
      t.Null(),
    ]),
  ),
});

export type ProofRequest = typeof proofRequest.static;

export const proofResponse = t.Object({
  verified: t.Boolean({ examples: [true] }),
  agent_id: t.String(),
  action: t.String(),
  confidence: t.Number({ examples: [0.99] }),
  timestamp: t.String({ format: "date-time" }),
  session_id: t.String(),
  receipt: t.Union([t.String(), t.Null()], {
    description:
      "The decision's signed receipt: a compact JWS (docs/receipts.md). Null only if the store failed right after the decision; the status endpoint then has it.",
  }),
});

export const proofFailure = t.Object({
  verified: t.Literal(false),
  error: t.String({ examples: ["Proof verification failed"] }),
  reason: t.Optional(t.String({ examples: ["proof_rejected"] })),
  previous_status: t.Optional(t.String({ examples: ["verified"] })),
  receipt: t.Optional(
    t.Union([t.String(), t.Null()], { description: 'With "Proof verification failed": the failed decision\'s signed receipt (docs/receipts.md)' }),
  ),
  request_id: t.String(),
});
