// The group routes (docs/api.md, "Groups"). Reading a group takes any key;
// changing it only the key that created it; its members need no key at all
// (agents hold none, and reading every leaf tells nobody which is theirs).
import { Elysia, t } from "elysia";
import type { ModuleDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { readJsonObject } from "../../http/body";
import { describe, JSON_BODY_ERRORS } from "../../http/docs";
import { JSON_CONTENT_TYPE } from "../../http/errors";
import { readMembers } from "../../http/members-body";
import { pathParam } from "../../http/params";
import { REQUEST_ID_HEADER } from "../../http/request-id";
import { validate } from "../../http/validate";
import { invalidField, missingFields } from "../../errors";
import { mandateSchema } from "../../mandates/schema";
import { notesPage, notesQuery } from "../budgets/model";
import { readNotes } from "../budgets/service";
import {
  groupExplanations,
  groupRefinements,
  groupRequest,
  groupResponse,
  groupTreeResponse,
  groupUpdateRequest,
  membersChanges,
  membersPage,
  membersQuery,
  membersRequest,
} from "./model";
import {
  AdditionQueues,
  addMembers,
  createGroup,
  deleteGroupMandate,
  type MembersQuery,
  matchesEtag,
  membersEtag,
  membersGroup,
  membersRequestOf,
  putGroupMandate,
  PageCache,
  ReaderWindows,
  readGroup,
  readMembersPage,
  removeMember,
  setChallengers,
} from "./service";

const GROUP = { groupId: "The group_id" };

export const groupMembersPublic = (deps: ModuleDeps) => {
  const readers = new ReaderWindows(deps.limits?.membersReadsPerMinute, () => deps.clock.now());
  const pages = new PageCache();
  return new Elysia({ name: "group-members" })
    .get(
      "/v1/groups/:groupId/members",
      async ({ params, query, request, set, server }) => {
        // Counted first: a refused, a 304 or a 404 read costs the reader its budget as a page does.
        readers.admit(server?.requestIP(request)?.address ?? "unknown");
        const asked = membersRequestOf(query as MembersQuery);
        const group = await membersGroup(deps, pathParam(params.groupId));
        const etag = membersEtag(group);
        // Stored copies are checked first: the ETag changes with every change of the group.
        const cacheHeaders = (tag: string) => Object.assign(set.headers, { etag: tag, "cache-control": "no-cache" });
        // An unchanged group costs one row read.
        if (matchesEtag(request.headers.get("if-none-match"), etag)) {
          cacheHeaders(etag);
          set.status = 304;
          return null;
        }
        if (asked.since !== null && asked.since > group.version) throw invalidField("since", `must not be above the group's version ${group.version}`);
        const cached = pages.get(PageCache.key(group, asked));
        if (cached !== undefined) {
          cacheHeaders(etag);
          return new Response(cached, { headers: { "content-type": JSON_CONTENT_TYPE } });
        }
        const { group: at, page, consistent } = await readMembersPage(deps, group, asked);
        const text = JSON.stringify(page);
        if (consistent) pages.set(PageCache.key(at, asked), text);
        cacheHeaders(membersEtag(at));
        return new Response(text, { headers: { "content-type": JSON_CONTENT_TYPE } });
      },
      {
        detail: describe({
          operationId: "listGroupMembers",
          tag: "Groups",
          summary: "The group's leaves, or its changes since a version",
          public: true,
          params: GROUP,
          query: membersQuery,
          description:
            'Every leaf in leaf order ("0" for a removed member), paged (10,000 a page): read until next_offset is null, build the tree (new Group(members)) and check its root against merkle_tree_root; every page carries the group\'s version, and pages of different versions do not make one tree. With since=V: the leaves written after version V (added or removed) as compact binary records (docs/api.md, "Syncing a group"). Every answer has ETag "<version>-<root>"; If-None-Match with it answers 304 without a body. No API key: a member reads the whole tree and never says which leaf is its own. Reads are limited per client, an IPv4 address or an IPv6 /64, over a sliding minute (GROUP_MEMBERS_READS_PER_MINUTE; every request counts, 304s too).',
          ok: {
            status: 200,
            schema: t.Union([membersPage, membersChanges]),
            description: "A page of leaves, or of changes with since",
            headers: { ETag: true, "Cache-Control": true },
          },
          errors: ["invalid_request", "group_not_found", "members_rate_limited"],
        }),
      },
    )
    .get(
      "/v1/groups/:groupId/notes",
      async ({ params, query, request, server, set }) => {
        // The same readers' budget as the members route: a member syncing reads both; a 304 counts too.
        readers.admit(server?.requestIP(request)?.address ?? "unknown");
        const { etag, page } = await readNotes(deps, pathParam(params.groupId), (query as { offset?: string }).offset, request.headers.get("if-none-match"));
        Object.assign(set.headers, { etag, "cache-control": "no-cache" });
        if (page === null) {
          set.status = 304;
          return null;
        }
        return page;
      },
      {
        detail: describe({
          operationId: "listBudgetNotes",
          tag: "Groups",
          summary: "A budgeted group's notes and checkpoints",
          public: true,
          params: GROUP,
          query: notesQuery,
          description:
            'The note commitments of a budgeted group\'s spends in leaf order from offset (leaf 0 is the fixed genesis leaf T31({"tag":"zkagent/budget-notes/v1"}), never listed), pages of at most 1,000, and the newest BUDGET_CHECKPOINT_WINDOW checkpoints. ETag "<size>-<sequence of the newest checkpoint>", the same for every page of that state: If-None-Match with it answers 304 without a body. A spend names one of these checkpoints\' roots: the newest the member synced (docs/protocol.md, "Roots"). No API key, limited per client as the members route is (GROUP_MEMBERS_READS_PER_MINUTE, one budget for both).',
          ok: {
            status: 200,
            schema: notesPage,
            description: "A page of notes and the newest checkpoints",
            headers: { ETag: true, "Cache-Control": true },
          },
          errors: ["invalid_request", "group_not_found", "group_not_budgeted", "members_rate_limited"],
        }),
      },
    );
};

export const groups = (deps: ModuleDeps) => {
  const additions = new AdditionQueues();
  return new Elysia({ name: "groups" })
    .use(authentication(deps))
    .post(
      "/v1/groups",
      async ({ key, request, set }) => {
        const group = await createGroup(deps, key, validate(groupRequest, await readJsonObject(request), groupRefinements, groupExplanations));
        set.status = 201;
        return group;
      },
      {
        auth: true,
        parse: "none",
        detail: describe({
          operationId: "createGroup",
          tag: "Groups",
          summary: "Create a group",
          description:
            "A Semaphore v4 group, empty, owned by the calling key; group ids are unique across the service. Its optional mandate holds for each member separately (per pseudonym). challengers: the keys that may challenge it (absent or null: any key). A key owns at most GROUP_MAX_PER_KEY groups.",
          body: groupRequest,
          ok: { status: 201, schema: groupResponse, description: "Created" },
          errors: [...JSON_BODY_ERRORS, "group_exists", "too_many_groups"],
        }),
      },
    )
    .get("/v1/groups/:groupId", ({ key, params }) => readGroup(deps, key, pathParam(params.groupId)), {
      auth: true,
      detail: describe({
        operationId: "getGroup",
        tag: "Groups",
        summary: "Read a group",
        params: GROUP,
        description: "Any key may read a group: its size, root, depth and mandate (its challengers only the owner).",
        ok: { status: 200, schema: groupResponse, description: "The group" },
        errors: ["group_not_found"],
      }),
    })
    .patch(
      "/v1/groups/:groupId",
      async ({ key, request, params }) => {
        const body = await readJsonObject(request);
        // null is a value here (any key may challenge), not an absent field.
        if (!("challengers" in body)) throw missingFields(["challengers"]);
        const { challengers } = validate(groupUpdateRequest, body);
        return setChallengers(deps, key, pathParam(params.groupId), challengers ?? null);
      },
      {
        auth: true,
        parse: "none",
        detail: describe({
          operationId: "updateGroup",
          tag: "Groups",
          summary: "Set which keys may challenge the group",
          params: GROUP,
          description: "challengers: the API key ids that may ask this group for a proof (POST /v1/verify/challenge with group_id); null: any key. Owner only.",
          body: groupUpdateRequest,
          ok: { status: 200, schema: groupResponse, description: "The group" },
          errors: [...JSON_BODY_ERRORS, "group_not_found", "group_forbidden"],
        }),
      },
    )
    .post(
      "/v1/groups/:groupId/members",
      async ({ key, request, params, set }) => {
        const tree = await addMembers(deps, additions, key, pathParam(params.groupId), () => readMembers(request), String(set.headers[REQUEST_ID_HEADER]));
        set.status = 201;
        return tree;
      },
      {
        auth: true,
        parse: "none",
        detail: describe({
          operationId: "addGroupMembers",
          tag: "Groups",
          summary: "Add members",
          params: GROUP,
          description:
            "Appends 1–10,000 identity commitments in one transaction (this route takes bodies up to 1 MiB): each a decimal in [1, r), none already a member nor repeated; otherwise the 400 names the first by index and nothing is applied. A commitment removed from this group before is refused (409: enrol a new identity). The group holds at most GROUP_MAX_MEMBERS leaves; a key's additions run one at a time, at most GROUP_ADDITIONS_IN_FLIGHT waiting or running (429 with Retry-After past it). Owner only.",
          body: membersRequest,
          ok: { status: 201, schema: groupTreeResponse, description: "The tree after the change" },
          errors: [
            ...JSON_BODY_ERRORS,
            "group_not_found",
            "group_forbidden",
            "group_budgeted",
            "member_removed_before",
            "group_full",
            "group_additions_busy",
            "group_contended",
          ],
        }),
      },
    )
    .delete(
      "/v1/groups/:groupId/members/:identityCommitment",
      ({ key, params, set }) =>
        removeMember(deps, key, pathParam(params.groupId), pathParam(params.identityCommitment), String(set.headers[REQUEST_ID_HEADER])),
      {
        auth: true,
        parse: "none",
        detail: describe({
          operationId: "removeGroupMember",
          tag: "Groups",
          summary: "Remove a member",
          params: { ...GROUP, identityCommitment: "The member's identity commitment (decimal)" },
          description:
            "Its leaf becomes 0, as Semaphore removes. Once answered, no proof of the removed member verifies on any node (roots from before the removal are no longer acceptable). Owner only.",
          ok: { status: 200, schema: groupTreeResponse, description: "The tree after the change" },
          errors: ["group_not_found", "group_forbidden", "member_not_found", "group_contended"],
        }),
      },
    )
    .put(
      "/v1/groups/:groupId/mandate",
      async ({ key, request, params }) => putGroupMandate(deps, key, pathParam(params.groupId), await readJsonObject(request)),
      {
        auth: true,
        parse: "none",
        detail: describe({
          operationId: "setGroupMandate",
          tag: "Groups",
          summary: "Set the group's mandate",
          params: GROUP,
          description: "The mandate (docs/mandates.md) each member holds separately: its totals are kept per pseudonym, per platform key. Owner only.",
          body: mandateSchema,
          ok: { status: 200, schema: groupResponse, description: "The group" },
          errors: [...JSON_BODY_ERRORS, "group_not_found", "group_forbidden"],
        }),
      },
    )
    .delete("/v1/groups/:groupId/mandate", ({ key, params }) => deleteGroupMandate(deps, key, pathParam(params.groupId)), {
      auth: true,
      parse: "none",
      detail: describe({
        operationId: "removeGroupMandate",
        tag: "Groups",
        summary: "Remove the group's mandate",
        params: GROUP,
        ok: { status: 200, schema: groupResponse, description: "The group, without mandate" },
        errors: ["group_not_found", "group_forbidden"],
      }),
    });
};
