import { Elysia, t } from "elysia";
import type { AppDeps } from "../../deps";
import { describe } from "../../http/docs";
import { readJsonObject } from "../../http/body";
import { authenticate } from "../keys/service";
import { agentRequest, agentResponse, parseAgentRequest } from "./model";
import { getAgent, registerAgent, revokeAgent } from "./service";

const params = t.Object({ agentId: t.String() });

export const agents = (deps: AppDeps) =>
  new Elysia({ name: "agents" })
    .post(
      "/v1/agents",
      async ({ request, set }) => {
        const key = await authenticate(deps.store, request.headers.get("x-api-key"));
        const agent = await registerAgent(deps, key, parseAgentRequest(await readJsonObject(request)));
        set.status = 201;
        return agent;
      },
      {
        parse: "none",
        detail: describe({
          tag: "Agents",
          summary: "Register an agent",
          description: "Registers the identity commitment (and optionally an Ed25519 signing key) an agent proves against, under the calling key.",
          body: agentRequest,
          ok: { status: 201, schema: agentResponse, description: "Registered" },
          errors: { 400: "Missing or invalid fields", 401: "Missing API key", 403: "Invalid API key", 409: "Agent already registered", 415: "Content-Type is not application/json" },
        }),
      },
    )
    .get(
      "/v1/agents/:agentId",
      async ({ request, params }) => getAgent(deps, await authenticate(deps.store, request.headers.get("x-api-key")), params.agentId),
      {
        params,
        detail: describe({
          tag: "Agents",
          summary: "Read an agent",
          ok: { status: 200, schema: agentResponse, description: "The agent" },
          errors: { 401: "Missing API key", 403: "Invalid API key", 404: "Agent not found" },
        }),
      },
    )
    .delete(
      "/v1/agents/:agentId",
      async ({ request, params }) => revokeAgent(deps, await authenticate(deps.store, request.headers.get("x-api-key")), params.agentId),
      {
        params,
        detail: describe({
          tag: "Agents",
          summary: "Revoke an agent",
          description: "Its later proofs fail with reason agent_revoked. Registering the agent_id again afterwards sets a new commitment.",
          ok: { status: 200, schema: agentResponse, description: "The revoked agent" },
          errors: { 401: "Missing API key", 403: "Invalid API key", 404: "Agent not found" },
        }),
      },
    );
