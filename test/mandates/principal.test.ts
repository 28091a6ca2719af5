// Principal-signed mandates, checked against node:crypto directly: the SDK's
// JWS verifies as plain Ed25519 over "header.payload", and a JWS built with
// node:crypto alone (no jose) is accepted by the service's check.
import { describe, expect, test } from "bun:test";
import { createPublicKey, generateKeyPairSync, sign, verify } from "node:crypto";
import { createPrincipal, signMandate } from "../../src/agent";
import { privateKeyFromSeed } from "../../src/identity/signature";
import { verifyMandateJws } from "../../src/mandates/principal";
import type { Mandate } from "../../src/mandates/schema";

const mandate: Mandate = { actions: ["purchase"], limits: [{ action: "purchase", currency: "EUR", max_total: "100.00", period: "day" }] };
const principal = createPrincipal();
const KEY_ID = "0123456789abcdef";
const registration = { keyId: KEY_ID, agentId: "shopper-1", identityCommitment: "12345", principalKey: principal.principal_key };
const signed = (overrides: Partial<Parameters<typeof signMandate>[0]> = {}) =>
  signMandate({
    principalSecret: principal.principal_secret,
    keyId: KEY_ID,
    agentId: "shopper-1",
    identityCommitment: "12345",
    mandate,
    iat: 1_795_000_000,
    ...overrides,
  });

const b64 = (value: unknown) => Buffer.from(typeof value === "string" ? value : JSON.stringify(value)).toString("base64url");
const json = (segment: string) => JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));

/** A compact JWS made with node:crypto only. */
function nodeJws(header: unknown, payload: unknown, secret = principal.principal_secret): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign(null, Buffer.from(input), privateKeyFromSeed(secret)).toString("base64url")}`;
}

const refusal = async (jws: unknown, reg = registration) => {
  const result = await verifyMandateJws(jws, reg);
  if (result.ok) throw new Error("expected a refusal");
  return result.error;
};

describe("principal-signed mandates", () => {
  test("the SDK's JWS is Ed25519 over header.payload with the principal key (checked by node:crypto)", async () => {
    const jws = await signed();
    const [header, payload, signature] = jws.split(".") as [string, string, string];
    expect(json(header)).toEqual({ alg: "EdDSA", typ: "zkagent-mandate+jwt" });
    expect(json(payload)).toEqual({ key_id: KEY_ID, agent_id: "shopper-1", identity_commitment: "12345", mandate, iat: 1_795_000_000 });
    const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: principal.principal_key }, format: "jwk" });
    expect(verify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, "base64url"))).toBe(true);
    expect(verify(null, Buffer.from(`${header}.${payload}x`), key, Buffer.from(signature, "base64url"))).toBe(false);
  });

  test("the valid JWS is accepted with its mandate and iat; one built with node:crypto alone is too", async () => {
    expect(await verifyMandateJws(await signed(), registration)).toEqual({ ok: true, value: { mandate, iat: 1_795_000_000 } });
    const independent = nodeJws(
      { alg: "EdDSA", typ: "zkagent-mandate+jwt" },
      { key_id: KEY_ID, agent_id: "shopper-1", identity_commitment: "12345", mandate: {}, iat: 7 },
    );
    expect(await verifyMandateJws(independent, registration)).toEqual({ ok: true, value: { mandate: {}, iat: 7 } });
  });

  test("a JWS by another key is refused", async () => {
    const stranger = createPrincipal();
    expect(await refusal(await signed({ principalSecret: stranger.principal_secret }))).toBe("is not signed by the agent's principal_key");
    const { privateKey } = generateKeyPairSync("ed25519");
    const seed = privateKey.export({ format: "jwk" }).d as string;
    expect(
      await refusal(
        nodeJws({ alg: "EdDSA", typ: "zkagent-mandate+jwt" }, { key_id: KEY_ID, agent_id: "shopper-1", identity_commitment: "12345", mandate, iat: 1 }, seed),
      ),
    ).toBe("is not signed by the agent's principal_key");
  });

  test("an altered payload is refused, however small the change", async () => {
    const [header, payload, signature] = (await signed()).split(".") as [string, string, string];
    const widened = json(payload);
    widened.mandate.limits[0].max_total = "1000.00";
    expect(await refusal(`${header}.${b64(widened)}.${signature}`)).toBe("is not signed by the agent's principal_key");
    // The same JSON re-encoded with a space: other bytes, so another signature input.
    expect(await refusal(`${header}.${b64(JSON.stringify(json(payload), null, 1))}.${signature}`)).toBe("is not signed by the agent's principal_key");
  });

  test("a mandate for another agent or another commitment is refused", async () => {
    expect(await refusal(await signed({ agentId: "shopper-2" }))).toBe("is for another agent_id");
    expect(await refusal(await signed({ identityCommitment: "54321" }))).toBe("is for another identity_commitment");
    expect(await refusal(await signed(), { ...registration, agentId: "shopper-2" })).toBe("is for another agent_id");
  });

  test("a mandate signed for the agent under another API key is refused: a second key cannot get a second budget", async () => {
    expect(await refusal(await signed({ keyId: "fedcba9876543210" }))).toBe("is for another API key (key_id)");
    expect(await refusal(await signed(), { ...registration, keyId: "fedcba9876543210" })).toBe("is for another API key (key_id)");
    const { key_id: _dropped, ...unbound } = { key_id: KEY_ID, agent_id: "shopper-1", identity_commitment: "12345", mandate, iat: 1 };
    expect(await refusal(nodeJws({ alg: "EdDSA", typ: "zkagent-mandate+jwt" }, unbound))).toStartWith("payload must be exactly");
  });

  test("header, payload shape and the mandate inside are checked", async () => {
    const payload = { key_id: KEY_ID, agent_id: "shopper-1", identity_commitment: "12345", mandate, iat: 1 };
    expect(await refusal(nodeJws({ alg: "EdDSA", typ: "JWT" }, payload))).toBe("must carry typ zkagent-mandate+jwt");
    expect(await refusal(nodeJws({ alg: "EdDSA" }, payload))).toBe("must carry typ zkagent-mandate+jwt");
    expect(await refusal(nodeJws({ alg: "none", typ: "zkagent-mandate+jwt" }, payload))).toBe("must be signed with alg EdDSA");
    expect(await refusal(`${b64({ alg: "none", typ: "zkagent-mandate+jwt" })}.${b64(payload)}.`)).toBe("must be signed with alg EdDSA");
    expect(await refusal(nodeJws({ alg: "EdDSA", typ: "zkagent-mandate+jwt" }, { ...payload, exp: 2 }))).toStartWith("payload must be exactly");
    expect(await refusal(nodeJws({ alg: "EdDSA", typ: "zkagent-mandate+jwt" }, { ...payload, iat: "1" }))).toStartWith("payload must be exactly");
    expect(await refusal(nodeJws({ alg: "EdDSA", typ: "zkagent-mandate+jwt" }, { ...payload, mandate: { actionz: [] } }))).toBe(
      "mandate unknown members actionz",
    );
    for (const junk of ["", "a.b", "a.b.c", 42, null, "x".repeat(40_000)]) expect(typeof (await refusal(junk))).toBe("string");
  });

  test("signMandate refuses a mandate the service would refuse", async () => {
    await expect(signed({ mandate: { limits: [{ max_totl: "1" }] } })).rejects.toThrow("mandate unknown members limits[0].max_totl");
  });
});
