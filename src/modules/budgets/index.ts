// The enrolment route of budgeted groups (docs/api.md, "Budgeted groups"):
// the group's owner enrols a member with terms; the service computes the leaf.
import { Elysia } from "elysia";
import type { ModuleDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { readJsonObject } from "../../http/body";
import { describe, JSON_BODY_ERRORS } from "../../http/docs";
import { pathParam } from "../../http/params";
import { REQUEST_ID_HEADER } from "../../http/request-id";
import { validate } from "../../http/validate";
import { enrolmentExplanations, enrolmentRefinements, enrolmentRequest, enrolmentResponse } from "./model";
import { enrolMember } from "./service";

export const budgets = (deps: ModuleDeps) =>
  new Elysia({ name: "budgets" }).use(authentication(deps)).post(
    "/v1/groups/:groupId/enrolments",
    async ({ key, request, params, set }) => {
      const input = validate(enrolmentRequest, await readJsonObject(request), enrolmentRefinements, enrolmentExplanations);
      const enrolment = await enrolMember(deps, key, pathParam(params.groupId), input, String(set.headers[REQUEST_ID_HEADER]));
      set.status = 201;
      return enrolment;
    },
    {
      auth: true,
      parse: "none",
      detail: describe({
        operationId: "enrolBudgetMember",
        tag: "Groups",
        summary: "Enrol a member of a budgeted group with its terms",
        params: { groupId: "The group_id (a group created with budget: true)" },
        description:
          "The owner enrols an identity commitment with its terms: an AP2 v0.2 open payment mandate (ap2_mandate, signed by one of principal_keys, bound by its key-binding JWT to this group and identity) or zkagent mandate JSON (mandate). The service verifies the terms, computes the leaf H3(idc, T, salt) with a fresh salt and appends it; the answer carries what the member needs to spend (salt, terms, their packed form). A mandate is enrolled once across the service, ever; an identity once per group, ever (a removed member is not enrolled again). Revoke with DELETE /v1/groups/{groupId}/members/{leaf}. Owner only.",
        body: enrolmentRequest,
        ok: { status: 201, schema: enrolmentResponse, description: "Enrolled" },
        errors: [
          ...JSON_BODY_ERRORS,
          "group_not_found",
          "group_forbidden",
          "group_not_budgeted",
          "mandate_enrolled",
          "identity_enrolled",
          "group_full",
          "group_contended",
        ],
      }),
    },
  );
