// Operations endpoints: liveness, readiness, Prometheus metrics. Public (no
// API key): probes and scrapers carry none; none of them reveals tenant data.
import { Elysia, t } from "elysia";
import { describe } from "../../http/docs";
import { healthResponse, notReadyResponse, readyResponse } from "./model";
import { createHash, timingSafeEqual } from "node:crypto";
import { ApiError, METRICS_AUTH_CHALLENGE } from "../../errors";
import { cachedRead } from "../../observability/cached";
import type { AppDeps } from "../../deps";
import { Lifecycle, readiness } from "../../lifecycle";
import { Gauge, PROMETHEUS_CONTENT_TYPE } from "../../observability/registry";

/** How stale the pending gauge may be: one COUNT per interval, not one per scrape (issue 11). */
export const PENDING_REFRESH_MS = 15_000;

/** `Authorization: Bearer <token>` with the configured token, compared in constant time (by hash, so lengths agree). */
function bearerMatches(header: string | null, tokenHash: Buffer): boolean {
  const match = /^Bearer +(\S+)\s*$/i.exec(header ?? "");
  if (!match) return false;
  return timingSafeEqual(createHash("sha256").update(match[1]!).digest(), tokenHash);
}

const METRICS_EXAMPLE = `# HELP zkagent_http_requests_total HTTP requests answered, by method, route template and status.
# TYPE zkagent_http_requests_total counter
zkagent_http_requests_total{method="POST",route="/v1/verify/challenge",status="200"} 42
…`;

export const ops = (deps: AppDeps) => {
  // An app built without a lifecycle (tests) was given a constructed verifier, so it is loaded.
  const lifecycle = deps.lifecycle ?? Object.assign(new Lifecycle(), { verifierLoaded: true });
  // A COUNT over every key's pending rows: at most once per PENDING_REFRESH_MS, however often scraped.
  const pendingNow = cachedRead(() => deps.store.countPending(deps.clock.now()), deps.clock, PENDING_REFRESH_MS);
  const pending = new Gauge(
    "zkagent_challenges_pending",
    `Challenges issued and neither decided nor expired (counted at most every ${PENDING_REFRESH_MS / 1000} s).`,
    pendingNow,
  );
  // The age of the oldest webhook delivery still pending: how far behind the outbox is (0 when empty).
  const oldestPending = cachedRead(
    async () => {
      const at = await deps.store.oldestPendingWebhook();
      return at === null ? 0 : Math.max(0, (deps.clock.now() - at) / 1000);
    },
    deps.clock,
    PENDING_REFRESH_MS,
  );
  const webhookLag = new Gauge(
    "zkagent_webhook_oldest_pending_seconds",
    `Age in seconds of the oldest webhook delivery not yet delivered or failed, 0 when none (read at most every ${PENDING_REFRESH_MS / 1000} s).`,
    oldestPending,
  );
  const metricsToken = deps.metricsToken ? createHash("sha256").update(deps.metricsToken).digest() : undefined;

  return new Elysia({ name: "ops" })
    .get("/health", () => ({ status: "ok" as const }), {
      detail: describe({
        operationId: "health",
        tag: "Operations",
        summary: "Liveness: the process answers",
        description: "200 while the process runs; checks nothing else, so a slow database never gets the process restarted.",
        public: true,
        noStore: true,
        ok: { status: 200, schema: healthResponse, description: "Alive" },
        errors: [],
      }),
    })
    .get(
      "/ready",
      async ({ set }) => {
        const result = await readiness(deps.store, deps.verifier, lifecycle);
        if (result.ready) return { status: "ready" as const, checks: result.checks };
        set.status = 503;
        return { status: "not_ready" as const, failing: result.failing!, checks: result.checks };
      },
      {
        detail: describe({
          operationId: "ready",
          tag: "Operations",
          summary: "Readiness: database reachable, verifier loaded, not draining",
          description: "503 names the first failing check. Reports not ready from the moment shutdown (SIGTERM) begins.",
          public: true,
          // A database that does not answer is the 503 NotReady, not an error.
          noStore: true,
          ok: { status: 200, schema: readyResponse, description: "Ready" },
          other: { 503: { description: "Not ready: the first failing check", schema: notReadyResponse } },
          errors: [],
        }),
      },
    )
    .get(
      "/metrics",
      async ({ request }) => {
        if (metricsToken && !bearerMatches(request.headers.get("authorization"), metricsToken)) {
          throw new ApiError("metrics_unauthorized", {}, { wwwAuthenticate: METRICS_AUTH_CHALLENGE });
        }
        const text = deps.metrics ? await deps.metrics.render([pending, webhookLag]) : `${await pending.collect()}\n`;
        return new Response(text, { headers: { "content-type": PROMETHEUS_CONTENT_TYPE } });
      },
      {
        detail: {
          ...describe({
            operationId: "metrics",
            tag: "Operations",
            summary: "Prometheus metrics",
            description:
              "Text exposition format 0.0.4: requests by route template and status, request latency, verifications by result and reason, verification time, pending challenges. When the server has METRICS_TOKEN, send it as Authorization: Bearer <token> (else 401).",
            public: true,
            ok: { status: 200, schema: t.String({ examples: [METRICS_EXAMPLE] }), description: "Metrics", mediaType: "text/plain" },
            errors: ["metrics_unauthorized"],
          }),
          // Public unless the server sets METRICS_TOKEN: then the bearer token.
          security: [{}, { metricsToken: [] }],
        },
      },
    );
};
