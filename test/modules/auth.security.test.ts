// Authentication on every endpoint: 401 Missing API key (with a message naming
// the header) and 403 Invalid API key for every kind of bad key (docs/api.md,
// Authentication: an invalid key is 403 on every /v1/ route).
import { beforeAll, describe, expect, test } from "bun:test";
import { hashKey } from "../../src/modules/keys/service";
import { createHarness, type Harness } from "../support/harness";
import { keyIdOf, requestChallenge } from "./flow";

let h: Harness;
let key: string;
let sessionId: string;
const badKeys: Record<string, string> = {};

beforeAll(async () => {
  h = await createHarness();
  key = await h.newKey("owner");
  sessionId = (await requestChallenge(h, key, "agent", "purchase")).challenge_id;
  const revoked = await h.newKey("revoked");
  await h.store.revokeKey(keyIdOf(revoked), h.clock.now());
  badKeys["garbage"] = "let-me-in";
  badKeys["unknown id"] = "zka_0123456789abcdef_" + "A".repeat(43);
  badKeys["right id, wrong secret"] = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A");
  badKeys["revoked"] = revoked;
  badKeys["other case"] = key.toUpperCase();
});

const endpoints = () =>
  [
    ["POST", "/v1/verify/challenge", { agent_id: "agent", action: "purchase" }],
    ["POST", "/v1/verify/proof", { challenge_id: sessionId, proof: "{}" }],
    ["GET", `/v1/verify/status/${sessionId}`, undefined],
    ["POST", "/v1/agents", { agent_id: "a", identity_commitment: "1" }],
    ["GET", "/v1/agents/agent", undefined],
    ["DELETE", "/v1/agents/agent", undefined],
    ["GET", "/v1/usage", undefined],
  ] as const;

describe("401 Missing API key", () => {
  test("on every endpoint, with a message naming the X-Api-Key header", async () => {
    for (const [method, path, body] of endpoints()) {
      const response = await h.call(method, path, { body });
      expect(`${method} ${path} ${response.status}`).toBe(`${method} ${path} 401`);
      expect(response.body).toEqual({ error: "Missing API key", message: expect.stringContaining("X-Api-Key") });
    }
  });

  test("an empty header counts as missing", async () => {
    const response = await h.call("GET", "/v1/usage", { headers: { "x-api-key": "" } });
    expect(response.status).toBe(401);
  });
});

describe("403 Invalid API key", () => {
  test("on every endpoint, for every kind of bad key", async () => {
    for (const [kind, bad] of Object.entries(badKeys)) {
      for (const [method, path, body] of endpoints()) {
        const response = await h.call(method, path, { key: bad, body });
        expect(`${kind}: ${method} ${path} ${response.status}`).toBe(`${kind}: ${method} ${path} 403`);
        expect(response.body).toEqual({ error: "Invalid API key" });
      }
    }
  });

  test("a rejected key leaves the session untouched and counts nothing", async () => {
    const before = await h.store.usage(keyIdOf(key));
    for (const bad of Object.values(badKeys)) await h.call("POST", "/v1/verify/proof", { key: bad, body: { challenge_id: sessionId, proof: "{}" } });
    expect((await h.store.getChallenge(sessionId))!.status).toBe("pending");
    expect(await h.store.usage(keyIdOf(key))).toEqual(before);
  });

  test("the key is stored only as its SHA-256 hash", async () => {
    const record = await h.store.getKey(keyIdOf(key));
    expect(record!.hash).toBe(hashKey(key));
    expect(JSON.stringify(record)).not.toContain(key.slice(`zka_${keyIdOf(key)}_`.length));
  });
});

describe("every response carries a request id", () => {
  test("success and error alike", async () => {
    const ok = await h.call("GET", "/v1/usage", { key });
    const denied = await h.call("GET", "/v1/usage", {});
    expect(ok.headers.get("x-request-id")).toBeTruthy();
    expect(denied.headers.get("x-request-id")).toBeTruthy();
    expect(ok.headers.get("x-request-id")).not.toBe(denied.headers.get("x-request-id"));
  });
});
