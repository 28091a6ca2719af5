// The Prometheus registry against the text exposition format 0.0.4.
import { describe, expect, test } from "bun:test";
import { createMetrics, REQUEST_BUCKETS } from "../../src/observability/metrics";
import { Counter, Gauge, Histogram } from "../../src/observability/registry";
import { samples } from "./exposition";

describe("Counter", () => {
  test("counts per label set and renders HELP, TYPE and one line per series", () => {
    const c = new Counter("x_total", "Things.", ["route", "status"]);
    c.inc({ route: "/a", status: "200" });
    c.inc({ route: "/a", status: "200" });
    c.inc({ route: "/a", status: "404" }, 3);
    expect(c.get({ route: "/a", status: "200" })).toBe(2);
    expect(c.render()).toBe(
      ["# HELP x_total Things.", "# TYPE x_total counter", 'x_total{route="/a",status="200"} 2', 'x_total{route="/a",status="404"} 3'].join("\n"),
    );
  });

  test("escapes backslash, quote and newline in label values", () => {
    const c = new Counter("y_total", "Y.", ["v"]);
    c.inc({ v: 'a"b\\c\nd' });
    expect(c.render().split("\n")[2]).toBe('y_total{v="a\\"b\\\\c\\nd"} 1');
  });

  test("a missing label is a programming error, not a silent new series", () => {
    const c = new Counter("z_total", "Z.", ["route"]);
    expect(() => c.inc({})).toThrow(/label "route" missing/);
  });
});

describe("Histogram", () => {
  test("buckets are cumulative, +Inf equals count, sum adds the values", () => {
    const h = new Histogram("d_seconds", "D.", ["route"], [0.1, 1]);
    for (const v of [0.05, 0.1, 0.5, 2]) h.observe({ route: "/a" }, v);
    const s = samples(h.render());
    expect(s.get('d_seconds_bucket{route="/a",le="0.1"}')).toBe(2); // 0.1 is inclusive (le)
    expect(s.get('d_seconds_bucket{route="/a",le="1"}')).toBe(3);
    expect(s.get('d_seconds_bucket{route="/a",le="+Inf"}')).toBe(4);
    expect(s.get('d_seconds_count{route="/a"}')).toBe(4);
    expect(s.get('d_seconds_sum{route="/a"}')).toBeCloseTo(2.65, 10);
  });

  test("rejects buckets that do not ascend", () => {
    expect(() => new Histogram("h", "H.", [], [1, 1])).toThrow(/ascend/);
  });
});

test("a Gauge reads its value at collection time", async () => {
  let value = 1;
  const g = new Gauge("g", "G.", async () => value);
  value = 7;
  expect(await g.collect()).toBe("# HELP g G.\n# TYPE g gauge\ng 7");
});

describe("createMetrics", () => {
  test("request latency is recorded in seconds, unknown methods collapse to OTHER", async () => {
    const m = createMetrics({ version: "1.2.3" });
    m.request("GET", "/health", 200, 3); // 3 ms
    m.request("BREW", "/health", 404, 1);
    const s = samples(await m.render());
    expect(s.get('zkagent_http_requests_total{method="GET",route="/health",status="200"}')).toBe(1);
    expect(s.get('zkagent_http_requests_total{method="OTHER",route="/health",status="404"}')).toBe(1);
    expect(s.get('zkagent_http_request_duration_seconds_bucket{method="GET",route="/health",le="0.001"}')).toBe(0);
    expect(s.get('zkagent_http_request_duration_seconds_bucket{method="GET",route="/health",le="0.005"}')).toBe(1);
    expect(s.get('zkagent_http_request_duration_seconds_sum{method="GET",route="/health"}')).toBeCloseTo(0.003, 10);
    expect(s.get('zkagent_build_info{version="1.2.3"}')).toBe(1);
    expect(REQUEST_BUCKETS[0]).toBe(0.001);
  });

  test("verifier runs by batch size: singles in le=1, batches in their bucket, sum = proofs", async () => {
    const m = createMetrics();
    for (const size of [1, 1, 3, 32, 17]) m.verificationRun(size);
    const s = samples(await m.render());
    expect(s.get('zkagent_verification_batch_size_bucket{le="1"}')).toBe(2);
    expect(s.get('zkagent_verification_batch_size_bucket{le="2"}')).toBe(2);
    expect(s.get('zkagent_verification_batch_size_bucket{le="4"}')).toBe(3);
    expect(s.get('zkagent_verification_batch_size_bucket{le="16"}')).toBe(3);
    expect(s.get('zkagent_verification_batch_size_bucket{le="32"}')).toBe(5);
    expect(s.get("zkagent_verification_batch_size_count")).toBe(5);
    expect(s.get("zkagent_verification_batch_size_sum")).toBe(54);
  });

  test("verifications by result and reason; verified is reason none", async () => {
    const m = createMetrics();
    m.verification("verified", null, 12);
    m.verification("failed", "proof_rejected", 8);
    m.verification("failed", "proof_rejected", 9);
    const s = samples(await m.render());
    expect(s.get('zkagent_verifications_total{result="verified",reason="none"}')).toBe(1);
    expect(s.get('zkagent_verifications_total{result="failed",reason="proof_rejected"}')).toBe(2);
    expect(s.get('zkagent_verification_duration_seconds_count{result="failed"}')).toBe(2);
    expect(s.get('zkagent_verification_duration_seconds_bucket{result="verified",le="0.01"}')).toBe(0);
    expect(s.get('zkagent_verification_duration_seconds_bucket{result="verified",le="0.025"}')).toBe(1);
  });

  test("every sample line is well-formed exposition text", async () => {
    const m = createMetrics();
    m.request("POST", "/v1/verify/challenge", 200, 5);
    m.verification("failed", "invalid_signature", 4);
    const text = await m.render([new Gauge("zkagent_challenges_pending", "P.", () => 3)]);
    expect(text.endsWith("\n")).toBe(true);
    const line =
      /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*"(,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\.)*")*\})? [-+]?(\d+(\.\d+)?([eE][-+]?\d+)?|\+Inf)$/;
    for (const l of text.trimEnd().split("\n")) if (!l.startsWith("#")) expect(l).toMatch(line);
    expect(samples(text).get("zkagent_challenges_pending")).toBe(3);
  });
});
