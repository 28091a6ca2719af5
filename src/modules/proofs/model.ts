import { t } from "elysia";
import { errorTextOf } from "../../errors";
import type { MandateViolation } from "../../mandates/evaluate";
import type { FailureReason } from "./service";

/** A proof's JSON text is ~700 bytes; this bound only stops abuse. */
export const PROOF_MAX_LENGTH = 8 * 1024;
export const SIGNATURE_MAX_LENGTH = 256;
/** What an agent challenge's proof must be: the words the schema's string rule gives (src/http/validate.ts). */
export const PROOF_STRING_REQUIREMENT = `must be a non-empty string of at most ${PROOF_MAX_LENGTH} characters`;

/** A verified budget spend as every answer names it (the proof's 200, the status, the webhook event): never a member. */
export const spendSchema = t.Object(
  {
    nullifier: t.String({ description: "The spend's one-time nullifier, decimal" }),
    commitment: t.String({ description: "The new note's commitment, decimal (appended to the group's notes)" }),
    amount: t.String({ description: 'Major units as the currency writes them ("20.00")' }),
    currency: t.String(),
    payee: t.String({ description: "The origin paid" }),
  },
  { additionalProperties: false },
);

/** A session's spend where sessions of every kind share a schema: the spend of a budget session, null before its decision; absent for other kinds. */
export const sessionSpendSchema = t.Optional(t.Union([spendSchema, t.Null()], { description: "Budget sessions only: the verified spend, else null" }));

/** The request body, validated by src/http/validate.ts; a null agent_signature is the same as none. */
export const proofRequest = t.Object({
  challenge_id: t.String({ minLength: 1, maxLength: 256, examples: ["ch_3q2-7wEzX1pDk9cVt0mWlA"] }),
  proof: t.Union([
    t.String({
      minLength: 1,
      maxLength: PROOF_MAX_LENGTH,
      description:
        "The JSON text of a snarkjs Groth16 proof ({pi_a, pi_b, pi_c, protocol, curve}), or its compact form: base64url of 256 bytes (see docs/protocol.md).",
    }),
    t.Record(t.String(), t.Any(), {
      description:
        "For a budget challenge: {nullifier, commitment, enrolment_root, notes_root, groth16} (docs/api.md, Budget spends). For a group challenge: the Semaphore v4 proof object as @semaphore-protocol/proof returns it, {merkleTreeDepth, merkleTreeRoot, nullifier, message, scope, points} (its JSON text is accepted too). A malformed object fails the challenge with reason invalid_proof_format.",
    }),
  ]),
  agent_signature: t.Optional(
    t.Union([
      t.String({ maxLength: SIGNATURE_MAX_LENGTH, description: "Ed25519 signature (base64url) of the canonical challenge message; raises confidence." }),
      t.Null(),
    ]),
  ),
});

export type ProofRequest = typeof proofRequest.static;

export const proofResponse = t.Object(
  {
    verified: t.Literal(true),
    agent_id: t.String({ description: "The challenge's agent; for a group challenge the pseudonym (so clients of agent challenges keep working)" }),
    pseudonym: t.Optional(t.String({ description: "Group challenges only: the proof's nullifier, decimal: this member at this platform" })),
    group_id: t.Optional(t.String({ description: "Group and budget challenges only" })),
    spend: t.Optional(spendSchema),
    action: t.String(),
    confidence: t.Number({ examples: [0.99] }),
    timestamp: t.String({ format: "date-time" }),
    session_id: t.String(),
    receipt: t.Union([t.String(), t.Null()], {
      description:
        "The decision's signed receipt: a compact JWS (docs/receipts.md). Null only if the store failed right after the decision; the status endpoint then has it.",
    }),
  },
  { additionalProperties: false },
);

/** The closed set of failure reasons (docs/api.md, Reasons); a Record so that the compiler holds it to FailureReason both ways. */
const REASONS: Record<FailureReason, true> = {
  invalid_proof_format: true,
  invalid_curve_point: true,
  invalid_public_input: true,
  proof_rejected: true,
  unknown_agent: true,
  agent_revoked: true,
  invalid_signature: true,
  signature_not_verifiable: true,
  mandate_violation: true,
  circuit_retired: true,
  message_mismatch: true,
  scope_mismatch: true,
  depth_mismatch: true,
  not_member: true,
  stale_notes_root: true,
  period_ended: true,
  already_spent: true,
};
/** The constraints a mandate_violation names in `detail` (docs/mandates.md). */
const VIOLATIONS: Record<MandateViolation, true> = {
  action: true,
  merchant: true,
  validity: true,
  currency: true,
  amount_missing: true,
  max_amount: true,
  max_total: true,
  max_count: true,
};

export const reasonSchema = t.Union(
  (Object.keys(REASONS) as FailureReason[]).map((reason) => t.Literal(reason)),
  { description: "Why the verification failed (docs/api.md, Reasons)" },
);

/** 400 `Proof verification failed`: the challenge is now failed. */
export const verificationFailed = t.Object(
  {
    verified: t.Literal(false),
    error: t.Literal(errorTextOf("verification_failed")),
    reason: reasonSchema,
    detail: t.Optional(
      t.Union(
        (Object.keys(VIOLATIONS) as MandateViolation[]).map((violation) => t.Literal(violation)),
        { description: "With reason mandate_violation only: the mandate's constraint the action broke" },
      ),
    ),
    receipt: t.Union([t.String(), t.Null()], { description: "The failed decision's signed receipt (docs/receipts.md)" }),
    request_id: t.String(),
  },
  { additionalProperties: false },
);

/** 400 `Challenge expired`: more than 300 s old. */
export const challengeExpired = t.Object(
  { verified: t.Literal(false), error: t.Literal(errorTextOf("challenge_expired")), request_id: t.String() },
  { additionalProperties: false },
);

/**
 * 400 `Challenge already used`: decided before, by this or a concurrent
 * submission; `pending` when another node is still verifying it after the
 * loser's bounded wait (docs/api.md, Decisions).
 */
export const challengeUsed = t.Object(
  {
    verified: t.Literal(false),
    error: t.Literal(errorTextOf("challenge_used")),
    previous_status: t.Union([t.Literal("verified"), t.Literal("failed"), t.Literal("pending")]),
    request_id: t.String(),
  },
  { additionalProperties: false },
);
