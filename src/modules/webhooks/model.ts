// Type.Integer, not Elysia's t.Integer: that one also admits numeric strings (for query strings), which a response never is.
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { EVENT_TYPES, isEventType } from "../../webhooks/events";
import { sessionSpendSchema } from "../proofs/model";

const ENDPOINT_ID = { pattern: "^whep_[0-9a-f]{32}$", examples: ["whep_4f1c2b7a9e0d4c3b8a6f5e4d3c2b1a09"] };
const EVENT_ID = { pattern: "^msg_[0-9a-f]{32}$", description: "The event's id: the webhook-id header of every attempt, for receivers to deduplicate by" };
/** An event type: literals, so the schema that validates is the one that documents (a string `enum` would not be checked). */
const EVENT = t.Union(EVENT_TYPES.map((type) => t.Literal(type)));

const SECRET = t.String({
  pattern: "^whsec_[A-Za-z0-9+/]{43}=$",
  description: "The signing secret, shown once: give it to your receiver's Standard Webhooks library as it is",
});

/** The request body of POST /v1/webhooks. */
export const webhookRequest = t.Object({
  url: t.String({
    minLength: 1,
    maxLength: 2048,
    description: "Where events are POSTed: https, a public address",
    examples: ["https://shop.example/hooks/zkagent"],
  }),
  events: t.Array(EVENT, { minItems: 1, maxItems: EVENT_TYPES.length * 4, description: "The event types to receive" }),
});
export type WebhookRequest = typeof webhookRequest.static;

const EVENTS_REQUIREMENT = `must be a non-empty array of event types: ${EVENT_TYPES.join(", ")}`;

/** What the schema keywords cannot word: which entry is not an event type. */
export const webhookExplanations = {
  events: (value: unknown): string => {
    if (!Array.isArray(value) || value.length === 0) return EVENTS_REQUIREMENT;
    const unknown = value.find((name) => typeof name !== "string" || !isEventType(name));
    return unknown === undefined ? EVENTS_REQUIREMENT : `unknown event type ${JSON.stringify(unknown)}; known: ${EVENT_TYPES.join(", ")}`;
  },
};

export const webhookEndpoint = t.Object(
  {
    id: t.String(ENDPOINT_ID),
    url: t.String(),
    events: t.Array(EVENT),
    created_at: t.String({ format: "date-time" }),
    previous_secret_expires_at: t.Union([t.String({ format: "date-time" }), t.Null()], {
      description: "Until then the secret before the last rotation signs too (a second v1 signature); null when none",
    }),
  },
  { additionalProperties: false },
);

/** POST /v1/webhooks answers the endpoint with its secret, the one time it is shown. */
export const webhookCreated = t.Composite([webhookEndpoint, t.Object({ secret: SECRET })], { additionalProperties: false });

export const webhookList = t.Object({ webhooks: t.Array(webhookEndpoint) }, { additionalProperties: false });

export const webhookRotated = t.Object(
  {
    id: t.String(ENDPOINT_ID),
    secret: SECRET,
    previous_secret_expires_at: t.String({ format: "date-time", description: "Until then deliveries carry a signature by the previous secret too" }),
  },
  { additionalProperties: false },
);

export const webhookDelivery = t.Object(
  {
    event_id: t.String(EVENT_ID),
    webhook_id: t.String(ENDPOINT_ID),
    type: EVENT,
    session_id: t.String(),
    state: t.Union([t.Literal("pending"), t.Literal("delivered"), t.Literal("failed")]),
    attempts: Type.Integer({ minimum: 0 }),
    next_attempt_at: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "When a pending delivery is tried next; null otherwise" }),
    last_status: t.Union([Type.Integer(), t.Null()], { description: "The HTTP status of the last attempt; null when none came" }),
    last_error: t.Union([t.String(), t.Null()]),
    created_at: t.String({ format: "date-time" }),
    finished_at: t.Union([t.String({ format: "date-time" }), t.Null()]),
  },
  { additionalProperties: false },
);

export const webhookDeliveries = t.Object({ deliveries: t.Array(webhookDelivery) }, { additionalProperties: false });

export const redeliverResponse = t.Object(
  { event_id: t.String(EVENT_ID), redelivered: Type.Integer({ minimum: 1, description: "Deliveries made pending again (one per endpoint)" }) },
  { additionalProperties: false },
);

/** The body each delivery POSTs (the OpenAPI `webhooks` section). */
export const eventPayloadSchema = t.Object(
  {
    type: EVENT,
    timestamp: t.String({ format: "date-time", description: "When the decision was made" }),
    data: t.Object(
      {
        session_id: t.String(),
        status: t.Union([t.Literal("verified"), t.Literal("failed")]),
        agent_id: t.String({ description: 'The agent; for a group session the pseudonym once a proof gave one, else ""' }),
        group_id: t.Optional(t.String({ description: "Group sessions only: the group the challenge was made for" })),
        pseudonym: t.Optional(
          t.Union([t.String(), t.Null()], {
            description: "Group sessions only: the proof's nullifier (this member at this platform), null when no proof gave one",
          }),
        ),
        spend: sessionSpendSchema,
        action: t.String(),
        context: t.Union([t.Record(t.String(), t.Unknown()), t.Null()], {
          description: "The context the proof bound, as the challenge fixed it; null when none",
        }),
        amount: t.Optional(t.Union([t.String(), t.Number()], { description: "The bound context's amount, copied when it has one" })),
        currency: t.Optional(t.String({ description: "The bound context's currency, copied when it has one" })),
        confidence: t.Union([t.Number(), t.Null()]),
        reason: t.Union([t.String(), t.Null()], { description: "Why it failed (docs/protocol.md); null when verified" }),
        detail: t.Optional(t.String({ description: "The mandate constraint a mandate_violation broke" })),
        decided_at: t.String({ format: "date-time" }),
        receipt: t.Union([t.String(), t.Null()], { description: "The signed receipt, the one the proof answer and the status carry" }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
