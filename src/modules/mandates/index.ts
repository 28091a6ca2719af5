import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { readJsonObject } from "../../http/body";
import { describe, JSON_BODY_ERRORS } from "../../http/docs";
import { pathParam } from "../../http/params";
import { mandateRequest, mandateResponse } from "./model";
import { deleteMandate, putMandate } from "./service";

export const mandates = (deps: AppDeps) =>
  new Elysia({ name: "mandates" })
    .use(authentication(deps))
    .put(
      "/v1/agents/:agentId/mandate",
      // The body is the mandate itself; putMandate validates it by the mandate schema and, for an agent with a principal, the JWS.
      async ({ key, request, params }) => putMandate(deps, key, pathParam(params.agentId), await readJsonObject(request)),
      {
        auth: true,
        parse: "none",
        detail: describe({
          operationId: "setMandate",
          tag: "Agents",
          summary: "Set the agent's mandate",
          params: { agentId: "The agent_id" },
          description:
            'Replaces the agent\'s mandate: actions, merchants, validity and limits per day, week or month, enforced at verification (docs/mandates.md). An agent with a principal_key takes only {"mandate_jws"}, signed by its principal and issued after the stored one. The period totals so far are kept.',
          body: mandateRequest,
          ok: { status: 200, schema: mandateResponse, description: "The stored mandate, with the current period's spend" },
          errors: [...JSON_BODY_ERRORS, "agent_not_found", "agent_revoked", "mandate_superseded", "mandate_signature_required"],
        }),
      },
    )
    .delete("/v1/agents/:agentId/mandate", ({ key, params }) => deleteMandate(deps, key, pathParam(params.agentId)), {
      auth: true,
      parse: "none",
      detail: describe({
        operationId: "removeMandate",
        tag: "Agents",
        summary: "Remove the agent's mandate",
        params: { agentId: "The agent_id" },
        description: "The agent is unconstrained again. Refused for an agent with a principal_key: its principal signs a new mandate instead.",
        ok: { status: 200, schema: mandateResponse, description: "The agent, without mandate" },
        errors: ["agent_not_found", "agent_revoked", "mandate_signature_required"],
      }),
    });
