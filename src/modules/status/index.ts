import { Elysia } from "elysia";
import type { ModuleDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { describe } from "../../http/docs";
import { pathParam } from "../../http/params";
import { statusResponse } from "./model";
import { readSession } from "./service";

export const status = (deps: ModuleDeps) =>
  new Elysia({ name: "status" })
    .use(authentication(deps))
    .get("/v1/verify/status/:sessionId", ({ key, params }) => readSession(deps, key, pathParam(params.sessionId)), {
      auth: true,
      detail: describe({
        operationId: "readSession",
        tag: "Verification",
        summary: "Check a session's status",
        params: { sessionId: "The challenge_id" },
        ok: { status: 200, schema: statusResponse, description: "The session" },
        errors: ["unauthorized_session", "session_not_found"],
      }),
    });
