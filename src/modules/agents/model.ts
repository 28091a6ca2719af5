import { t } from "elysia";
import { invalidField } from "../../errors";
import { boundedString, requireFields } from "../../http/body";
import { parseFieldElement } from "../../identity/field";
import { isSigningKey } from "../../identity/signature";

export const agentRequest = t.Object({
  agent_id: t.String({ minLength: 1, maxLength: 256, examples: ["shopping-agent-7"] }),
  identity_commitment: t.String({ description: "Poseidon(secret) as a decimal field element below r" }),
  signing_key: t.Optional(t.String({ description: "Ed25519 public key, 32 bytes base64url" })),
});

export const agentResponse = t.Object({
  agent_id: t.String(),
  identity_commitment: t.String(),
  signing_key: t.Union([t.String(), t.Null()]),
  status: t.Union([t.Literal("active"), t.Literal("revoked")]),
  created_at: t.String({ format: "date-time" }),
  revoked_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
});

export interface AgentInput {
  agentId: string;
  identityCommitment: string;
  signingKey: string | null;
}

export function parseAgentRequest(body: Record<string, unknown>): AgentInput {
  requireFields(body, ["agent_id", "identity_commitment"]);
  const agentId = boundedString(body, "agent_id");
  const commitment = body.identity_commitment;
  if (typeof commitment !== "string" || parseFieldElement(commitment) === null) {
    throw invalidField("identity_commitment", "must be a decimal field element below the BN254 scalar order r, without sign or leading zeros");
  }
  const signingKey = body.signing_key;
  if (signingKey !== undefined && signingKey !== null && (typeof signingKey !== "string" || !isSigningKey(signingKey))) {
    throw invalidField("signing_key", "must be an Ed25519 public key: 32 bytes, base64url without padding");
  }
  return { agentId, identityCommitment: commitment, signingKey: typeof signingKey === "string" ? signingKey : null };
}
