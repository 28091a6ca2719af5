// The schemas of the group routes (docs/api.md, "Groups"): the validation and
// the OpenAPI document are these.
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { commitmentProblem } from "../../groups/tree";
import { identifierProblem } from "../../identity/identifiers";
import { mandateSchema, parseMandate } from "../../mandates/schema";

export const MAX_MEMBERS_PER_CALL = 10_000;
/**
 * Leaves per members page: ≈ 800 KB of JSON at 78-digit commitments, a few
 * milliseconds to read and encode (issue 32: pages of 100,000 were 7.9 MB
 * each, and four anonymous readers took 2.9 GB out in 15 s).
 */
export const MAX_MEMBERS_PAGE = 10_000;
/** Changes per page of `?since=`: 36 bytes each, 480 KB of base64url at most. */
export const MAX_CHANGES_PAGE = 10_000;
/** One change record: uint32 big-endian leaf index ‖ the leaf's value, 32 bytes big-endian (0: removed). */
export const CHANGE_RECORD_BYTES = 36;

/** Leaves as the changes encoding: records of CHANGE_RECORD_BYTES, in the order given, base64url without padding (RFC 4648 §5). */
export function encodeChanges(leaves: readonly { index: number; value: string }[]): string {
  const bytes = Buffer.alloc(leaves.length * CHANGE_RECORD_BYTES);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (const [i, leaf] of leaves.entries()) {
    const at = i * CHANGE_RECORD_BYTES;
    view.setUint32(at, leaf.index);
    let value = BigInt(leaf.value);
    for (let word = 3; word >= 0; word--) {
      view.setBigUint64(at + 4 + word * 8, value & 0xffff_ffff_ffff_ffffn);
      value >>= 64n;
    }
  }
  return bytes.toString("base64url");
}

/** The inverse of encodeChanges (tests and tools): records back to leaves. */
export function decodeChanges(text: string): { index: number; value: string }[] {
  const bytes = Buffer.from(text, "base64url");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const leaves: { index: number; value: string }[] = [];
  for (let at = 0; at + CHANGE_RECORD_BYTES <= bytes.length; at += CHANGE_RECORD_BYTES) {
    let value = 0n;
    for (let word = 0; word < 4; word++) value = (value << 64n) | view.getBigUint64(at + 4 + word * 8);
    leaves.push({ index: view.getUint32(at), value: value.toString() });
  }
  return leaves;
}
/** A batch of 10,000 commitments of up to 78 digits is ~800 KB of JSON: this route takes up to 1 MiB (the others 64 KiB). */
export const MEMBERS_BODY_LIMIT_BYTES = 1024 * 1024;

const decimal = (description: string) => t.String({ pattern: "^(0|[1-9][0-9]*)$", description, examples: ["0"] });

export const groupIdSchema = t.String({ minLength: 1, maxLength: 256, examples: ["household-agents"] });

/** At most this many keys in a group's challengers. */
export const MAX_CHALLENGERS = 100;

const challengersSchema = t.Union(
  [
    t.Array(t.String({ minLength: 1, maxLength: 256 }), {
      maxItems: MAX_CHALLENGERS,
      description: `The API key ids (up to ${MAX_CHALLENGERS}) that may challenge the group; any other key's group challenge is refused (403)`,
    }),
    t.Null(),
  ],
  { description: "null or absent: any key may challenge the group (docs/privacy.md)" },
);

export const groupRequest = t.Object({
  group_id: groupIdSchema,
  mandate: t.Optional(t.Union([mandateSchema, t.Null()])),
  challengers: t.Optional(challengersSchema),
  budget: t.Optional(
    t.Boolean({
      description:
        'true: a budgeted group (docs/protocol.md, "Budgets across merchants"), whose leaves come only from enrolments with verified terms (POST /v1/groups/{groupId}/enrolments), never from plain additions. Fixed at creation; default false',
    }),
  ),
});

/** PATCH /v1/groups/{id}: what an owner changes on a group besides members and mandate. */
export const groupUpdateRequest = t.Object(
  { challengers: t.Optional(challengersSchema) },
  { additionalProperties: false, description: "challengers is required; null: any key" },
);
export type GroupUpdateRequest = typeof groupUpdateRequest.static;
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
    challengers: t.Optional(
      t.Union([t.Array(t.String()), t.Null()], { description: "The keys that may challenge the group (null: any); shown to the owner only" }),
    ),
    budget: t.Boolean({ description: "A budgeted group: leaves only through enrolments" }),
    created_at: t.String({ format: "date-time" }),
  },
  { additionalProperties: false },
);

export const membersQuery = {
  offset: {
    description: "First leaf index (default 0), with since too: the changes listed are those of leaves from this index on; pass each page's next_offset",
    schema: { type: "integer" as const, minimum: 0 },
  },
  limit: {
    description: `Leaves per page, 1–${MAX_MEMBERS_PAGE} (default ${MAX_MEMBERS_PAGE}); with since, change records per page, 1–${MAX_CHANGES_PAGE}`,
    schema: { type: "integer" as const, minimum: 1, maximum: Math.max(MAX_MEMBERS_PAGE, MAX_CHANGES_PAGE) },
  },
  since: {
    description:
      "A group version the client holds: the answer is then the changes since it (every leaf written after it, added or removed), not the leaves. 0: every leaf. Above the group's version: 400.",
    schema: { type: "integer" as const, minimum: 0 },
  },
};

const versionField = Type.Integer({ minimum: 0, description: "The group's version this page belongs to: every page of one read must carry the same" });

/** What every answer of the members route says of the group: the version its page belongs to. */
const pageHead = {
  group_id: t.String(),
  version: versionField,
  size: Type.Integer({ minimum: 0 }),
  merkle_tree_root: decimal("The root at version"),
  merkle_tree_depth: Type.Integer({ minimum: 0, maximum: 32 }),
};

export const membersChanges = t.Object(
  {
    ...pageHead,
    since: Type.Integer({ minimum: 0 }),
    offset: Type.Integer({ minimum: 0 }),
    count: Type.Integer({ minimum: 0, maximum: MAX_CHANGES_PAGE }),
    changes: t.String({
      description: `base64url (RFC 4648 §5, no padding) of count records of ${CHANGE_RECORD_BYTES} bytes: uint32 big-endian leaf index, then the leaf's value as 32 bytes big-endian (0: a removed member); every leaf written after since, in leaf order`,
    }),
    next_offset: t.Union([Type.Integer({ minimum: 0 }), t.Null()], {
      description: "The offset of the next page of changes: the leaf index after this page's last record (not offset + count); null on the last",
    }),
  },
  { additionalProperties: false },
);

export const membersPage = t.Object(
  {
    ...pageHead,
    offset: Type.Integer({ minimum: 0 }),
    members: t.Array(decimal('A leaf: an identity commitment, or "0" for a removed member'), { description: "Leaves from offset, in leaf order" }),
    next_offset: t.Union([Type.Integer({ minimum: 0 }), t.Null()], { description: "The offset of the next page; null on the last" }),
  },
  { additionalProperties: false },
);
