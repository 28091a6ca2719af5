import { Elysia, t } from "elysia";
import type { AppDeps } from "../../deps";

export const ops = (deps: AppDeps) =>
  new Elysia({ name: "ops" })
    .get("/health", () => ({ status: "ok" }), {
      detail: { tags: ["Operations"], summary: "Liveness: the process answers", security: [] },
      response: t.Object({ status: t.String() }),
    })
    .get(
      "/ready",
      async ({ set }) => {
        try {
          await deps.store.ping();
          return { status: "ready" };
        } catch {
          set.status = 503;
          return { status: "not_ready", reason: "database unreachable" };
        }
      },
      { detail: { tags: ["Operations"], summary: "Readiness: the database answers", security: [] } },
    );
