import { Elysia, t } from "elysia";
import type { AppDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { describe } from "../../http/docs";
import { usageView } from "./service";

const usageResponse = t.Object({
  key_id: t.String(),
  name: t.String(),
  challenges: t.Number({ description: "Successful challenge requests" }),
  verifications: t.Object({ verified: t.Number(), failed: t.Number() }),
  rate_limit_per_minute: t.Number({ description: "0 means unlimited" }),
});

export const keys = (deps: AppDeps) =>
  new Elysia({ name: "keys" }).use(authentication(deps)).get("/v1/usage", async ({ key }) => usageView(key, (await deps.store.usage(key.id))!), {
    auth: true,
    detail: describe({
      tag: "Keys",
      summary: "Usage of the calling key",
      ok: { status: 200, schema: usageResponse, description: "Counters of the calling key" },
      errors: {},
    }),
  });
