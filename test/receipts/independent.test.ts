// Receipts checked by an implementation independent of the signer: node:crypto
// Ed25519 over the JWS signing input, with the JWK from the published set
// imported by createPublicKey — no jose on this side. The SDK's verifyReceipt
// must agree with it on every case.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { createPublicKey, verify } from "node:crypto";
import { CHECKS } from "../../src/receipts/claims";
import { newSigningKey } from "../../src/receipts/keys";
import { boundContextHash, receiptFor } from "../../src/receipts/service";
import { ReceiptSigner } from "../../src/receipts/signer";
import { InvalidKeySetError, type JsonWebKeySet, verifyReceipt } from "../../src/receipts/verify";
import type { Decision, Store } from "../../src/store/interface";
import { openSqlite } from "../../src/store/sqlite";
import { makeChallenge, makeKey, T0 } from "../store/contract";

/** node:crypto's verdict: the kid's key from the set, Ed25519 over header.payload. */
function independentlyValid(receipt: string, jwks: { keys: Record<string, unknown>[] }): boolean {
  const parts = receipt.split(".");
  if (parts.length !== 3) return false;
  const [header, payload, signature] = parts as [string, string, string];
  let kid: unknown;
  try {
    const decoded = JSON.parse(Buffer.from(header, "base64url").toString("utf8"));
    if (decoded.alg !== "EdDSA" || decoded.typ !== "zkagent-receipt+jwt") return false;
    kid = decoded.kid;
  } catch {
    return false;
  }
  const jwk = jwks.keys.find((k) => k.kid === kid);
  if (!jwk) return false;
  const publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x } as any, format: "jwk" });
  return verify(null, Buffer.from(`${header}.${payload}`, "ascii"), publicKey, Buffer.from(signature, "base64url"));
}

const claimsOf = (receipt: string) => JSON.parse(Buffer.from(receipt.split(".")[1]!, "base64url").toString("utf8"));
const headerOf = (receipt: string) => JSON.parse(Buffer.from(receipt.split(".")[0]!, "base64url").toString("utf8"));
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

describe("receipts, checked independently", () => {
  let store: Store;
  let signer: ReceiptSigner;
  const issuer = "https://zkagent.example";
  let deps: { store: Store; signer: ReceiptSigner; issuer: string };

  beforeEach(() => {
    store = openSqlite(":memory:");
    signer = new ReceiptSigner(store, { refreshMs: 0 });
    deps = { store, signer, issuer };
  });
  afterEach(() => store.close());

  async function decided(decision: Omit<Decision, "decidedAt">, context: string | null = '{"amount":20}') {
    const key = makeKey();
    await store.createKey(key);
    const challenge = makeChallenge(key.id, { context });
    await store.createChallenge(challenge, { windowStart: T0, limit: 0 });
    const result = await store.decideChallenge(challenge.id, { decidedAt: T0 + 1_500, ...decision });
    expect(result.decided).toBe(true);
    return result.record!;
  }
  const evidence = (checks: string[]) => ({ checks, identityCommitment: "31337", vkHash: "sha256:" + "ef".repeat(32) });
  const verifiedDecision = () => decided({ status: "verified", confidence: 0.99, reason: null, evidence: evidence(CHECKS.filter((c) => c !== "signature")) });
  const failedDecision = () => decided({ status: "failed", confidence: null, reason: "proof_rejected", evidence: evidence([...CHECKS.slice(0, 5)]) });

  test("a verified decision's receipt verifies, with the header and claims of the record", async () => {
    const record = await verifiedDecision();
    const receipt = (await receiptFor(deps, record))!;
    const jwks = await signer.jwks();
    expect(independentlyValid(receipt, jwks)).toBe(true);
    expect(headerOf(receipt)).toEqual({ alg: "EdDSA", kid: await signer.activeKid(), typ: "zkagent-receipt+jwt" });
    expect(claimsOf(receipt)).toMatchObject({
      iss: issuer,
      sub: record.agentId,
      jti: record.id,
      iat: Math.floor((T0 + 1_500) / 1000),
      status: "verified",
      confidence: 0.99,
      context_hash: boundContextHash(record),
    });
    const sdk = await verifyReceipt(receipt, jwks);
    expect(sdk).toEqual({ valid: true, kid: headerOf(receipt).kid, claims: claimsOf(receipt) });
  });

  test("a failed decision's receipt verifies too and says why", async () => {
    const record = await failedDecision();
    const receipt = (await receiptFor(deps, record))!;
    expect(independentlyValid(receipt, await signer.jwks())).toBe(true);
    expect(claimsOf(receipt)).toMatchObject({ status: "failed", reason: "proof_rejected", confidence: null, signature: "absent" });
    expect((await verifyReceipt(receipt, await signer.jwks())).valid).toBe(true);
  });

  test("no context: the claim is null and context_hash is that of {}, what the proof bound", async () => {
    const record = await decided({ status: "verified", confidence: 0.99, reason: null, evidence: evidence([]) }, null);
    const claims = claimsOf((await receiptFor(deps, record))!);
    expect(claims.context).toBeNull();
    expect(claims.context_hash).toBe(boundContextHash({ context: "{}" }));
  });

  test("any change to header, payload or signature is rejected by both", async () => {
    const receipt = (await receiptFor(deps, await verifiedDecision()))!;
    const jwks = await signer.jwks();
    const [header, payload, signature] = receipt.split(".") as [string, string, string];
    const claims = claimsOf(receipt);
    const flipped = (text: string, at: number) => text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);
    const tampered = [
      [b64({ ...headerOf(receipt), typ: "JWT" }), payload, signature],
      [b64({ ...headerOf(receipt), extra: 1 }), payload, signature],
      [header, b64({ ...claims, confidence: 0.999 }), signature],
      [header, b64({ ...claims, sub: "someone-else" }), signature],
      [header, b64({ ...claims, context: '{"amount":2000}' }), signature],
      [header, flipped(payload, 5), signature],
      [header, payload, flipped(signature, 10)],
      [header, payload, signature.slice(0, -2)],
      [header, payload, ""],
    ].map((parts) => parts.join("."));
    for (const bad of tampered) {
      expect(independentlyValid(bad, jwks)).toBe(false);
      expect((await verifyReceipt(bad, jwks)).valid).toBe(false);
    }
    // The untouched one, for contrast.
    expect(independentlyValid(receipt, jwks)).toBe(true);
  });

  test("a receipt signed before a rotation still verifies with the published set; new ones use the new key", async () => {
    const before = (await receiptFor(deps, await verifiedDecision()))!;
    const previous = await store.rotateSigningKey(await newSigningKey(T0));
    expect(previous).toBe(headerOf(before).kid);
    const after = (await receiptFor(deps, await verifiedDecision()))!;
    expect(headerOf(after).kid).not.toBe(headerOf(before).kid);
    const jwks = await signer.jwks();
    expect(jwks.keys.map((k) => k.kid).sort()).toEqual([headerOf(before).kid, headerOf(after).kid].sort());
    for (const receipt of [before, after]) {
      expect(independentlyValid(receipt, jwks)).toBe(true);
      expect((await verifyReceipt(receipt, jwks)).valid).toBe(true);
    }
  });

  test("a retired key leaves the JWKS and its receipts no longer verify against it", async () => {
    const old = (await receiptFor(deps, await verifiedDecision()))!;
    const oldKid = headerOf(old).kid;
    await store.rotateSigningKey(await newSigningKey(T0));
    expect(await store.retireSigningKey(oldKid, T0)).toBe("retired");
    const jwks = await signer.jwks();
    expect(jwks.keys.map((k) => k.kid)).not.toContain(oldKid);
    expect(independentlyValid(old, jwks)).toBe(false);
    expect(await verifyReceipt(old, jwks)).toEqual({ valid: false, reason: "unknown_key", kid: oldKid });
  });

  test("the JWKS holds public members only", async () => {
    await signer.activeKid();
    for (const key of (await signer.jwks()).keys) expect(Object.keys(key).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
  });

  test("signed once and stored: a later reader gets the stored receipt, and re-signing gives the same bytes", async () => {
    const record = await verifiedDecision();
    const first = (await receiptFor(deps, record))!;
    const stored = (await store.getChallenge(record.id))!;
    expect(stored.receipt).toBe(first);
    expect(await receiptFor(deps, stored)).toBe(first);
    // A node that died before storing: signing the same record again is deterministic (Ed25519).
    expect(await receiptFor({ ...deps, store: openSqlite(":memory:") }, record)).toBe(first);
  });

  test("a pending challenge, or one decided without evidence, has no receipt", async () => {
    const key = makeKey();
    await store.createKey(key);
    const pending = makeChallenge(key.id);
    await store.createChallenge(pending, { windowStart: T0, limit: 0 });
    expect(await receiptFor(deps, pending)).toBeNull();
    const legacy = await decided({ status: "verified", confidence: 0.99, reason: null });
    expect(await receiptFor(deps, legacy)).toBeNull();
  });

  test("verifyReceipt names what is wrong", async () => {
    const receipt = (await receiptFor(deps, await verifiedDecision()))!;
    const jwks = await signer.jwks();
    expect(await verifyReceipt("not a jws", jwks)).toEqual({ valid: false, reason: "malformed" });
    expect(await verifyReceipt("a.b.c", jwks)).toEqual({ valid: false, reason: "malformed" });
    expect(await verifyReceipt(receipt, { keys: [] })).toMatchObject({ valid: false, reason: "unknown_key" });
    const [, payload, signature] = receipt.split(".");
    expect(await verifyReceipt([b64({ alg: "none", kid: "x", typ: "zkagent-receipt+jwt" }), payload, ""].join("."), jwks)).toMatchObject({
      valid: false,
      reason: "wrong_header",
    });
    expect(await verifyReceipt([b64({ ...headerOf(receipt), x: 1 }), payload, signature].join("."), jwks)).toMatchObject({
      valid: false,
      reason: "bad_signature",
    });
  });

  test("a malformed key set is the caller's input error: a typed InvalidKeySetError, never a TypeError or a verdict", async () => {
    const receipt = (await receiptFor(deps, await verifiedDecision()))!;
    const malformed: unknown[] = [null, [], "keys", {}, { keys: null }, { keys: {} }, { keys: [null] }, { keys: [1] }, { keys: [[]] }, { keys: [{ kid: 7 }] }];
    for (const jwks of malformed) {
      const thrown = await verifyReceipt(receipt, jwks as JsonWebKeySet).then(
        () => null,
        (error: unknown) => error,
      );
      expect(thrown).toBeInstanceOf(InvalidKeySetError);
    }
    // A set whose other entries are valid keys of other kinds is still a set.
    const jwks = await signer.jwks();
    expect((await verifyReceipt(receipt, { keys: [{ kty: "RSA", n: "x", e: "AQAB" }, ...jwks.keys] })).valid).toBe(true);
  });
});
