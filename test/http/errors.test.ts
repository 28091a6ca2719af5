// Every error body carries the request id (the x-request-id header's value),
// whatever produced it: routing, authentication, body reading, validation,
// a service, or an unexpected failure. Details of an error (Retry-After, the
// rate window) arrive as headers set by the HTTP layer.
import { describe, expect, test } from "bun:test";
import { createApp } from "../../src/app";
import { observed } from "../support/contract";
import { ManualClock } from "../../src/clock";
import { createLogger } from "../../src/log";
import { createKey } from "../../src/modules/keys/service";
import { openSqlite } from "../../src/store/sqlite";
import { requirement } from "../../src/http/validate";
import { challengeRequest } from "../../src/modules/challenges/model";
import { proofRequest } from "../../src/modules/proofs/model";
import { BASE, createHarness } from "../support/harness";

const h = await createHarness();
const key = await h.newKey("errors", 1);

async function raw(method: string, path: string, init: { key?: string; body?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { "x-request-id": `req-${Math.random().toString(36).slice(2)}`, ...init.headers };
  if (init.key) headers["x-api-key"] = init.key;
  const response = await h.app.handle(new Request(BASE + path, { method, headers, body: init.body }));
  return { response, sent: headers["x-request-id"]!, body: (await response.json()) as Record<string, unknown> };
}

describe("request_id in every error body", () => {
  const json = { "content-type": "application/json" };
  test.each([
    ["no route", "GET", "/nowhere", {}, 404, "Not found"],
    ["no key", "GET", "/v1/usage", {}, 401, "Missing API key"],
    ["bad key", "GET", "/v1/usage", { key: "zka_nope" }, 403, "Invalid API key"],
    ["wrong media type", "POST", "/v1/agents", { key: "KEY", body: "{}", headers: { "content-type": "text/plain" } }, 415, "Unsupported Media Type"],
    ["too large", "POST", "/v1/agents", { key: "KEY", body: "x".repeat(70_000), headers: json }, 413, "Payload too large"],
    ["malformed", "POST", "/v1/agents", { key: "KEY", body: "{", headers: json }, 400, "Malformed JSON body"],
    ["missing fields", "POST", "/v1/agents", { key: "KEY", body: "{}", headers: json }, 400, "Missing required fields: agent_id, identity_commitment"],
    ["unknown session", "GET", "/v1/verify/status/ch_nothing", { key: "KEY" }, 404, "Session not found"],
  ] as const)("%s", async (_, method, path, init, status, error) => {
    const { response, sent, body } = await raw(method, path, { ...init, key: "key" in init && init.key === "KEY" ? key : (init as { key?: string }).key });
    expect(response.status).toBe(status);
    expect(body.error).toBe(error);
    expect(body.request_id).toBe(sent);
    expect(response.headers.get("x-request-id")).toBe(sent);
  });

  test("429 carries the id in the body and the rate window in headers", async () => {
    const body = JSON.stringify({ agent_id: "a", action: "b" });
    const first = await raw("POST", "/v1/verify/challenge", { key, body, headers: { "content-type": "application/json" } });
    expect(first.response.status).toBe(200);
    expect(first.response.headers.get("ratelimit-remaining")).toBe("0");
    const limited = await raw("POST", "/v1/verify/challenge", { key, body, headers: { "content-type": "application/json" } });
    expect(limited.response.status).toBe(429);
    expect(limited.body.request_id).toBe(limited.sent);
    expect(Number(limited.response.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.response.headers.get("ratelimit-limit")).toBe("1");
    expect(limited.response.headers.get("ratelimit-remaining")).toBe("0");
  });

  test("an unexpected failure: 500 with the id, logged under the same id", async () => {
    const store = openSqlite(":memory:");
    const lines: string[] = [];
    const app = observed(
      createApp({
        store,
        clock: new ManualClock(),
        verifier: { verify: () => ({ ok: true }) },
        logger: createLogger("error", (line) => lines.push(line)),
      }),
    );
    const created = await createKey(store, new ManualClock(), "k", 0);
    store.usage = () => Promise.reject(new Error("disk on fire"));
    const response = await app.handle(new Request(`${BASE}/v1/usage`, { headers: { "x-api-key": created.key, "x-request-id": "req-500" } }));
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: "Internal server error", request_id: "req-500" });
    expect(lines.some((line) => JSON.parse(line).request_id === "req-500")).toBe(true);
  });
});

describe("the requirement texts are read off the schemas", () => {
  test("bounds in the schema are the bounds in the text", () => {
    expect(requirement(challengeRequest.properties.agent_id)).toBe("must be a non-empty string of at most 256 characters");
    expect(requirement(proofRequest.properties.proof)).toBe("must be a non-empty string of at most 8192 characters");
    expect(requirement(proofRequest.properties.agent_signature)).toBe("must be a string of at most 256 characters");
    expect(requirement(challengeRequest.properties.context)).toBe("must be a JSON object");
  });
});
