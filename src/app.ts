// createApp(deps): the whole HTTP surface, with one error handler. It never
// listens; main.ts does, and tests call app.handle(new Request(…)).
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import { randomUUID } from "node:crypto";
import type { AppDeps } from "./deps";
import { ApiError } from "./errors";
import { SWAGGER_BUNDLE_PATH, SWAGGER_CSS_PATH, swaggerAssets } from "./http/swagger-assets";
import { agents } from "./modules/agents";
import { challenges } from "./modules/challenges";
import { keys } from "./modules/keys";
import { ops } from "./modules/ops";
import { proofs } from "./modules/proofs";
import { status } from "./modules/status";
import pkg from "../package.json";

const json = (status: number, body: unknown, headers: Record<string, string>) =>
  new Response(JSON.stringify(body), { status, headers: { ...headers, "content-type": "application/json; charset=utf-8" } });

export function createApp(deps: AppDeps) {
  return new Elysia()
    .onRequest(({ set }) => {
      set.headers["x-request-id"] = randomUUID();
    })
    .onError(({ error, code, set, request }) => {
      const requestId = String(set.headers["x-request-id"] ?? randomUUID());
      const headers = { "x-request-id": requestId };
      if (error instanceof ApiError) return json(error.status, error.body, { ...headers, ...error.headers });
      if (code === "NOT_FOUND") return json(404, { error: "Not found", message: `No route ${request.method} ${new URL(request.url).pathname}` }, headers);
      if (code === "VALIDATION" || code === "PARSE") return json(400, { error: "Invalid request" }, headers);
      deps.logger.error("unhandled error", { request_id: requestId, error: error instanceof Error ? error.stack : String(error) });
      return json(500, { error: "Internal server error", request_id: requestId }, headers);
    })
    .use(
      openapi({
        path: "/swagger",
        provider: "swagger-ui",
        exclude: { paths: [SWAGGER_BUNDLE_PATH, SWAGGER_CSS_PATH] },
        swagger: { cdn: SWAGGER_BUNDLE_PATH, theme: SWAGGER_CSS_PATH, persistAuthorization: true },
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
            { name: "Operations", description: "Liveness and readiness" },
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
