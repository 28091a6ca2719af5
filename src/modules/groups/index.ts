// The group routes (docs/api.md, "Groups"). Reading a group takes any key;
// changing it only the key that created it; its members need no key at all
// (agents hold none, and reading every leaf tells nobody which is theirs).
import { Elysia } from "elysia";
import type { ModuleDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { readJsonObject } from "../../http/body";
import { describe, JSON_BODY_ERRORS } from "../../http/docs";
import { pathParam } from "../../http/params";
import { validate } from "../../http/validate";
import { mandateSchema } from "../../mandates/schema";
import {
  groupExplanations,
  groupRefinements,
  groupRequest,
  groupResponse,
  groupTreeResponse,
  MEMBERS_BODY_LIMIT_BYTES,
  membersExplanations,
  membersPage,
  membersQuery,
  membersRefinements,
  membersRequest,
} from "./model";
import { addMembers, createGroup, deleteGroupMandate, listMembers, putGroupMandate, readGroup, removeMember } from "./service";

const GROUP = { groupId: "The group_id" };

export const groupMembersPublic = (deps: ModuleDeps) =>
  new Elysia({ name: "group-members" }).get(
    "/v1/groups/:groupId/members",
    ({ params, query }) => listMembers(deps, pathParam(params.groupId), query as { offset?: string; limit?: string }),
    {
      detail: describe({
        operationId: "listGroupMembers",
        tag: "Groups",
        summary: "The group's leaves",
        public: true,
        params: GROUP,
        query: membersQuery,
        description:
          'Every leaf in leaf order ("0" for a removed member), paged: read until next_offset is null, build the tree (new Group(members)) and check its root against merkle_tree_root. No API key: a member reads the whole tree and never says which leaf is its own.',
        ok: { status: 200, schema: membersPage, description: "A page of leaves" },
        errors: ["invalid_request", "group_not_found"],
      }),
    },
  );

export const groups = (deps: ModuleDeps) =>
  new Elysia({ name: "groups" })
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
            "A Semaphore v4 group, empty, owned by the calling key; group ids are unique across the service. Its optional mandate holds for each member separately (per pseudonym).",
          body: groupRequest,
          ok: { status: 201, schema: groupResponse, description: "Created" },
          errors: [...JSON_BODY_ERRORS, "group_exists"],
        }),
      },
    )
    .get("/v1/groups/:groupId", ({ params }) => readGroup(deps, pathParam(params.groupId)), {
      auth: true,
      detail: describe({
        operationId: "getGroup",
        tag: "Groups",
        summary: "Read a group",
        params: GROUP,
        description: "Any key may read a group: its size, root, depth and mandate.",
        ok: { status: 200, schema: groupResponse, description: "The group" },
        errors: ["group_not_found"],
      }),
    })
    .post(
      "/v1/groups/:groupId/members",
      async ({ key, request, params, set }) => {
        const input = validate(membersRequest, await readJsonObject(request, MEMBERS_BODY_LIMIT_BYTES), membersRefinements, membersExplanations);
        const tree = await addMembers(deps, key, pathParam(params.groupId), input.identity_commitments);
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
            "Appends 1–10,000 identity commitments in one transaction (this route takes bodies up to 1 MiB): each a decimal in [1, r), none already a member nor repeated; otherwise the 400 names the first by index and nothing is applied. Owner only.",
          body: membersRequest,
          ok: { status: 201, schema: groupTreeResponse, description: "The tree after the change" },
          errors: [...JSON_BODY_ERRORS, "group_not_found", "group_forbidden"],
        }),
      },
    )
    .delete(
      "/v1/groups/:groupId/members/:identityCommitment",
      ({ key, params }) => removeMember(deps, key, pathParam(params.groupId), pathParam(params.identityCommitment)),
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
          errors: ["group_not_found", "group_forbidden", "member_not_found"],
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
