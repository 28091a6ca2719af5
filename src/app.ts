// createApp(deps): the whole HTTP surface, with one error handler. It never
// listens; main.ts does, and tests call app.handle(new Request(…)).
import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import type { AppDeps, ModuleDeps } from "./deps";
import { handleError } from "./http/errors";
import { observe } from "./http/observe";
import { SWAGGER_BUNDLE_PATH, SWAGGER_CSS_PATH, swaggerAssets } from "./http/swagger-assets";
import { agents } from "./modules/agents";
import { challenges } from "./modules/challenges";
import { keys } from "./modules/keys";
import { mandates } from "./modules/mandates";
import { ops } from "./modules/ops";
import { proofs } from "./modules/proofs";
import { circuits } from "./modules/circuits";
import { receipts } from "./modules/receipts";
import { status } from "./modules/status";
import { createMetrics } from "./observability/metrics";
import { ReceiptSigner } from "./receipts/signer";
import { CircuitRegistry } from "./circuits/registry";
import { serviceVerifier } from "./verifier/service";
import pkg from "../package.json";

/** The receipts' `iss` of an app built without receipts (tests); main.ts passes PUBLIC_URL or the listen address. */
const DEFAULT_ISSUER = "http://localhost";

export function createApp(appDeps: AppDeps) {
  const deps: ModuleDeps = {
    ...appDeps,
    metrics: appDeps.metrics ?? createMetrics({ version: pkg.version }),
    receipts: appDeps.receipts ?? { signer: new ReceiptSigner(appDeps.store), issuer: DEFAULT_ISSUER },
    circuits: appDeps.circuits ?? new CircuitRegistry(appDeps.store, { shipped: appDeps.verifier, verifierFor: (vk) => serviceVerifier(vk) }),
  };
  return (
    new Elysia()
      // Request id (incoming x-request-id if sane, else new), log context, request log and metrics.
      .use(observe(deps))
      // Every error, from a route or from routing itself, becomes a catalogue response (src/http/errors.ts).
      .onError(handleError(deps))
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
              { name: "Circuits", description: "Circuit versions and the artifacts agents prove with (public)" },
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
      .use(receipts(deps))
      .use(circuits(deps))
      .use(agents(deps))
      .use(mandates(deps))
      .use(keys(deps))
  );
}

export type App = ReturnType<typeof createApp>;
