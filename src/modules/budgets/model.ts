// The schema of the enrolment route (docs/api.md, "Budgeted groups"): the
// validation and the OpenAPI document are these.
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { commitmentProblem } from "../../groups/tree";
import { MANDATE_MAX_LENGTH } from "../../budgets/ap2";
import { mandateSchema } from "../../mandates/schema";

const decimal = (description: string) => t.String({ pattern: "^(0|[1-9][0-9]*)$", description, examples: ["0"] });

/** Principal keys an owner may name for one AP2 mandate. */
export const MAX_PRINCIPAL_KEYS = 8;

export const enrolmentRequest = t.Object({
  identity_commitment: decimal("The member's identity commitment H1(s): decimal, in [1, r)"),
  ap2_mandate: t.Optional(
    t.String({
      minLength: 1,
      maxLength: MANDATE_MAX_LENGTH,
      description:
        'An AP2 v0.2 open payment mandate (vct mandate.payment.open.1) as a compact SD-JWT with every disclosure and the agent\'s key-binding JWT (docs/protocol.md, "Importing an AP2 open payment mandate"); with principal_keys. Exactly one of ap2_mandate and mandate',
    }),
  ),
  principal_keys: t.Optional(
    t.Array(t.Object({ kty: t.String() }, { additionalProperties: true }), {
      minItems: 1,
      maxItems: MAX_PRINCIPAL_KEYS,
      description: `The principal's public keys (JWK, up to ${MAX_PRINCIPAL_KEYS}) the AP2 mandate must be signed by`,
    }),
  ),
  mandate: t.Optional(mandateSchema),
});
export type EnrolmentRequest = typeof enrolmentRequest.static;

export const enrolmentRefinements = {
  identity_commitment: (value: string): string | null => commitmentProblem(value),
};
export const enrolmentExplanations = {
  identity_commitment: (value: unknown): string | null => (typeof value === "string" ? commitmentProblem(value) : null),
};

export const enrolmentResponse = t.Object(
  {
    group_id: t.String(),
    identity_commitment: decimal("The member's identity commitment"),
    leaf: decimal("L = H3(idc, T, salt), appended to the group's tree"),
    leaf_index: Type.Integer({ minimum: 0 }),
    salt: decimal("The leaf's salt: give it to the member with the terms; it hides both in the public leaf"),
    terms: t.Object(
      {
        currency: t.String(),
        min_amount: decimal("Per purchase, minor units"),
        max_amount: decimal("Per purchase, minor units"),
        budget: decimal("Per period (or the mandate's life), minor units; 18446744073709551615 when unbounded"),
        period: t.Union([t.Literal("day"), t.Literal("week"), t.Literal("month"), t.Null()], { description: "null: the budget holds for the mandate's life" }),
        one_time: t.Boolean(),
        payees: t.Union([t.Array(t.String()), t.Null()], { description: "Allowed payee origins; null: any" }),
        expires_at: t.String({ format: "date-time" }),
      },
      { additionalProperties: false },
    ),
    statement: t.Object(
      {
        ta: decimal("TA, packed amounts"),
        tm: decimal("TM, packed currency, period, flags and expiry"),
        payees: t.Array(decimal("A payee slot"), { minItems: 8, maxItems: 8 }),
        mandate: decimal("τ, the mandate's value"),
      },
      { additionalProperties: false, description: 'The terms as the spend circuit takes them (docs/protocol.md, "Terms and the leaf")' },
    ),
    merkle_tree_root: decimal("The group's root after the enrolment"),
    size: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

/** Notes a page of the notes feed holds at most. */
export const MAX_NOTES_PAGE = 1_000;

export const notesQuery = {
  offset: {
    description: "First leaf index to list, at least 1 (default 1): leaf 0 is the fixed genesis leaf, never listed; pass each page's next_offset",
    schema: { type: "integer" as const, minimum: 1 },
  },
};

export const checkpointView = t.Object(
  {
    sequence: Type.Integer({ minimum: 0, description: "Unique per group, in order" }),
    size: Type.Integer({ minimum: 1, description: "Leaves of the notes tree it is the root of (the genesis leaf included)" }),
    root: decimal("The notes tree's root at that size"),
    at: t.String({ format: "date-time" }),
  },
  { additionalProperties: false },
);

export const notesPage = t.Object(
  {
    group_id: t.String(),
    size: Type.Integer({ minimum: 1, description: "The notes tree's size now (leaves, the genesis leaf included)" }),
    offset: Type.Integer({ minimum: 1 }),
    notes: t.Array(decimal("A note commitment"), { description: `Leaves offset… in order, at most ${MAX_NOTES_PAGE}` }),
    next_offset: t.Union([Type.Integer({ minimum: 2 }), t.Null()], { description: "Where the next page starts; null: this page ends at size" }),
    checkpoints: t.Array(checkpointView, {
      description: "The newest BUDGET_CHECKPOINT_WINDOW checkpoints, oldest first: a spend names one of their roots (the newest it has synced)",
    }),
  },
  { additionalProperties: false },
);
export type NotesPage = typeof notesPage.static;
