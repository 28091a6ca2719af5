// The schemas of the mandate routes and fields. The mandate schema itself is
// the domain's (src/mandates/schema.ts): the one that documents is the one
// that parseMandate validates with.
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { MANDATE_JWS_MAX_LENGTH } from "../../mandates/principal";
import { mandateSchema } from "../../mandates/schema";
import { mandateShapeProblem } from "./service";

export const signedMandateSchema = t.Object(
  {
    mandate_jws: t.String({
      minLength: 1,
      maxLength: MANDATE_JWS_MAX_LENGTH,
      description:
        'Compact JWS by the agent\'s principal_key: header {"alg": "EdDSA", "typ": "zkagent-mandate+jwt"}, payload exactly {key_id, agent_id, identity_commitment, mandate, iat}: key_id the public id of the API key the agent is registered under (zka_<key_id>_…), iat integer seconds (docs/mandates.md)',
    }),
  },
  { additionalProperties: false },
);

/** A mandate as a request carries it: the object, or the principal's JWS for an agent with a principal_key. */
export const mandateRequest = t.Union([mandateSchema, signedMandateSchema], {
  description:
    'The agent\'s mandate (docs/mandates.md); for an agent registered with principal_key, only {"mandate_jws": …}. Unknown members are refused by name.',
});

/** Why a `mandate` field is refused (used by validate() for the registration body). */
export const explainMandate = (value: unknown): string | null => mandateShapeProblem(value);

// Type.Integer: Elysia's t.Integer also admits numeric strings (it coerces query strings), which a response never is.
export const spendSchema = t.Object(
  {
    limit: Type.Integer({ minimum: 0, description: "Index of the limit in mandate.limits" }),
    action: t.Union([t.String(), t.Null()]),
    currency: t.Union([t.String(), t.Null()]),
    period: t.Union([t.Literal("day"), t.Literal("week"), t.Literal("month")]),
    period_start: t.String({ format: "date-time" }),
    period_end: t.String({ format: "date-time" }),
    total: t.Union([t.String({ description: "Exact decimal sum of the period's verified amounts" }), t.Null()]),
    count: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

/** What every agent view carries about its mandate. */
export const mandateFields = {
  principal_key: t.Union([t.String(), t.Null()]),
  mandate: t.Union([mandateSchema, t.Null()]),
  mandate_hash: t.Union([t.String({ description: "sha256:<hex> of the stored JWS, else of the canonical mandate JSON; receipts name it" }), t.Null()]),
  mandate_jws: t.Union([t.String(), t.Null()]),
  spend: t.Array(spendSchema, { description: "Per limit with a period: the current UTC period's verified total and count" }),
};

export const mandateResponse = t.Object({ agent_id: t.String(), ...mandateFields }, { additionalProperties: false });
