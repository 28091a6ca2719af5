// Mandates over HTTP: what is refused, and how the refusal reads.
import { beforeAll, describe, expect, test } from "bun:test";
import { createHarness, type Harness } from "../support/harness";

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await createHarness();
  key = await h.newKey("mandate-errors");
  expect((await h.call("POST", "/v1/agents", { key, body: { agent_id: "a1", identity_commitment: "12345" } })).status).toBe(201);
});

const put = (agentId: string, body: unknown) => h.call("PUT", `/v1/agents/${agentId}/mandate`, { key, body });

describe("mandate errors", () => {
  test("unknown members are a 400 naming each one, on PUT and on registration; nothing is stored", async () => {
    const typo = await put("a1", { limits: [{ action: "purchase", currency: "EUR", max_totl: "10.00", max_amount: "5" }], merchant: ["x"] });
    expect(typo.status).toBe(400);
    expect(typo.body.error).toBe("Invalid field mandate: unknown members merchant, limits[0].max_totl");
    expect((await h.call("GET", "/v1/agents/a1", { key })).body.mandate).toBeNull();
    const registering = await h.call("POST", "/v1/agents", { key, body: { agent_id: "a2", identity_commitment: "1", mandate: { action: ["purchase"] } } });
    expect(registering.status).toBe(400);
    expect(registering.body.error).toBe("Invalid field mandate: unknown members action");
    expect((await h.call("GET", "/v1/agents/a2", { key })).status).toBe(404);
  });

  test("amounts must be decimal strings, limits complete, periods known", async () => {
    const cases: [unknown, string][] = [
      [{ limits: [{ currency: "EUR", max_amount: 50 }] }, "limits[0].max_amount must be a decimal string"],
      [{ limits: [{ currency: "EUR", max_amount: "5e1" }] }, "limits[0].max_amount must be a decimal string"],
      [{ limits: [{ currency: "EUR", max_total: "100" }] }, "limits[0] needs period"],
      [{ limits: [{ max_amount: "1" }] }, "limits[0] needs currency"],
      [{ limits: [{ currency: "Euro", max_amount: "1" }] }, "limits[0].currency must be an ISO 4217 code"],
      [{ limits: [{ max_count: 3, period: "fortnight" }] }, "limits[0].period must be day, week or month"],
      [{ valid_until: "tomorrow" }, "valid_until must be an RFC 3339 date-time"],
    ];
    for (const [body, message] of cases) {
      const reply = await put("a1", body);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toStartWith(`Invalid field mandate: ${message}`);
    }
  });

  test("unknown and revoked agents, malformed bodies", async () => {
    expect(await put("nobody", {})).toMatchObject({ status: 404, body: { error: "Agent not found" } });
    expect((await h.call("DELETE", "/v1/agents/nobody/mandate", { key })).status).toBe(404);
    expect((await h.call("PUT", "/v1/agents/a1/mandate", { key, body: "[1,2]" })).status).toBe(400);
    expect((await h.call("PUT", "/v1/agents/a1/mandate", { key, body: "{", headers: { "content-type": "application/json" } })).body.error).toBe(
      "Malformed JSON body",
    );
    expect((await h.call("PUT", "/v1/agents/a1/mandate", { key, body: "{}", headers: { "content-type": "text/plain" } })).status).toBe(415);
    expect((await h.call("PUT", "/v1/agents/a1/mandate", { body: {} })).status).toBe(401);
    await h.call("POST", "/v1/agents", { key, body: { agent_id: "gone", identity_commitment: "9" } });
    await h.call("DELETE", "/v1/agents/gone", { key });
    expect(await put("gone", {})).toMatchObject({ status: 409, body: { error: "Agent revoked" } });
    expect((await h.call("DELETE", "/v1/agents/gone/mandate", { key })).status).toBe(409);
  });

  test("a signed mandate for an agent without principal_key, and a bad principal_key, are 400s", async () => {
    expect((await put("a1", { mandate_jws: "a.b.c" })).body.error).toBe(
      "Invalid field mandate_jws: only an agent registered with a principal_key takes a signed mandate",
    );
    const bad = await h.call("POST", "/v1/agents", { key, body: { agent_id: "p1", identity_commitment: "1", principal_key: "not-a-key" } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toStartWith("Invalid field principal_key");
  });

  test("mandates are scoped to the API key: another key sees and changes nothing", async () => {
    expect((await put("a1", { actions: ["purchase"] })).status).toBe(200);
    const stranger = await h.newKey("stranger");
    expect((await h.call("PUT", "/v1/agents/a1/mandate", { key: stranger, body: {} })).status).toBe(404);
    expect((await h.call("DELETE", "/v1/agents/a1/mandate", { key: stranger })).status).toBe(404);
    expect((await h.call("GET", "/v1/agents/a1", { key })).body.mandate).toEqual({ actions: ["purchase"] });
  });
});
