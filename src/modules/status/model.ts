import { t } from "elysia";

const isoOrNull = t.Union([t.String({ format: "date-time" }), t.Null()]);

export const statusResponse = t.Object({
  session_id: t.String(),
  status: t.Union([t.Literal("pending"), t.Literal("verified"), t.Literal("failed"), t.Literal("expired")]),
  agent_id: t.String(),
  action: t.String(),
  created_at: t.String({ format: "date-time" }),
  verified_at: isoOrNull,
  confidence: t.Union([t.Number(), t.Null()]),
  expires_at: t.String({ format: "date-time" }),
});
