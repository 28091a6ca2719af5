// Agents belong to the API key that registered them: another key can neither
// see, revoke nor prove against them.
import { beforeAll, describe, expect, test } from "bun:test";
import { createHarness, type Harness } from "../support/harness";

let h: Harness;
let a: string;
let b: string;

beforeAll(async () => {
  h = await createHarness();
  a = await h.newKey("a");
  b = await h.newKey("b");
  expect((await h.call("POST", "/v1/agents", { key: a, body: { agent_id: "bot", identity_commitment: "11" } })).status).toBe(201);
});

describe("key isolation", () => {
  test("key B cannot see key A's agent (404)", async () => {
    const response = await h.call("GET", "/v1/agents/bot", { key: b });
    expect(response.status).toBe(404);
    expect(response.body.error).toBe("Agent not found");
  });

  test("key B cannot revoke key A's agent (404), and A's agent stays active", async () => {
    expect((await h.call("DELETE", "/v1/agents/bot", { key: b })).status).toBe(404);
    expect((await h.call("GET", "/v1/agents/bot", { key: a })).body.status).toBe("active");
  });

  test("key B registers the same agent_id independently; neither overwrites the other", async () => {
    expect((await h.call("POST", "/v1/agents", { key: b, body: { agent_id: "bot", identity_commitment: "22" } })).status).toBe(201);
    expect((await h.call("GET", "/v1/agents/bot", { key: a })).body.identity_commitment).toBe("11");
    expect((await h.call("GET", "/v1/agents/bot", { key: b })).body.identity_commitment).toBe("22");
  });
});
