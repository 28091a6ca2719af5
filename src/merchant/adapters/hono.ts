// The guard as Hono middleware: a refused request gets the guard's Response;
// a verified one reaches the handler with c.get("zkagent") = the session.
//
//   app.post("/orders", zkagent({ url, apiKey, action: "purchase", context }), (c) => {
//     const { agent_id, context } = c.get("zkagent");
//   });
import type { MiddlewareHandler } from "hono";
import { type GuardOptions, type VerifiedSession, zkagentGuard } from "../index";

export type ZkAgentEnv = { Variables: { zkagent: VerifiedSession } };

export function zkagent(options: GuardOptions): MiddlewareHandler<ZkAgentEnv> {
  const guard = zkagentGuard(options);
  return async (c, next) => {
    const result = await guard.verify(c.req.raw);
    if (!result.ok) return result.response;
    c.set("zkagent", result.session);
    await next();
  };
}
