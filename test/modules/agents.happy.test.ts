// The agent registry: POST /v1/agents, GET and DELETE /v1/agents/:agentId.
import { beforeAll, describe, expect, test } from "bun:test";
import type { AgentIdentity } from "../../src/agent";
import { createHarness, type Harness } from "../support/harness";
import { identity } from "../support/proofs";

let h: Harness;
let key: string;
let alice: AgentIdentity;

beforeAll(async () => {
  h = await createHarness();
  key = await h.newKey("agents");
  alice = await identity("alice");
});

describe("agents", () => {
  test("POST registers with 201 and returns the agent view", async () => {
    const response = await h.call("POST", "/v1/agents", {
      key,
      body: { agent_id: "shop-bot", identity_commitment: alice.identity_commitment, signing_key: alice.signing_key },
    });
    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      agent_id: "shop-bot",
      identity_commitment: alice.identity_commitment,
      signing_key: alice.signing_key,
      status: "active",
      created_at: new Date(h.clock.now()).toISOString(),
      revoked_at: null,
      principal_key: null,
      mandate: null,
      mandate_hash: null,
      mandate_jws: null,
      spend: [],
    });
  });

  test("the signing key is optional and reads back as null", async () => {
    const response = await h.call("POST", "/v1/agents", { key, body: { agent_id: "no-sig", identity_commitment: "12345" } });
    expect(response.status).toBe(201);
    expect(response.body.signing_key).toBeNull();
  });

  test("GET returns what was registered", async () => {
    const response = await h.call("GET", "/v1/agents/shop-bot", { key });
    expect(response.status).toBe(200);
    expect(response.body.identity_commitment).toBe(alice.identity_commitment);
    expect(response.body.status).toBe("active");
  });

  test("DELETE revokes: status revoked with revoked_at, and GET reports it", async () => {
    await h.call("POST", "/v1/agents", { key, body: { agent_id: "to-revoke", identity_commitment: "1" } });
    h.clock.advance(5_000);
    const response = await h.call("DELETE", "/v1/agents/to-revoke", { key });
    expect(response.status).toBe(200);
    expect(response.body.status).toBe("revoked");
    expect(response.body.revoked_at).toBe(new Date(h.clock.now()).toISOString());
    expect((await h.call("GET", "/v1/agents/to-revoke", { key })).body.status).toBe("revoked");
  });

  test("revoking twice is not an error: it reports the revoked agent", async () => {
    const again = await h.call("DELETE", "/v1/agents/to-revoke", { key });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe("revoked");
  });

  test("after revocation the agent_id can be registered again with a new commitment", async () => {
    const response = await h.call("POST", "/v1/agents", { key, body: { agent_id: "to-revoke", identity_commitment: "2" } });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ identity_commitment: "2", status: "active", revoked_at: null });
  });

  test("agent ids with URL-special characters round-trip through the path", async () => {
    await h.call("POST", "/v1/agents", { key, body: { agent_id: "team/bot 7", identity_commitment: "3" } });
    const response = await h.call("GET", `/v1/agents/${encodeURIComponent("team/bot 7")}`, { key });
    expect(response.status).toBe(200);
    expect(response.body.agent_id).toBe("team/bot 7");
  });
});
