// Type.Integer, not Elysia's t.Integer: that one also accepts a numeric string (for query strings) and would document integers as string|integer.
import { Type } from "@sinclair/typebox";
import { t } from "elysia";

export const usageResponse = t.Object(
  {
    key_id: t.String({ description: "The 16 hex digits inside the key" }),
    name: t.String(),
    challenges: Type.Integer({ minimum: 0, description: "Successful challenge requests" }),
    verifications: t.Object({ verified: Type.Integer({ minimum: 0 }), failed: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
    rate_limit_per_minute: Type.Integer({ minimum: 0, description: "0 means unlimited" }),
  },
  { additionalProperties: false },
);
