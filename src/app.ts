// createApp(deps): the whole HTTP surface, with one error handler. It never
// listens; main.ts does, and tests call app.handle(new Request(…)).
import { Elysia } from "elysia";
import type { AppDeps, ModuleDeps } from "./deps";
import { handleError } from "./http/errors";
import { observe } from "./http/observe";
import { apiDocs } from "./http/openapi";
import { swaggerAssets } from "./http/swagger-assets";
import { agents } from "./modules/agents";
import { challenges } from "./modules/challenges";
import { budgets } from "./modules/budgets";
import { groupMembersPublic, groups } from "./modules/groups";
import { GroupTrees } from "./groups/cache";
import { keys } from "./modules/keys";
import { mandates } from "./modules/mandates";
import { ops } from "./modules/ops";
import { proofs } from "./modules/proofs";
import { circuits } from "./modules/circuits";
import { receipts } from "./modules/receipts";
import { status } from "./modules/status";
import { webhooks } from "./modules/webhooks";
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
    groups: appDeps.groups ?? new GroupTrees(),
    circuits: appDeps.circuits ?? new CircuitRegistry(appDeps.store, { shipped: appDeps.verifier, verifierFor: (vk) => serviceVerifier(vk) }),
  };
  const app = new Elysia()
    // Request id (incoming x-request-id if sane, else new), log context, request log and metrics.
    .use(observe(deps))
    // Every error, from a route or from routing itself, becomes a catalogue response (src/http/errors.ts).
    .onError(handleError(deps))
    .use(swaggerAssets)
    .use(ops(deps))
    .use(challenges(deps))
    .use(proofs(deps))
    .use(status(deps))
    .use(receipts(deps))
    .use(circuits(deps))
    .use(agents(deps))
    .use(mandates(deps))
    .use(groupMembersPublic(deps))
    .use(groups(deps))
    .use(budgets(deps))
    .use(keys(deps))
    .use(webhooks(deps));
  // The OpenAPI document of every route above, from their own descriptions (src/http/openapi.ts), and Swagger UI.
  return app.use(apiDocs({ routes: () => app.routes, publicUrl: deps.publicUrl, version: pkg.version }));
}

export type App = ReturnType<typeof createApp>;
