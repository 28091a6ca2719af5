// GET /health, /ready and /metrics through app.handle, and what the request
// hooks record for the other routes.
import { beforeAll, describe, expect, test } from "bun:test";
import { PENDING_REFRESH_MS } from "../../src/modules/ops";
import { createHarness, type Harness } from "../support/harness";
import { samples } from "./exposition";

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await createHarness();
  key = await h.newKey();
});

const metrics = async () => {
  // Elysia runs onAfterResponse hooks after handing the response back (next
  // tick), as a server does once the bytes are out; a scrape comes later too.
  await Bun.sleep(1);
  const res = await h.call("GET", "/metrics");
  expect(res.status).toBe(200);
  return samples(res.body as string);
};

test("GET /health answers 200 without a key", async () => {
  const res = await h.call("GET", "/health");
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ status: "ok" });
});

test("GET /ready lists every check as ok", async () => {
  const res = await h.call("GET", "/ready");
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ status: "ready", checks: { database: "ok", verifier: "ok", draining: "ok" } });
});

describe("GET /metrics", () => {
  test("is Prometheus text 0.0.4", async () => {
    const res = await h.app.handle(new Request("http://zkagent.test/metrics"));
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(await res.text()).toContain("# TYPE zkagent_http_requests_total counter");
  });

  test("counts requests by route template, never by raw path", async () => {
    await h.call("GET", "/v1/agents/alpha", { key });
    await h.call("GET", "/v1/agents/beta", { key });
    await h.call("GET", "/v1/agents/gamma"); // no key → 401
    const s = await metrics();
    expect(s.get('zkagent_http_requests_total{method="GET",route="/v1/agents/:agentId",status="404"}')).toBe(2);
    expect(s.get('zkagent_http_requests_total{method="GET",route="/v1/agents/:agentId",status="401"}')).toBe(1);
    expect([...s.keys()].some((name) => name.includes("alpha") || name.includes("beta"))).toBe(false);
    expect(s.get('zkagent_http_request_duration_seconds_count{method="GET",route="/v1/agents/:agentId"}')).toBe(3);
  });

  test("paths that match no route share one series", async () => {
    for (const path of ["/nope-1", "/nope-2", "/v1/../etc/passwd"]) expect((await h.call("GET", path)).status).toBe(404);
    const s = await metrics();
    expect(s.get('zkagent_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(3);
  });

  test("records the status the client received, for errors raised in handlers", async () => {
    const res = await h.call("POST", "/v1/verify/challenge", { key, body: "{not json" });
    expect(res.status).toBe(400);
    const bad = await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "a" }, headers: { "content-type": "text/plain" } });
    expect(bad.status).toBe(415);
    const s = await metrics();
    expect(s.get('zkagent_http_requests_total{method="POST",route="/v1/verify/challenge",status="400"}')).toBe(1);
    expect(s.get('zkagent_http_requests_total{method="POST",route="/v1/verify/challenge",status="415"}')).toBe(1);
  });

  test("the pending-challenges gauge follows the store within its refresh interval", async () => {
    const before = (await metrics()).get("zkagent_challenges_pending")!;
    expect(before).toBe(await h.store.countPending(h.clock.now()));
    const res = await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "pending-1", action: "purchase" } });
    expect(res.status).toBe(200);
    // Counted at most every PENDING_REFRESH_MS (issue 11: no COUNT per scrape).
    expect((await metrics()).get("zkagent_challenges_pending")).toBe(before);
    h.clock.advance(PENDING_REFRESH_MS);
    expect((await metrics()).get("zkagent_challenges_pending")).toBe(before + 1);
    // Expired challenges are no longer pending.
    h.clock.advance(10 * 60_000);
    expect((await metrics()).get("zkagent_challenges_pending")).toBe(0);
  });
});

test("the operations endpoints are documented as public under Operations", async () => {
  const spec = (await h.call("GET", "/swagger/json")).body as any;
  for (const path of ["/health", "/ready"]) {
    const op = spec.paths[path].get;
    expect(op.tags).toEqual(["Operations"]);
    expect(op.security).toEqual([]);
  }
  // Public, unless the server sets METRICS_TOKEN.
  expect(spec.paths["/metrics"].get.tags).toEqual(["Operations"]);
  expect(spec.paths["/metrics"].get.security).toEqual([{}, { metricsToken: [] }]);
  expect(Object.keys(spec.paths["/ready"].get.responses).sort()).toEqual(["200", "500", "503"]);
});
