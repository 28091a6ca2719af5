// Per-request observation: assigns the request id (header + log context),
// then, once the response is out, writes one log line and records the
// request in the metrics. Mounted first in app.ts so it sees every request,
// including those that match no route or fail.
import { Elysia } from "elysia";
import type { Logger } from "../log";
import { requestContext } from "../log";
import type { Metrics } from "../observability/metrics";
import { UNMATCHED_ROUTE } from "../observability/metrics";
import { REQUEST_ID_HEADER, requestIdFor } from "./request-id";

// Probes and scrapes arrive every few seconds; at info they would drown the log.
const QUIET_ROUTES = new Set(["/health", "/ready", "/metrics"]);
const CLIENT_CLOSED_REQUEST = 499;

/**
 * The final status. A handler may return a Response (its status wins);
 * otherwise `set.status`, which the error handler (errors.ts) sets to the status it
 * answers with (Elysia leaves it at 200 for NOT_FOUND and at 422 for
 * validation errors, neither of which is what the client receives).
 */
export function finalStatus(set: { status?: number | string }, response: unknown): number {
  if (response instanceof Response) return response.status;
  return typeof set.status === "number" ? set.status : Number(set.status) || 200;
}

export const observe = (deps: { logger: Logger; metrics?: Metrics }) => {
  const started = new WeakMap<Request, number>();
  return new Elysia({ name: "observe" })
    .onRequest(({ request, set }) => {
      const requestId = requestIdFor(request);
      set.headers[REQUEST_ID_HEADER] = requestId;
      // enterWith, not run(): Elysia calls this hook and then the handler in
      // the same async chain, so the context follows the handler's awaits.
      requestContext.enterWith({ requestId });
      started.set(request, performance.now());
    })
    .onAfterResponse({ as: "global" }, ({ request, route, set, responseValue }) => {
      const ms = performance.now() - (started.get(request) ?? performance.now());
      const status = finalStatus(set, responseValue);
      const template = route || UNMATCHED_ROUTE;
      deps.metrics?.request(request.method, template, status, ms);
      const fields = { method: request.method, route: template, path: new URL(request.url).pathname, status, duration_ms: Math.round(ms * 100) / 100 };
      // 499: the client left mid-request (src/http/body.ts); nothing went wrong here worth more than debug.
      if ((QUIET_ROUTES.has(template) && status < 500) || status === CLIENT_CLOSED_REQUEST) deps.logger.debug("request", fields);
      else deps.logger.info("request", fields);
    });
};
