// The guard as Hono middleware: a refused request gets the guard's Response;
// a verified one reaches the handler with c.get("zkagent") = the session
// (a SignatureSession for a signed agent when the route accepts "web-bot-auth").
//
//   app.post("/orders", zkagent({ url, apiKey, action: "purchase", context }), (c) => {
//     const { agent_id, context } = c.get("zkagent");
//   });
import type { MiddlewareHandler } from "hono";
import { type GuardMode, type GuardOptions, type SessionOf, type VerifiedSession, zkagentGuard } from "../index";

export type ZkAgentEnv<S = VerifiedSession> = { Variables: { zkagent: S } };

export function zkagent<const M extends GuardMode = "zkagent" | "group">(options: GuardOptions<M>): MiddlewareHandler<ZkAgentEnv<SessionOf<M>>> {
  const guard = zkagentGuard(options);
  return async (c, next) => {
    const result = await guard.verify(c.req.raw);
    if (!result.ok) return result.response;
    c.set("zkagent", result.session);
    await next();
  };
}
