// createApp(deps): the whole HTTP surface, with one error handler. It never
// listens; main.ts does, and tests call app.handle(new Request(…)).
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import { randomUUID } from "node:crypto";
import type { AppDeps } from "./deps";
import { ApiError } from "./errors";
import { authenticate } from "./modules/keys/service";
import { SWAGGER_BUNDLE_PATH, SWAGGER_CSS_PATH, swaggerAssets } from "./http/swagger-assets";
import { agents } from "./modules/agents";
import { challenges } from "./modules/challenges";
import { keys } from "./modules/keys";
import { ops } from "./modules/ops";
import { createMetrics } from "./modules/ops/metrics";
import { observe } from "./modules/ops/observe";
import { proofs } from "./modules/proofs";
import { status } from "./modules/status";
import pkg from "../package.json";

const reply = (status: number, body: unknown, headers: Record<string, string>) =>
  new Response(JSON.stringify(body), { status, headers: { ...headers, "content-type": "application/json; charset=utf-8" } });

export function createApp(appDeps: AppDeps) {
  const deps: AppDeps = { ...appDeps, metrics: appDeps.metrics ?? createMetrics({ version: pkg.version }) };
  return new Elysia()
    // Request id (incoming x-request-id if sane, else new), log context, request log and metrics.
    .use(observe(deps))
    .onError(({ error, code, set, request }) => {
      const requestId = String(set.headers["x-request-id"] ?? randomUUID());
      const headers = { "x-request-id": requestId };
      // set.status is what the request log and metrics record (see ops/observe.ts).
      const json = (status: number, body: unknown, extra: Record<string, string>) => ((set.status = status), reply(status, body, extra));
      if (error instanceof ApiError) return json(error.status, error.body, { ...headers, ...error.headers });
      if (code === "NOT_FOUND") return json(404, { error: "Not found", message: `No route ${request.method} ${new URL(request.url).pathname}` }, headers);
      if (code === "VALIDATION" || code === "PARSE") {
        // Routes parse their own bodies, so this is a path parameter that does
        // not decode (a stray "%"). Such an id names nothing: answer as for an
        // unknown one, after authentication, in the interface's order.
        return authenticate(deps.store, request.headers.get("x-api-key")).then(
          () => {
            const notFound = new URL(request.url).pathname.startsWith("/v1/agents/") ? new ApiError("agent_not_found") : new ApiError("session_not_found");
            return json(notFound.status, notFound.body, headers);
          },
          (denied: ApiError) => json(denied.status, denied.body, headers),
        );
      }
      deps.logger.error("unhandled error", { request_id: requestId, error: error instanceof Error ? error.stack : String(error) });
      return json(500, { error: "Internal server error", request_id: requestId }, headers);
    })
    .use(
      openapi({
        path: "/swagger",
        provider: "swagger-ui",
        exclude: { paths: [SWAGGER_BUNDLE_PATH, SWAGGER_CSS_PATH] },
        // validatorUrl "none": the online validator badge (an image from validator.swagger.io) stays off
        // explicitly; Swagger UI 5 hides it for OpenAPI 3 today, but the UI must never contact another host.
        swagger: { cdn: SWAGGER_BUNDLE_PATH, theme: SWAGGER_CSS_PATH, persistAuthorization: true, validatorUrl: "none" },
        documentation: {
          info: {
            title: "zkagent",
            version: pkg.version,
            description:
              "Zero-knowledge identity verification for AI agents: request a one-time challenge, submit the agent's Groth16 proof, read the session's status. Authorize with an API key (X-Api-Key).",
          },
          tags: [
            { name: "Verification", description: "The challenge → proof → status flow" },
            { name: "Agents", description: "Identity commitments the agents prove against" },
            { name: "Keys", description: "The calling API key" },
            { name: "Operations", description: "Liveness, readiness and Prometheus metrics" },
          ],
          components: { securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "X-Api-Key" } } },
        },
      }),
    )
    .use(swaggerAssets)
    .use(ops(deps))
    .use(challenges(deps))
    .use(proofs(deps))
    .use(status(deps))
    .use(agents(deps))
    .use(keys(deps));
}

export type App = ReturnType<typeof createApp>;
