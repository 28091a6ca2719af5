// agent_signature: Ed25519 over the canonical message of docs/protocol.md.
import { describe, expect, test } from "bun:test";
import { createPublicKey, verify } from "node:crypto";
import { contextHash } from "../../src/identity/encoding";
import { isSigningKey, newSigningKeyPair, signatureMessage, signChallenge, verifySignature } from "../../src/identity/signature";

const fields = { challengeId: "ch_abc", nonce: "ab".repeat(31), action: "purchase", context: { merchant: "shop-a", amount: 20 } };

describe("the signed message", () => {
  test("is exactly the documented canonical JSON", () => {
    const expected =
      `{"action":"purchase","challenge_id":"ch_abc","context_hash":"${contextHash({ amount: 20, merchant: "shop-a" })}",` +
      `"nonce":"${"ab".repeat(31)}","v":"zkagent/v1/signature"}`;
    expect(signatureMessage(fields).toString("utf8")).toBe(expected);
  });

  test("an absent context signs the hash of {}", () => {
    expect(signatureMessage({ ...fields, context: undefined }).toString()).toContain(`"context_hash":"${contextHash({})}"`);
  });

  test("an action containing quotes cannot forge a field boundary", () => {
    const forged = signatureMessage({ ...fields, action: 'x","challenge_id":"ch_other' }).toString();
    expect(JSON.parse(forged).challenge_id).toBe("ch_abc");
  });
});

describe("sign and verify", () => {
  const { signingKey, signingSecret } = newSigningKeyPair();

  test("keys are 32 bytes base64url without padding", () => {
    expect(signingKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(signingSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(isSigningKey(signingKey)).toBe(true);
  });

  test("round-trips, and an independent Ed25519 check over the documented message agrees", () => {
    const signature = signChallenge(signingSecret, fields);
    expect(signature).toMatch(/^[A-Za-z0-9_-]{86}$/);
    expect(verifySignature(signingKey, signature, fields)).toBe("valid");
    const publicKey = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: signingKey }, format: "jwk" });
    expect(verify(null, signatureMessage(fields), publicKey, Buffer.from(signature, "base64url"))).toBe(true);
  });

  test("context key order does not change the signature's validity", () => {
    const signature = signChallenge(signingSecret, fields);
    expect(verifySignature(signingKey, signature, { ...fields, context: { amount: 20, merchant: "shop-a" } })).toBe("valid");
  });

  test.each([
    ["challenge id", { challengeId: "ch_abd" }],
    ["nonce", { nonce: "ac".repeat(31) }],
    ["action", { action: "refund" }],
    ["context", { context: { merchant: "shop-a", amount: 21 } }],
  ])("a tampered %s fails", (_, change) => {
    const signature = signChallenge(signingSecret, fields);
    expect(verifySignature(signingKey, signature, { ...fields, ...change })).toBe("invalid_signature");
  });

  test("another key's signature fails", () => {
    const other = newSigningKeyPair();
    expect(verifySignature(signingKey, signChallenge(other.signingSecret, fields), fields)).toBe("invalid_signature");
  });

  test("malformed signatures and keys are invalid_signature, never an exception", () => {
    const signature = signChallenge(signingSecret, fields);
    const flipped = Buffer.from(signature, "base64url");
    flipped[10]! ^= 1;
    for (const bad of ["", "x", signature + "A", signature.slice(0, -2), `${signature}==`, "*".repeat(86), flipped.toString("base64url")]) {
      expect(verifySignature(signingKey, bad, fields)).toBe("invalid_signature");
    }
    for (const badKey of ["", "short", signingKey + "A", Buffer.alloc(32).toString("base64"), "*".repeat(43)]) {
      expect(verifySignature(badKey, signature, fields)).toBe("invalid_signature");
      expect(isSigningKey(badKey)).toBe(false);
    }
  });

  test("a signing secret of the wrong length is refused when signing", () => {
    expect(() => signChallenge("short", fields)).toThrow();
  });
});
