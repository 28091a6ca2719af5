import { Elysia, t } from "elysia";
import type { AppDeps } from "../../deps";
import { describe } from "../../http/docs";
import { authenticate } from "../keys/service";
import { statusResponse } from "./model";
import { readSession } from "./service";

export const status = (deps: AppDeps) =>
  new Elysia({ name: "status" }).get(
    "/v1/verify/status/:sessionId",
    async ({ request, params }) => {
      const key = await authenticate(deps.store, request.headers.get("x-api-key"));
      return readSession(deps, key, params.sessionId);
    },
    {
      params: t.Object({ sessionId: t.String({ description: "The challenge_id" }) }),
      detail: describe({
        tag: "Verification",
        summary: "Check a session's status",
        ok: { status: 200, schema: statusResponse, description: "The session" },
        errors: { 401: "Missing API key", 403: "Invalid API key, or the session belongs to another key", 404: "Session not found" },
      }),
    },
  );
