import { t } from "elysia";
import { reasonSchema, sessionSpendSchema } from "../proofs/model";

const isoOrNull = t.Union([t.String({ format: "date-time" }), t.Null()]);

export const statusResponse = t.Object(
  {
    session_id: t.String(),
    status: t.Union([t.Literal("pending"), t.Literal("verified"), t.Literal("failed"), t.Literal("expired")]),
    agent_id: t.String({ description: 'The agent; for a group session the pseudonym once a proof verified, else ""' }),
    group_id: t.Optional(t.String({ description: "Group sessions only" })),
    pseudonym: t.Optional(t.Union([t.String(), t.Null()], { description: "Group sessions only: the proof's nullifier once a proof verified, else null" })),
    spend: sessionSpendSchema,
    action: t.String(),
    created_at: t.String({ format: "date-time" }),
    verified_at: isoOrNull,
    confidence: t.Union([t.Number(), t.Null()]),
    expires_at: t.String({ format: "date-time" }),
    reason: t.Union([reasonSchema, t.Null()], { description: "Why the verification failed; null unless failed" }),
    context_hash: t.String({ description: "The context hash the proof is bound to: decimal, the circuit's public input (of {} when no context was given)" }),
    receipt: t.Union([t.String(), t.Null()], { description: "The decision's signed receipt: a compact JWS (docs/receipts.md); null until decided" }),
  },
  { additionalProperties: false },
);
