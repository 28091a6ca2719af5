import { t } from "elysia";
import { COMMITMENT_OF_ZERO } from "../../identity/commitment";
import { parseFieldElement } from "../../identity/field";
import { identifierProblem } from "../../identity/identifiers";
import { isSigningKey } from "../../identity/signature";
import { explainMandate, mandateFields, mandateRequest } from "../mandates/model";

const COMMITMENT_REQUIREMENT = "must be a decimal field element below the BN254 scalar order r, without sign or leading zeros";
const SIGNING_KEY_REQUIREMENT = "must be an Ed25519 public key: 32 bytes, base64url without padding";

/** The request body, validated by src/http/validate.ts with the refinements below; a null signing_key is the same as none. */
export const agentRequest = t.Object({
  agent_id: t.String({ minLength: 1, maxLength: 256, examples: ["shopping-agent-7"] }),
  identity_commitment: t.String({
    pattern: "^(0|[1-9][0-9]*)$",
    description: "Poseidon(secret) as a decimal field element below r",
  }),
  signing_key: t.Optional(t.Union([t.String({ pattern: "^[A-Za-z0-9_-]{43}$", description: "Ed25519 public key, 32 bytes base64url" }), t.Null()])),
  principal_key: t.Optional(
    t.Union([
      t.String({
        pattern: "^[A-Za-z0-9_-]{43}$",
        description:
          "Ed25519 public key of the agent's principal, 32 bytes base64url: the agent's mandate is then accepted only as the principal's signed {\"mandate_jws\"}, and is required",
      }),
      t.Null(),
    ]),
  ),
  mandate: t.Optional(t.Union([mandateRequest, t.Null()])),
});

export type AgentRequest = typeof agentRequest.static;

/**
 * What the patterns cannot say: the agent_id is an identifier the stores and
 * paths can hold (no NUL, not . or ..), the number is below r and not
 * Poseidon(0) (a public constant: no secret behind it), the 32 bytes are a
 * point Ed25519 accepts.
 */
export const agentRefinements = {
  agent_id: (agentId: string): string | null => identifierProblem("agent_id", agentId),
  identity_commitment: (commitment: string): string | null => {
    if (parseFieldElement(commitment) === null) return COMMITMENT_REQUIREMENT;
    if (commitment === COMMITMENT_OF_ZERO) return "is Poseidon(0), a public constant anyone can prove for; derive it from a secret in [1, r)";
    return null;
  },
  signing_key: (signingKey: string): string | null => (isSigningKey(signingKey) ? null : SIGNING_KEY_REQUIREMENT),
  principal_key: (principalKey: string): string | null => (isSigningKey(principalKey) ? null : SIGNING_KEY_REQUIREMENT),
  // The schema checks the members; the rules between them (a limit's currency and period) are the mandate's own.
  mandate: explainMandate,
};

/**
 * Why the schema refused a field, where its keywords cannot word it: a
 * pattern's meaning, a mandate's unknown or invalid member. Kept here, not as
 * a keyword in the schema, so the schema stays standard JSON Schema.
 */
export const agentExplanations = {
  identity_commitment: () => COMMITMENT_REQUIREMENT,
  signing_key: () => SIGNING_KEY_REQUIREMENT,
  principal_key: () => SIGNING_KEY_REQUIREMENT,
  mandate: explainMandate,
};

export const agentResponse = t.Object(
  {
    agent_id: t.String(),
    identity_commitment: t.String(),
    signing_key: t.Union([t.String(), t.Null()]),
    status: t.Union([t.Literal("active"), t.Literal("revoked")]),
    created_at: t.String({ format: "date-time" }),
    revoked_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
    ...mandateFields,
  },
  { additionalProperties: false },
);
