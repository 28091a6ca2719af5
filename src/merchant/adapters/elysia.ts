// The guard as an Elysia plugin: routes registered after `.use(zkagent(…))`
// receive `zkagent` (the verified session) in their context; a refused
// request is answered with the guard's Response before the handler runs.
//
//   new Elysia().use(zkagent({ url, apiKey, action: "purchase", context }))
//     .post("/orders", ({ zkagent }) => ({ agent: zkagent.agent_id }));
import { Elysia } from "elysia";
import { type GuardMode, type GuardOptions, zkagentGuard } from "../index";

export function zkagent<const M extends GuardMode = "zkagent" | "group">(options: GuardOptions<M>) {
  const guard = zkagentGuard(options);
  return new Elysia().resolve({ as: "scoped" }, async ({ request }) => {
    const result = await guard.verify(request);
    // A thrown Response is what Elysia sends as is: the handler never runs.
    if (!result.ok) throw result.response;
    return { zkagent: result.session };
  });
}
