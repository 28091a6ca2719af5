import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { readJsonObject } from "../../http/body";
import { describe, JSON_BODY_ERRORS } from "../../http/docs";
import { pathParam } from "../../http/params";
import { validate } from "../../http/validate";
import { agentExplanations, agentRefinements, agentRequest, agentResponse } from "./model";
import { getAgent, getAgentByKeyId, registerAgent, revokeAgent } from "./service";

export const agents = (deps: AppDeps) =>
  new Elysia({ name: "agents" })
    .use(authentication(deps))
    .post(
      "/v1/agents",
      async ({ key, request, set }) => {
        const agent = await registerAgent(deps, key, validate(agentRequest, await readJsonObject(request), agentRefinements, agentExplanations));
        set.status = 201;
        return agent;
      },
      {
        auth: true,
        parse: "none",
        detail: describe({
          operationId: "registerAgent",
          tag: "Agents",
          summary: "Register an agent",
          description:
            "Registers the identity commitment (and optionally an Ed25519 signing key) an agent proves against, under the calling key, with an optional mandate (required, and signed, when principal_key is given).",
          body: agentRequest,
          ok: { status: 201, schema: agentResponse, description: "Registered" },
          errors: [...JSON_BODY_ERRORS, "agent_exists", "mandate_signature_required", "mandate_superseded", "rate_limited", "too_many_agents"],
        }),
      },
    )
    .get("/v1/agents/:agentId", ({ key, params }) => getAgent(deps, key, pathParam(params.agentId)), {
      auth: true,
      detail: describe({
        operationId: "getAgent",
        tag: "Agents",
        summary: "Read an agent",
        params: { agentId: "The agent_id" },
        ok: { status: 200, schema: agentResponse, description: "The agent" },
        errors: ["agent_not_found"],
      }),
    })
    .get("/v1/signing-keys/:keyId", ({ key, params }) => getAgentByKeyId(deps, key, pathParam(params.keyId)), {
      auth: true,
      detail: describe({
        operationId: "getAgentByKeyId",
        tag: "Agents",
        summary: "Find an agent by its signing key's thumbprint",
        params: { keyId: "The RFC 7638 thumbprint (SHA-256, base64url) of the agent's Ed25519 signing_key: the keyid of a Web Bot Auth signature" },
        description:
          "The calling key's agent whose signing_key has this thumbprint, revoked or not (status says which): what a merchant's guard asks to admit a registered agent's Web Bot Auth signature without a key directory. Only the calling key's agents are searched. A signing key several of its agents share names none (404).",
        ok: { status: 200, schema: agentResponse, description: "The agent" },
        errors: ["agent_not_found"],
      }),
    })
    .delete("/v1/agents/:agentId", ({ key, params }) => revokeAgent(deps, key, pathParam(params.agentId)), {
      auth: true,
      // A body on DELETE means nothing here; it is never read.
      parse: "none",
      detail: describe({
        operationId: "revokeAgent",
        tag: "Agents",
        summary: "Revoke an agent",
        params: { agentId: "The agent_id" },
        description: "Its later proofs fail with reason agent_revoked. Registering the agent_id again afterwards sets a new commitment.",
        ok: { status: 200, schema: agentResponse, description: "The revoked agent" },
        errors: ["agent_not_found"],
      }),
    });
