// The schemas of the group routes (docs/api.md, "Groups"): the validation and
// the OpenAPI document are these.
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { commitmentProblem } from "../../groups/tree";
import { identifierProblem } from "../../identity/identifiers";
import { mandateSchema, parseMandate } from "../../mandates/schema";

export const MAX_MEMBERS_PER_CALL = 10_000;
export const MAX_MEMBERS_PAGE = 100_000;
/** A batch of 10,000 commitments of up to 78 digits is ~800 KB of JSON: this route takes up to 1 MiB (the others 64 KiB). */
export const MEMBERS_BODY_LIMIT_BYTES = 1024 * 1024;

const decimal = (description: string) => t.String({ pattern: "^(0|[1-9][0-9]*)$", description, examples: ["0"] });

export const groupIdSchema = t.String({ minLength: 1, maxLength: 256, examples: ["household-agents"] });

export const groupRequest = t.Object({
  group_id: groupIdSchema,
  mandate: t.Optional(t.Union([mandateSchema, t.Null()])),
});
export type GroupRequest = typeof groupRequest.static;

/** Only a mandate object: a group has no principal to sign one. */
const explainGroupMandate = (value: unknown): string | null => {
  const parsed = parseMandate(value);
  return parsed.ok ? null : parsed.error;
};

export const groupRefinements = {
  // The same identifier rules as agent_id: stored, and a path segment.
  group_id: (groupId: string): string | null => identifierProblem("agent_id", groupId),
  mandate: explainGroupMandate,
};
export const groupExplanations = { mandate: explainGroupMandate };

export const membersRequest = t.Object({
  identity_commitments: t.Array(decimal("A Semaphore identity commitment: decimal, in [1, r)"), {
    minItems: 1,
    maxItems: MAX_MEMBERS_PER_CALL,
    description: `1–${MAX_MEMBERS_PER_CALL} commitments, appended in this order; all or nothing`,
  }),
});
export type MembersRequest = typeof membersRequest.static;

/** The first commitment that cannot be a leaf, by index: what the 400 names. */
export const membersRefinements = {
  identity_commitments: (commitments: string[]): string | null => {
    for (const [i, commitment] of commitments.entries()) {
      const problem = commitmentProblem(commitment);
      if (problem) return `[${i}] ${problem}`;
    }
    return null;
  },
};

/** Why the schema refused the batch, in the same words (the item pattern cannot say which index). */
export const membersExplanations = {
  identity_commitments: (value: unknown): string | null => {
    if (!Array.isArray(value)) return null;
    for (const [i, item] of value.entries()) {
      if (typeof item !== "string") return `[${i}] must be a decimal string`;
      const problem = commitmentProblem(item);
      if (problem) return `[${i}] ${problem}`;
    }
    return null;
  },
};

const treeFields = {
  group_id: t.String(),
  size: Type.Integer({ minimum: 0, description: "Leaves in the tree, removed members (0 leaves) included, as Semaphore counts them" }),
  active_members: Type.Integer({ minimum: 0, description: "Leaves that are not 0" }),
  merkle_tree_root: decimal('The root now, decimal ("0" for an empty group)'),
  merkle_tree_depth: Type.Integer({ minimum: 0, maximum: 32 }),
  anonymity_warning: t.Union([t.String(), t.Null()], {
    description: "Set while fewer than 3 members are active: a proof from a group of 1 names its member, of 2 one of two (docs/privacy.md)",
  }),
};

export const groupTreeResponse = t.Object(treeFields, { additionalProperties: false });

export const groupResponse = t.Object(
  {
    ...treeFields,
    mandate: t.Union([mandateSchema, t.Null()], { description: "Held by each member separately, per pseudonym (docs/mandates.md)" }),
    created_at: t.String({ format: "date-time" }),
  },
  { additionalProperties: false },
);

export const membersQuery = {
  offset: { description: "First leaf index (default 0)", schema: { type: "integer" as const, minimum: 0 } },
  limit: {
    description: `Leaves per page, 1–${MAX_MEMBERS_PAGE} (default ${MAX_MEMBERS_PAGE})`,
    schema: { type: "integer" as const, minimum: 1, maximum: MAX_MEMBERS_PAGE },
  },
};

export const membersPage = t.Object(
  {
    group_id: t.String(),
    size: Type.Integer({ minimum: 0 }),
    merkle_tree_root: decimal("The root now"),
    merkle_tree_depth: Type.Integer({ minimum: 0, maximum: 32 }),
    offset: Type.Integer({ minimum: 0 }),
    members: t.Array(decimal('A leaf: an identity commitment, or "0" for a removed member'), { description: "Leaves from offset, in leaf order" }),
    next_offset: t.Union([Type.Integer({ minimum: 0 }), t.Null()], { description: "The offset of the next page; null on the last" }),
  },
  { additionalProperties: false },
);
