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
        tag: "Verification",
        summary: "Check a session's status",
        ok: { status: 200, schema: statusResponse, description: "The session" },
        errors: { 403: "Invalid API key, or the session belongs to another key", 404: "Session not found" },
      }),
    });
