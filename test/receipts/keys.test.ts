// Signing keys: the kid against an RFC 7638 thumbprint computed here by hand,
// and the private key's form at rest.
import { describe, expect, test } from "bun:test";
import { createHash, createPublicKey, sign, verify } from "node:crypto";
import { newSigningKey, openPrivateKey, SigningKeyError } from "../../src/receipts/keys";

const SECRET = "correct horse battery staple, but longer than 32";

describe("signing keys", () => {
  test("kid is the RFC 7638 thumbprint: SHA-256 of the required members in lexicographic order", async () => {
    const record = await newSigningKey(1);
    const jwk = JSON.parse(record.publicJwk);
    expect(Object.keys(jwk).sort()).toEqual(["crv", "kty", "x"]);
    const thumbprintInput = `{"crv":"Ed25519","kty":"OKP","x":"${jwk.x}"}`;
    expect(record.kid).toBe(createHash("sha256").update(thumbprintInput).digest("base64url"));
  });

  test("RFC 8037 appendix A.3: the thumbprint of the example key", async () => {
    const { keyId } = await import("../../src/receipts/keys");
    expect(await keyId({ kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" })).toBe("kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
  });

  test("without a secret the private key is stored as plain PKCS#8 and opens to the matching key", async () => {
    const record = await newSigningKey(1);
    expect(record.privateKey.startsWith("plain:")).toBe(true);
    const key = openPrivateKey(record);
    const message = Buffer.from("m");
    expect(verify(null, message, createPublicKey({ key: JSON.parse(record.publicJwk), format: "jwk" }), sign(null, message, key))).toBe(true);
  });

  test("with a secret it is sealed: no PKCS#8 visible, opens only with that secret", async () => {
    const record = await newSigningKey(1, SECRET);
    expect(record.privateKey.startsWith("aes256gcm:")).toBe(true);
    const der = openPrivateKey(record, SECRET).export({ format: "der", type: "pkcs8" });
    expect(record.privateKey).not.toContain(der.toString("base64url"));
    expect(() => openPrivateKey(record)).toThrow(SigningKeyError);
    expect(() => openPrivateKey(record, SECRET + "x")).toThrow(/wrong RECEIPT_KEY_SECRET/);
  });

  test("a sealed key moved to another row (other kid) does not open", async () => {
    const a = await newSigningKey(1, SECRET);
    const b = await newSigningKey(2, SECRET);
    expect(() => openPrivateKey({ ...b, privateKey: a.privateKey }, SECRET)).toThrow(SigningKeyError);
  });

  test("a plain key that does not match the row's public key is refused", async () => {
    const a = await newSigningKey(1);
    const b = await newSigningKey(2);
    expect(() => openPrivateKey({ ...b, privateKey: a.privateKey })).toThrow(/does not match/);
  });

  test("errors name the kid, never the key material", async () => {
    const record = await newSigningKey(1, SECRET);
    try {
      openPrivateKey(record, "wrong secret of sufficient length......");
      throw new Error("opened");
    } catch (error) {
      expect((error as Error).message).toContain(record.kid);
      expect((error as Error).message).not.toContain(record.privateKey.slice(10, 30));
    }
  });
});
