// Principal-signed mandates over HTTP: the platform can store only what the
// principal signed, for this agent and identity, and never an older one.
import { beforeAll, describe, expect, test } from "bun:test";
import { createPrincipal, signMandate } from "../../src/agent";
import { createHarness, type Harness } from "../support/harness";
import { SAMPLE, sampleProof, type SampleProof } from "../support/proofs";
import { seedChallenge, submitProof } from "./flow";

let h: Harness;
let sample: SampleProof;
const principal = createPrincipal();
const narrow = { limits: [{ action: "purchase", currency: "EUR", max_amount: "10.00" }] };
const wide = { limits: [{ action: "purchase", currency: "EUR", max_amount: "1000.00" }] };

beforeAll(async () => {
  h = await createHarness();
  sample = await sampleProof();
});

/** The API key's public id, which a signed mandate names (zka_<id>_…). */
const keyIdOf = (key: string) => key.split("_")[1]!;

const signedFor = (key: string, mandate: unknown, iat: number, overrides: { agentId?: string; commitment?: string; secret?: string } = {}) =>
  signMandate({
    principalSecret: overrides.secret ?? principal.principal_secret,
    keyId: keyIdOf(key),
    agentId: overrides.agentId ?? "delegate",
    identityCommitment: overrides.commitment ?? sample.identity.identity_commitment,
    mandate,
    iat,
  });

async function register(key: string, mandate?: unknown) {
  const body: Record<string, unknown> = {
    agent_id: "delegate",
    identity_commitment: sample.identity.identity_commitment,
    principal_key: principal.principal_key,
  };
  if (mandate !== undefined) body.mandate = mandate;
  return h.call("POST", "/v1/agents", { key, body });
}

const alter = (jws: string, change: (payload: any) => void) => {
  const [header, payload, signature] = jws.split(".") as [string, string, string];
  const decoded = JSON.parse(Buffer.from(payload, "base64url").toString());
  change(decoded);
  return `${header}.${Buffer.from(JSON.stringify(decoded)).toString("base64url")}.${signature}`;
};

describe("principal-signed mandates over HTTP", () => {
  test("an agent with a principal_key needs the principal's signed mandate to be registered", async () => {
    const key = await h.newKey("p-register");
    expect((await register(key)).body.error).toStartWith("Invalid field mandate: is required with principal_key");
    expect((await register(key, narrow)).body.error).toStartWith("Invalid field mandate: this agent has a principal_key");
    const ok = await register(key, { mandate_jws: await signedFor(key, narrow, 100) });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ principal_key: principal.principal_key, mandate: narrow, mandate_jws: expect.any(String) });
  });

  test("a JWS by another key, an altered payload, another agent or commitment: 400, nothing stored", async () => {
    const key = await h.newKey("p-forgery");
    const stranger = createPrincipal();
    const cases: [string, string][] = [
      [await signedFor(key, narrow, 100, { secret: stranger.principal_secret }), "is not signed by the agent's principal_key"],
      [alter(await signedFor(key, narrow, 100), (p) => (p.mandate = wide)), "is not signed by the agent's principal_key"],
      [alter(await signedFor(key, narrow, 100), (p) => (p.iat = 101)), "is not signed by the agent's principal_key"],
      [await signedFor(key, narrow, 100, { agentId: "someone-else" }), "is for another agent_id"],
      [await signedFor(key, narrow, 100, { commitment: "12345" }), "is for another identity_commitment"],
      [await signedFor(await h.newKey("p-other"), narrow, 100), "is for another API key (key_id)"],
      ["not.a.jws", "is not a compact JWS"],
    ];
    for (const [jws, why] of cases) {
      const reply = await register(key, { mandate_jws: jws });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toBe(`Invalid field mandate_jws: ${why}`);
    }
    expect((await h.call("GET", "/v1/agents/delegate", { key })).status).toBe(404);
    expect((await register(key, { mandate_jws: await signedFor(key, narrow, 100), actions: [] })).body.error).toBe(
      "Invalid field mandate: unknown members actions beside mandate_jws",
    );
  });

  test("the valid signed mandate is enforced: a 20 EUR purchase passes its 10.00 max_amount only after the principal widens it", async () => {
    const key = await h.newKey("p-enforced");
    expect((await register(key, { mandate_jws: await signedFor(key, narrow, 100) })).status).toBe(201);
    const refused = await submitProof(h, key, await seedChallenge(h, key, "delegate", SAMPLE), sample.proof);
    expect(refused.body).toMatchObject({ reason: "mandate_violation", detail: "max_amount" });

    // The platform cannot widen it itself, with an unsigned mandate or by removing it.
    expect(await h.call("PUT", "/v1/agents/delegate/mandate", { key, body: wide })).toMatchObject({ status: 409, body: { error: "Signed mandate required" } });
    // A malformed one is still a field error.
    expect((await h.call("PUT", "/v1/agents/delegate/mandate", { key, body: { max_totl: "1" } })).body.error).toBe(
      "Invalid field mandate: unknown members max_totl",
    );
    expect(await h.call("DELETE", "/v1/agents/delegate/mandate", { key })).toMatchObject({ status: 409, body: { error: "Signed mandate required" } });

    const widened = await h.call("PUT", "/v1/agents/delegate/mandate", { key, body: { mandate_jws: await signedFor(key, wide, 200) } });
    expect(widened.status).toBe(200);
    expect(widened.body.mandate).toEqual(wide);
    const passed = await submitProof(h, key, await seedChallenge(h, key, "delegate", SAMPLE), sample.proof);
    expect(passed.status).toBe(200);
  });

  test("a stored signed mandate is replaced only by one issued later: an older, wider one cannot be put back", async () => {
    const key = await h.newKey("p-rollback");
    const old = await signedFor(key, wide, 100);
    expect((await register(key, { mandate_jws: old })).status).toBe(201);
    const current = await signedFor(key, narrow, 200);
    expect((await h.call("PUT", "/v1/agents/delegate/mandate", { key, body: { mandate_jws: current } })).status).toBe(200);
    const rollback = await h.call("PUT", "/v1/agents/delegate/mandate", { key, body: { mandate_jws: old } });
    expect(rollback).toMatchObject({ status: 409, body: { error: "Mandate superseded" } });
    // The same JWS again is harmless and accepted.
    expect((await h.call("PUT", "/v1/agents/delegate/mandate", { key, body: { mandate_jws: current } })).status).toBe(200);
    expect((await h.call("GET", "/v1/agents/delegate", { key })).body.mandate).toEqual(narrow);
  });

  test("revoking and registering again keeps the principal: no unsigned or older mandate, no dropped principal_key", async () => {
    const key = await h.newKey("p-revoke");
    expect((await register(key, { mandate_jws: await signedFor(key, narrow, 100) })).status).toBe(201);
    expect((await h.call("DELETE", "/v1/agents/delegate", { key })).status).toBe(200);
    // Without the principal: refused, so the next proof cannot escape the 10.00 limit.
    const unbound = await h.call("POST", "/v1/agents", { key, body: { agent_id: "delegate", identity_commitment: sample.identity.identity_commitment } });
    expect(unbound).toMatchObject({ status: 409, body: { error: "Signed mandate required" } });
    // With the principal but an older, wider mandate: refused.
    expect(await register(key, { mandate_jws: await signedFor(key, wide, 50) })).toMatchObject({ status: 409, body: { error: "Mandate superseded" } });
    // With a mandate the principal signed later: registered, and enforced.
    expect((await register(key, { mandate_jws: await signedFor(key, narrow, 300) })).status).toBe(201);
    const refused = await submitProof(h, key, await seedChallenge(h, key, "delegate", SAMPLE), sample.proof);
    expect(refused.body).toMatchObject({ reason: "mandate_violation", detail: "max_amount" });
  });

  test("another key of the platform cannot register the agent with the principal's mandate for the first key", async () => {
    const first = await h.newKey("p-first");
    const second = await h.newKey("p-second");
    const jws = await signedFor(first, wide, 100);
    expect((await register(first, { mandate_jws: jws })).status).toBe(201);
    const copied = await register(second, { mandate_jws: jws });
    expect(copied).toMatchObject({ status: 400, body: { error: "Invalid field mandate_jws: is for another API key (key_id)" } });
  });
});
