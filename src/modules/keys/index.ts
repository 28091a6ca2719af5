import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { describe } from "../../http/docs";
import { usageResponse } from "./model";
import { usageView } from "./service";

export const keys = (deps: AppDeps) =>
  new Elysia({ name: "keys" }).use(authentication(deps)).get("/v1/usage", async ({ key }) => usageView(key, (await deps.store.usage(key.id))!), {
    auth: true,
    detail: describe({
      operationId: "readUsage",
      tag: "Keys",
      summary: "Usage of the calling key",
      ok: { status: 200, schema: usageResponse, description: "Counters of the calling key" },
      errors: [],
    }),
  });
