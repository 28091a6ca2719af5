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

/** A challenge for a group (issue 24): group_id instead of agent_id; the member answering stays anonymous. */
export const groupChallengeRequest = t.Object({
  group_id: t.String({ minLength: 1, maxLength: 256, examples: ["household-agents"] }),
  action: challengeRequest.properties.action,
  context: challengeRequest.properties.context,
});
export type GroupChallengeRequest = typeof groupChallengeRequest.static;

/** What the route documents: either body (exactly one of agent_id and group_id). */
export const anyChallengeRequest = t.Union([challengeRequest, groupChallengeRequest], {
  description: "Exactly one of agent_id (an agent challenge) and group_id (a group challenge: docs/api.md, Groups)",
});

const decimal = (description: string) => t.String({ pattern: "^(0|[1-9][0-9]*)$", description, examples: ["0"] });

export const groupChallengeResponse = t.Object(
  {
    ...challengeResponse.properties,
    circuit_id: circuitId("The Semaphore v4 circuit of merkle_tree_depth (GET /v1/circuits/{id}): the proof is verified against its key"),
    group_id: t.String(),
    merkle_tree_root: decimal("The group's root when the challenge was created"),
    merkle_tree_depth: Type.Integer({
      minimum: 1,
      maximum: 32,
      description: "The depth to prove at: generateProof(identity, group, message, scope, merkle_tree_depth)",
    }),
    size: Type.Integer({
      minimum: 1,
      description: "The group's size (leaves, removed ones included) when the challenge was created: its first size leaves give merkle_tree_root",
    }),
    message: decimal("Binds the nonce, the action and the context (docs/protocol.md); pass it as-is to generateProof"),
    scope: decimal(
      "One per (platform, group): the origin the context's @request binds, else the calling key; the member's pseudonym is the same at this platform, unrelated at another; pass it as-is",
    ),
    anonymity_warning: t.Union([t.String(), t.Null()], { description: "Set while the group has fewer than 3 active members (docs/privacy.md)" }),
  },
  { additionalProperties: false },
);

/** A budgeted group's challenge (issue 40): the spend circuit's public values instead of Semaphore's message and scope. */
export const budgetChallengeResponse = t.Object(
  {
    ...challengeResponse.properties,
    circuit_id: circuitId("The budget spend circuit (GET /v1/circuits/{id}): budget_spend and the first 16 hex digits of its zkey's SHA-256"),
    group_id: t.String(),
    merkle_tree_root: decimal("Hint: the group's enrolment root when the challenge was created (prove against the newest root synced)"),
    size: groupChallengeResponse.properties.size,
    anonymity_warning: groupChallengeResponse.properties.anonymity_warning,
    budget: t.Object(
      {
        group: decimal("g: the group's value in the statement"),
        payee: t.String({ description: "The origin paid (RFC 6454 serialization): the context's @request.origin, one of the asking key's registered origins" }),
        payee_field: decimal("payeeField(payee)"),
        amount: decimal("Minor units of currency"),
        currency: t.String({ pattern: "^[A-Z]{3}$" }),
        currency_field: decimal("The currency's three ASCII bytes, big-endian"),
        periods: t.Object(
          {
            day: decimal("Days since 1970-01-01 UTC"),
            week: decimal("Monday-to-Sunday weeks since the epoch"),
            month: decimal("12·(year − 1970) + month − 1"),
            minute: decimal("Minutes since the epoch (t_min)"),
          },
          { additionalProperties: false, description: "From one clock reading at creation, stored with the challenge" },
        ),
        ctx: decimal("T31 of the nonce, action and canonical context: binds this challenge"),
        notes_root: decimal("Hint: the newest notes checkpoint's root"),
        notes_size: Type.Integer({ minimum: 1, description: "Hint: that checkpoint's size (leaves, the genesis leaf included)" }),
      },
      { additionalProperties: false, description: 'The spend\'s public values (docs/api.md, "Budget spends")' },
    ),
  },
  { additionalProperties: false },
);

export const anyChallengeResponse = t.Union([challengeResponse, groupChallengeResponse, budgetChallengeResponse]);

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
export const groupChallengeRefinements = {
  group_id: (groupId: string): string | null => identifierProblem("agent_id", groupId),
  action: (action: string): string | null => identifierProblem("action", action),
  context: (context: Record<string, unknown>): string | null => challengeRefinements.context(context),
};

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
