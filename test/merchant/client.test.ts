// The merchant package's API client against the real zkagent app (in
// process, app.handle): a Node-only merchant sets up agents, mandates and
// groups without curl or the CLI, and an agent it registered orders through
// the guard. Errors carry the service's status, `error` text, message and
// request id.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { createIdentity, createSemaphoreIdentity, zkagentFetch } from "../../src/agent";
import { bodyFields, ZkagentApiError, zkagentClient, zkagentGuard } from "../../src/merchant";
import { createHarness } from "../support/harness";

setDefaultTimeout(30_000);

async function setup() {
  const harness = await createHarness();
  const apiKey = await harness.newKey();
  const client = zkagentClient({ url: "http://zkagent.test", apiKey, fetch: (request) => harness.app.handle(request) });
  return { harness, apiKey, client };
}

describe("zkagentClient", () => {
  test("agents: register, read, set and remove a mandate, revoke; the agent it registered orders through the guard", async () => {
    const { harness, apiKey, client } = await setup();
    const identity = { ...(await createIdentity()), agent_id: "shopper" };
    const registered = await client.registerAgent({
      agent_id: "shopper",
      identity_commitment: identity.identity_commitment,
      signing_key: identity.signing_key,
      mandate: { actions: ["purchase"], limits: [{ currency: "EUR", max_amount: "50.00" }] },
    });
    expect(registered).toMatchObject({
      agent_id: "shopper",
      identity_commitment: identity.identity_commitment,
      signing_key: identity.signing_key,
      status: "active",
      revoked_at: null,
      mandate: { actions: ["purchase"], limits: [{ currency: "EUR", max_amount: "50.00" }] },
    });
    expect(await client.getAgent("shopper")).toEqual(registered);
    // What the service itself answers for the same agent.
    expect((await harness.call("GET", "/v1/agents/shopper", { key: apiKey })).body).toEqual(registered);

    // The agent orders: within its mandate served, beyond it refused by the service.
    const guard = zkagentGuard({
      url: "http://zkagent.test",
      apiKey,
      action: "purchase",
      context: bodyFields(["amount", "currency"]),
      fetch: (request) => harness.app.handle(request),
      onError: () => {},
    });
    const shop = async (request: Request) => {
      const result = await guard.verify(request);
      return result.ok ? Response.json(result.session, { status: 201 }) : result.response;
    };
    const order = (amount: string) =>
      zkagentFetch({ identity, fetch: shop })("http://shop.test/orders", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ amount, currency: "EUR" }),
      });
    expect((await order("20.00")).status).toBe(201);
    expect((await (await order("80.00")).json()).reason).toBe("mandate_violation");

    const widened = await client.setMandate("shopper", { actions: ["purchase"], limits: [{ currency: "EUR", max_amount: "100.00" }] });
    expect(widened).toMatchObject({ agent_id: "shopper", mandate: { limits: [{ max_amount: "100.00" }] } });
    expect((await order("80.00")).status).toBe(201);
    expect((await client.removeMandate("shopper")).mandate).toBeNull();

    const revoked = await client.revokeAgent("shopper");
    expect(revoked.status).toBe("revoked");
    expect(typeof revoked.revoked_at).toBe("string");
    expect((await (await order("1.00")).json()).reason).toBe("agent_revoked");
  });

  test("groups: create with challengers, read, add and remove members, the group's mandate", async () => {
    const { harness, apiKey, client } = await setup();
    const created = await client.createGroup({ group_id: "household", challengers: null });
    expect(created).toMatchObject({ group_id: "household", size: 0, active_members: 0, merkle_tree_root: "0", mandate: null, challengers: null });
    const members = Array.from({ length: 4 }, () => createSemaphoreIdentity().identity_commitment);
    const added = await client.addMembers("household", members);
    expect(added).toMatchObject({ group_id: "household", size: 4, active_members: 4, anonymity_warning: null });
    const removed = await client.removeMember("household", members[1]!);
    expect(removed).toMatchObject({ size: 4, active_members: 3 });
    const group = await client.getGroup("household");
    expect(group).toEqual((await harness.call("GET", "/v1/groups/household", { key: apiKey })).body);
    expect(group.merkle_tree_root).toBe(removed.merkle_tree_root);
    const keyId = apiKey.split("_")[1]!;
    expect((await client.setChallengers("household", [keyId])).challengers).toEqual([keyId]);
    expect((await client.setGroupMandate("household", { actions: ["purchase"] })).mandate).toEqual({ actions: ["purchase"] });
    expect((await client.removeGroupMandate("household")).mandate).toBeNull();
  });

  test("budgeted groups: create one, enrol a member with its terms (what the member needs to spend); a plain group refuses enrolments", async () => {
    const { harness, apiKey, client } = await setup();
    const group = await client.createGroup({ group_id: "family-budget", budget: true });
    expect(group).toMatchObject({ group_id: "family-budget", budget: true, size: 0 });
    const idc = (await createIdentity()).identity_commitment;
    const enrolment = await client.enrol("family-budget", {
      identity_commitment: idc,
      mandate: { limits: [{ currency: "EUR", max_amount: "30.00", max_total: "100.00", period: "day" }], valid_until: "2035-01-01T00:00:00Z" },
    });
    expect(enrolment).toMatchObject({
      group_id: "family-budget",
      identity_commitment: idc,
      leaf_index: 0,
      size: 1,
      terms: { currency: "EUR", max_amount: "3000", budget: "10000", period: "day", one_time: false, payees: null },
    });
    expect(enrolment.statement.payees.length).toBe(8);
    // The group's tree, as the service itself answers it, holds the leaf.
    const read = await harness.call("GET", "/v1/groups/family-budget", { key: apiKey });
    expect(read.body.merkle_tree_root).toBe(enrolment.merkle_tree_root);
    await client.createGroup({ group_id: "plain" });
    const refused = await client.enrol("plain", { identity_commitment: idc, mandate: { valid_until: "2035-01-01T00:00:00Z" } }).catch((error) => error);
    expect(refused).toMatchObject({ status: 409, error: "Group not budgeted" });
  });

  test("errors carry the service's status, error text, message and request id", async () => {
    const { client, harness } = await setup();
    const identity = await createIdentity();
    await client.registerAgent({ agent_id: "a", identity_commitment: identity.identity_commitment });
    const again = await client.registerAgent({ agent_id: "a", identity_commitment: identity.identity_commitment }).catch((error) => error);
    expect(again).toBeInstanceOf(ZkagentApiError);
    expect(again).toMatchObject({ status: 409, error: "Agent already registered" });
    expect(again.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(again.message).toStartWith("409 Agent already registered");

    const missing = await client.getAgent("nobody").catch((error) => error);
    expect(missing).toMatchObject({ status: 404, error: "Agent not found" });
    const invalid = await client.registerAgent({ agent_id: "b", identity_commitment: "12x" }).catch((error) => error);
    expect(invalid.status).toBe(400);
    expect(invalid.error).toContain("identity_commitment");
    // An id with a slash stays one path segment.
    expect(await client.getAgent("../v1/usage").catch((error) => error)).toMatchObject({ status: 404, error: "Agent not found" });

    const wrongKey = zkagentClient({ url: "http://zkagent.test", apiKey: "zka_0123456789abcdef_nope", fetch: (request) => harness.app.handle(request) });
    expect(await wrongKey.createGroup({ group_id: "g" }).catch((error) => error)).toMatchObject({ status: 403, error: "Invalid API key" });

    const unreachable = zkagentClient({ url: "http://127.0.0.1:9", apiKey: "k", fetch: () => Promise.reject(new Error("ECONNREFUSED")) });
    const down = await unreachable.getGroup("g").catch((error) => error);
    expect(down).toMatchObject({ status: 0, error: "the service could not be reached" });
    expect(down.cause.message).toBe("ECONNREFUSED");

    expect(() => zkagentClient({ url: "zkagent.example.com", apiKey: "k" })).toThrow("url must be the zkagent service's http(s) URL");
    expect(() => zkagentClient({ url: "https://zkagent.example.com", apiKey: "" })).toThrow("apiKey must be the API key");
  });
});
