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

  test("issue 18: header and payload are I-JSON: a duplicate member (last wins under JSON.parse) is refused, naming it", async () => {
    const payload = `{"key_id":"${KEY_ID}","agent_id":"shopper-1","identity_commitment":"12345","mandate":{},"iat":1}`;
    const header = '{"alg":"EdDSA","typ":"zkagent-mandate+jwt"}';
    expect(await verifyMandateJws(nodeJws(header, payload), registration)).toMatchObject({ ok: true });
    expect(await refusal(nodeJws('{"alg":"none","alg":"EdDSA","typ":"zkagent-mandate+jwt"}', payload))).toBe(
      "protected header is not I-JSON at alg: member name appears more than once in its object; send each name once",
    );
    // Two mandates: JSON.parse keeps the second, wider one; a reader that keeps the first sees another mandate.
    const twice = payload.replace('"mandate":{}', '"mandate":{"actions":["refund"]},"mandate":{}');
    expect(await refusal(nodeJws(header, twice))).toBe(
      "payload is not I-JSON at mandate: member name appears more than once in its object; send each name once",
    );
    const deep = payload.replace('"mandate":{}', '"mandate":{"limits":[{"max_count":1,"max_count":9,"period":"day"}]}');
    expect(await refusal(nodeJws(header, deep))).toStartWith("payload is not I-JSON at mandate.limits[0].max_count: member name appears more than once");
    expect(await refusal(nodeJws(header, payload.replace('"iat":1', '"iat":1,"iat":2')))).toStartWith("payload is not I-JSON at iat");
  });

  test("issue 18: iat is whole safe-integer seconds, at most 300 s ahead of the server's clock", async () => {
    const now = 1_795_000_000_000;
    const at = (iat: string) =>
      nodeJws(
        { alg: "EdDSA", typ: "zkagent-mandate+jwt" },
        `{"key_id":"${KEY_ID}","agent_id":"shopper-1","identity_commitment":"12345","mandate":{},"iat":${iat}}`,
      );
    const reg = { ...registration, now };
    expect(await verifyMandateJws(at("1795000300"), reg)).toEqual({ ok: true, value: { mandate: {}, iat: 1_795_000_300 } });
    expect(await verifyMandateJws(at("0"), reg)).toMatchObject({ ok: true });
    const ahead = "iat must be whole Unix seconds, at most 300 s ahead of the server's clock (now + 300 = 1795000300)";
    expect(await refusal(at("1795000301"), reg)).toBe(ahead);
    expect(await refusal(at("4102444800"), reg)).toBe(ahead); // 2100-01-01
    expect(await refusal(at("9007199254740991"), reg)).toBe(ahead); // 2^53 − 1
    for (const huge of ["9223372036854775807", "9223372036854775808", "1e300", "18446744073709551616"]) {
      expect(await refusal(at(huge), reg)).toStartWith("payload is not I-JSON at iat: number is outside ±(2^53−1)");
    }
    expect(await refusal(at("-1"), reg)).toStartWith("payload must be exactly");
    expect(await refusal(at("1.5"), reg)).toStartWith("payload must be exactly");
  });

  test("signMandate refuses a mandate the service would refuse", async () => {
    await expect(signed({ mandate: { limits: [{ max_totl: "1" }] } })).rejects.toThrow("mandate unknown members limits[0].max_totl");
  });
});
