import { Type } from "@sinclair/typebox";
import { circuitId } from "../circuits/model";
import { t } from "elysia";
import { identifierProblem, storedTextProblem } from "../../identity/identifiers";
import { CHALLENGE_LIFETIME_MS } from "./lifecycle";

export const CONTEXT_MAX_BYTES = 16 * 1024;
export const CONTEXT_MAX_DEPTH = 16;

/** The request body, validated by src/http/validate.ts with the refinements below. */
export const challengeRequest = t.Object({
  agent_id: t.String({ minLength: 1, maxLength: 256, examples: ["shopping-agent-7"] }),
  action: t.String({ minLength: 1, maxLength: 256, examples: ["purchase"] }),
  context: t.Optional(
    t.Record(t.String(), t.Any(), {
      description: "Any JSON object (≤ 16 KiB, ≤ 16 levels deep); the proof is bound to its RFC 8785 canonical form.",
      examples: [{ amount: 20, currency: "EUR", merchant: "shop-a" }],
    }),
  ),
});

export const challengeResponse = t.Object(
  {
    challenge_id: t.String({ examples: ["ch_3q2-7wEzX1pDk9cVt0mWlA"] }),
    nonce: t.String({ description: "62 lowercase hex digits: a 248-bit field element", examples: ["9f".repeat(31)] }),
    expires_in: t.Literal(CHALLENGE_LIFETIME_MS / 1000, { description: "Seconds the challenge lives" }),
    // Type.Integer: Elysia's t.Integer also admits numeric strings (for query strings).
    timestamp: Type.Integer({ description: "Unix time in milliseconds", examples: [1795000000000] }),
    circuit_id: circuitId(
      "The circuit version to prove with (GET /v1/circuits/{id}); the proof is verified against this circuit's key, whatever is active later.",
    ),
  },
  { additionalProperties: false },
);

export type ChallengeRequest = typeof challengeRequest.static;

/** Nesting depth of a JSON value: 0 for a scalar, 1 for {} or []. */
function depth(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depth(child));
  return deepest + 1;
}

/**
 * The context limits JSON Schema cannot state: its serialized size (what the
 * service canonicalizes and stores) and its depth (what canonicalization
 * recurses through); and the identifier rules of src/identity/identifiers.ts
 * (no NUL — in the context at any depth too —, no dot-segment agent_id). validate() (src/http/validate.ts)
 * applies them after the schema; its signature checks they fit the schema's fields.
 */
export const challengeRefinements = {
  agent_id: (agentId: string): string | null => identifierProblem("agent_id", agentId),
  action: (action: string): string | null => identifierProblem("action", action),
  context: (context: Record<string, unknown>): string | null => {
    if (Buffer.byteLength(JSON.stringify(context), "utf8") > CONTEXT_MAX_BYTES) return `must serialize to at most ${CONTEXT_MAX_BYTES} bytes`;
    if (depth(context) > CONTEXT_MAX_DEPTH) return `must be at most ${CONTEXT_MAX_DEPTH} levels deep`;
    // Stored, and read by mandates (merchant, currency): the NUL rule at any depth, as for a mandate (issue 18).
    return storedTextProblem(context);
  },
};
