// Issue 11, item 9: a client that disconnects mid-body is not a server error:
// no error-level log line, no 5xx in /metrics (debug level at most).
import { expect, test } from "bun:test";
import { connect } from "node:net";
import { createApp } from "../../src/app";
import { observed } from "../support/contract";
import { createLogger } from "../../src/log";
import { createMetrics } from "../../src/observability/metrics";
import { createHarness } from "../support/harness";
import { samples } from "./exposition";

async function observedServer() {
  const lines: any[] = [];
  const logger = createLogger("debug", (line) => void lines.push(JSON.parse(line)));
  const h = await createHarness();
  const metrics = createMetrics();
  const app = createApp({ ...h.deps, logger, metrics }).listen({ port: 0, hostname: "127.0.0.1" });
  return { h, app, lines, metrics, port: app.server!.port! };
}

const fiveHundreds = (text: string) =>
  [...samples(text).entries()].filter(([name, value]) => /zkagent_http_requests_total\{.*status="5\d\d"/.test(name) && value > 0);

test("a body cut off by the client (real socket): no error line, no 5xx counted", async () => {
  const { h, app, lines, metrics, port } = await observedServer();
  const key = await h.newKey("abort", 0);
  for (let i = 0; i < 5; i++) {
    await new Promise<void>((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(
          `POST /v1/verify/challenge HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"agent_id":"a",`,
        );
        setTimeout(() => socket.destroy(), 30);
      });
      socket.on("close", () => resolve());
      socket.on("error", () => {});
    });
  }
  await Bun.sleep(200); // let the server notice the closed connections and finish its hooks
  const text = await metrics.render();
  expect(fiveHundreds(text)).toEqual([]);
  expect(lines.filter((line) => line.level === "error")).toEqual([]);
  expect(lines.filter((line) => line.level === "warn")).toEqual([]);
  // Each of the five: one debug line saying so, and the request line at debug with 499.
  expect(lines.filter((line) => line.level !== "debug")).toEqual([]);
  expect(lines.filter((line) => line.msg === "request" && line.status === 499)).toHaveLength(5);
  expect(samples(text).get('zkagent_http_requests_total{method="POST",route="/v1/verify/challenge",status="499"}')).toBe(5);
  app.server!.stop(true);
});

test("a request body stream that errors mid-way (app.handle): debug line, status 499 in metrics, never 500", async () => {
  const lines: any[] = [];
  const logger = createLogger("debug", (line) => void lines.push(JSON.parse(line)));
  const h = await createHarness();
  const metrics = createMetrics();
  const app = observed(createApp({ ...h.deps, logger, metrics }));
  const key = await h.newKey("abort", 0);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"agent_id":"a",'));
      setTimeout(() => controller.error(new Error("")), 5);
    },
  });
  const response = await app.handle(
    new Request("http://zkagent.test/v1/verify/challenge", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit),
  );
  expect(response.status).toBe(499);
  await Bun.sleep(10);
  expect(lines.filter((line) => line.level !== "debug")).toEqual([]);
  expect(lines.some((line) => line.level === "debug" && line.msg === "client closed the request")).toBe(true);
  expect(lines.some((line) => line.level === "debug" && line.msg === "request" && line.status === 499)).toBe(true);
  expect(fiveHundreds(await metrics.render())).toEqual([]);
  expect(await h.store.countPending(h.clock.now())).toBe(0);
});
