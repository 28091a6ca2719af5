// Agent registration errors: 409 duplicate, 400 for a commitment that is not
// a canonical field element or a signing key that is not Ed25519, 404 unknown.
import { beforeAll, describe, expect, test } from "bun:test";
import { FIELD_ORDER_R } from "../../src/identity/field";
import { createHarness, type Harness } from "../support/harness";

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await createHarness();
  key = await h.newKey("agents");
});

const register = (body: unknown) => h.call("POST", "/v1/agents", { key, body });

describe("POST /v1/agents errors", () => {
  test("409 for an agent_id already registered and active; the first commitment stays", async () => {
    expect((await register({ agent_id: "dup", identity_commitment: "1" })).status).toBe(201);
    const again = await register({ agent_id: "dup", identity_commitment: "2" });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("Agent already registered");
    expect((await h.call("GET", "/v1/agents/dup", { key })).body.identity_commitment).toBe("1");
  });

  test("400 lists the missing fields", async () => {
    const response = await register({});
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: "Missing required fields: agent_id, identity_commitment" });
  });

  test("r − 1 is the largest accepted commitment and 0 the smallest", async () => {
    expect((await register({ agent_id: "max", identity_commitment: String(FIELD_ORDER_R - 1n) })).status).toBe(201);
    expect((await register({ agent_id: "zero", identity_commitment: "0" })).status).toBe(201);
  });

  test.each([
    ["equal to r", String(FIELD_ORDER_R)],
    ["above r", String(FIELD_ORDER_R + 5n)],
    ["2^256", String(2n ** 256n)],
    ["hexadecimal", "0x1f"],
    ["signed", "-1"],
    ["plus-signed", "+1"],
    ["fractional", "1.5"],
    ["with leading zeros", "007"],
    ["with whitespace", " 7"],
    ["empty", ""],
    ["a number, not a string", 7],
  ])("400 names identity_commitment when it is %s", async (_, commitment) => {
    const response = await register({ agent_id: "bad", identity_commitment: commitment });
    expect(response.status).toBe(400);
    expect(response.body.error).toStartWith("Invalid field identity_commitment:");
  });

  test.each([
    ["31 bytes", Buffer.alloc(31, 1).toString("base64url")],
    ["33 bytes", Buffer.alloc(33, 1).toString("base64url")],
    ["padded base64", Buffer.alloc(32, 1).toString("base64")],
    ["not base64url", "*".repeat(43)],
    ["a number", 12],
  ])("400 names signing_key when it is %s", async (_, signingKey) => {
    const response = await register({ agent_id: "bad-sig", identity_commitment: "1", signing_key: signingKey });
    expect(response.status).toBe(400);
    expect(response.body.error).toStartWith("Invalid field signing_key:");
  });

  test("400 names agent_id when it is over 256 characters or not a string", async () => {
    for (const agentId of ["a".repeat(257), 5, ""]) {
      const response = await register({ agent_id: agentId, identity_commitment: "1" });
      expect(response.status).toBe(400);
      expect(response.body.error).toStartWith("Invalid field agent_id:");
    }
  });
});

describe("GET and DELETE /v1/agents/:agentId errors", () => {
  test("404 Agent not found for an unknown agent", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await h.call(method, "/v1/agents/ghost", { key });
      expect(response.status).toBe(404);
      expect(response.body.error).toBe("Agent not found");
    }
  });
});
