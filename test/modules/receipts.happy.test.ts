// Receipts over HTTP: on the proof endpoint's 200 and 400 "Proof verification
// failed", on the status endpoint, the same on replay, and the JWKS they
// verify against — each receipt checked with node:crypto, independently of
// the signer (test/receipts/independent.test.ts holds the tampering cases).
import { beforeAll, describe, expect, test } from "bun:test";
import { createHash, createPublicKey, verify } from "node:crypto";
import { readFileSync } from "node:fs";
import canonicalize from "canonicalize";
import type { AgentIdentity } from "../../src/agent";
import { sign } from "../../src/agent";
import { contextHash } from "../../src/identity/encoding";
import { receiptClaims } from "../../src/receipts/claims";
import { boundContextHash } from "../../src/receipts/service";
import { createHarness, type Harness } from "../support/harness";
import { identity, proofFor, SAMPLE } from "../support/proofs";
import { keyIdOf, proveFor, readStatus, registerAgent, requestChallenge, seedChallenge, submitProof } from "./flow";

let h: Harness;
let key: string;
let alice: AgentIdentity;
const context = { merchant: "shop-a", amount: 20, currency: "EUR" };
// Computed here from the committed artifact, not by the code under test.
const VK_HASH = `sha256:${createHash("sha256")
  .update(canonicalize(JSON.parse(readFileSync("circuits/artifacts/verification_key.json", "utf8"))) as string)
  .digest("hex")}`;

beforeAll(async () => {
  h = await createHarness();
  key = await h.newKey("receipts");
  alice = await identity("alice");
  await registerAgent(h, key, "alice", alice, true);
});

const jwks = async () => (await h.call("GET", "/.well-known/jwks.json", { key: null })).body as { keys: Record<string, string>[] };

/** node:crypto's reading of a receipt: the claims when it verifies under a key of the set, else null. */
async function checked(receipt: string): Promise<any> {
  const [header, payload, signature] = receipt.split(".") as [string, string, string];
  const { kid, alg, typ } = JSON.parse(Buffer.from(header, "base64url").toString());
  expect({ alg, typ }).toEqual({ alg: "EdDSA", typ: "zkagent-receipt+jwt" });
  const jwk = (await jwks()).keys.find((k) => k.kid === kid);
  if (!jwk) return null;
  const publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x } as any, format: "jwk" });
  return verify(null, Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, "base64url"))
    ? JSON.parse(Buffer.from(payload, "base64url").toString())
    : null;
}

describe("GET /.well-known/jwks.json", () => {
  test("public, cacheable for the refresh interval, public members only", async () => {
    const response = await h.call("GET", "/.well-known/jwks.json", { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("public, max-age=5");
    expect(response.body.keys.length).toBeGreaterThanOrEqual(1);
    for (const k of response.body.keys) expect(Object.keys(k).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
  });
});

describe("receipts on decisions", () => {
  test("a verified proof: the 200 body carries a receipt whose claims are the decision", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase", context);
    const proof = await proveFor(alice, challenge, "purchase", context);
    h.clock.advance(1_999);
    const verdict = await submitProof(h, key, challenge.challenge_id, proof);
    expect(verdict.status).toBe(200);
    const { receipt, ...rest } = verdict.body;
    expect(Object.keys(rest).sort()).toEqual(["action", "agent_id", "confidence", "session_id", "timestamp", "verified"]);
    const claims = await checked(receipt);
    expect(claims).toEqual({
      iss: expect.any(String),
      sub: "alice",
      jti: challenge.challenge_id,
      iat: Math.floor(Date.parse(verdict.body.timestamp) / 1000),
      session_id: challenge.challenge_id,
      status: "verified",
      reason: null,
      confidence: 0.99,
      action: "purchase",
      context: '{"amount":20,"currency":"EUR","merchant":"shop-a"}',
      context_hash: contextHash(context).toString(),
      nonce: challenge.nonce,
      identity_commitment: alice.identity_commitment,
      signature: "absent",
      key_id: keyIdOf(key),
      // The shipped circuit's version id: its name and the vk hash's first 16 hex digits.
      circuit: { id: `agent_identity-${VK_HASH.slice(7, 23)}`, vk_hash: VK_HASH },
      checks: ["challenge_owner", "challenge_unexpired", "challenge_pending", "agent_registered", "agent_active", "proof"],
    });
  });

  test("with a valid agent_signature: signature valid, confidence 0.999, the check listed", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase", context);
    const proof = await proveFor(alice, challenge, "purchase", context);
    const signature = sign({ signingSecret: alice.signing_secret, challengeId: challenge.challenge_id, nonce: challenge.nonce, action: "purchase", context });
    const verdict = await submitProof(h, key, challenge.challenge_id, proof, signature);
    const claims = await checked(verdict.body.receipt);
    expect(claims).toMatchObject({ status: "verified", signature: "valid", confidence: 0.999 });
    expect(claims.checks.at(-1)).toBe("signature");
  });

  test("a failed proof: the 400 body keeps its fields and gains the failed decision's receipt", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase", context);
    const foreign = await proofFor({ secret: alice.secret, nonce: SAMPLE.nonce, action: "purchase", context }); // another nonce
    const verdict = await submitProof(h, key, challenge.challenge_id, foreign);
    expect(verdict.status).toBe(400);
    const { receipt, ...rest } = verdict.body;
    expect(rest).toEqual({ verified: false, error: "Proof verification failed", reason: "proof_rejected" });
    const claims = await checked(receipt);
    expect(claims).toMatchObject({
      status: "failed",
      reason: "proof_rejected",
      confidence: null,
      signature: "absent",
      identity_commitment: alice.identity_commitment,
    });
    expect(claims.checks).toEqual(["challenge_owner", "challenge_unexpired", "challenge_pending", "agent_registered", "agent_active"]);
  });

  test("an unknown agent fails with a receipt that names no commitment", async () => {
    const challenge = await seedChallenge(h, key, "nobody", SAMPLE);
    const proof = await proofFor({ secret: alice.secret, ...SAMPLE });
    const verdict = await submitProof(h, key, challenge, proof);
    expect(verdict.body.reason).toBe("unknown_agent");
    expect(await checked(verdict.body.receipt)).toMatchObject({
      status: "failed",
      reason: "unknown_agent",
      identity_commitment: null,
      checks: ["challenge_owner", "challenge_unexpired", "challenge_pending"],
    });
  });

  test("requests refused before a decision carry no receipt", async () => {
    const challenge = await requestChallenge(h, key, "alice", "login");
    const proof = await proveFor(alice, challenge, "login");
    expect((await submitProof(h, key, challenge.challenge_id, proof)).status).toBe(200);
    const again = await submitProof(h, key, challenge.challenge_id, proof);
    expect(again.body).toEqual({ error: "Challenge already used", verified: false, previous_status: "verified" });
    const late = await requestChallenge(h, key, "alice", "login");
    h.clock.advance(300_001);
    const expired = await submitProof(h, key, late.challenge_id, proof);
    expect(expired.body.receipt).toBeUndefined();
  });

  test("signed before the decision and stored with it: its payload is, byte for byte, the claims of the stored row", async () => {
    const storeReceipt = h.store.storeReceipt.bind(h.store);
    let separateWrites = 0;
    h.store.storeReceipt = (id, receipt) => {
      separateWrites++;
      return storeReceipt(id, receipt);
    };
    try {
      await jwks(); // the signer holds a key, as after main.ts's start
      const good = await requestChallenge(h, key, "alice", "purchase", context);
      const verified = await submitProof(h, key, good.challenge_id, await proveFor(alice, good, "purchase", context));
      const bad = await requestChallenge(h, key, "alice", "purchase", context);
      const failed = await submitProof(h, key, bad.challenge_id, await proveFor(alice, good, "purchase", context));
      expect([verified.status, failed.status]).toEqual([200, 400]);
      for (const [id, receipt] of [
        [good.challenge_id, verified.body.receipt],
        [bad.challenge_id, failed.body.receipt],
      ] as const) {
        const stored = (await h.store.getChallenge(id))!;
        expect(stored.receipt).toBe(receipt);
        const [, payload] = receipt.split(".") as [string, string];
        const { iss } = JSON.parse(Buffer.from(payload, "base64url").toString());
        const fromRow = receiptClaims({ record: { ...stored, receipt: null }, issuer: iss, contextHash: boundContextHash(stored) });
        expect(Buffer.from(payload, "base64url").toString()).toBe(JSON.stringify(fromRow));
      }
      // Both receipts went in with their decisions: no write of their own.
      expect(separateWrites).toBe(0);
    } finally {
      h.store.storeReceipt = storeReceipt;
    }
  });

  test("an idempotent replay returns the same receipt", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase", context);
    const proof = await proveFor(alice, challenge, "purchase", context);
    const body = { challenge_id: challenge.challenge_id, proof };
    const first = await h.call("POST", "/v1/verify/proof", { key, body, headers: { "idempotency-key": "r-1" } });
    const replay = await h.call("POST", "/v1/verify/proof", { key, body, headers: { "idempotency-key": "r-1" } });
    expect(first.status).toBe(200);
    expect(replay.body.receipt).toBe(first.body.receipt);
  });
});

describe("status", () => {
  test("pending: receipt and reason null, the bound context_hash shown; decided: the proof's receipt", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase", context);
    const pending = await readStatus(h, key, challenge.challenge_id);
    expect(pending.body).toMatchObject({ status: "pending", receipt: null, reason: null, context_hash: contextHash(context).toString() });
    const verdict = await submitProof(h, key, challenge.challenge_id, await proveFor(alice, challenge, "purchase", context));
    const decided = await readStatus(h, key, challenge.challenge_id);
    expect(decided.body).toMatchObject({ status: "verified", receipt: verdict.body.receipt, reason: null });
  });

  test("failed: the reason and the failed receipt", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase", context);
    const verdict = await submitProof(
      h,
      key,
      challenge.challenge_id,
      await proofFor({ secret: alice.secret, nonce: SAMPLE.nonce, action: "purchase", context }),
    );
    const status = await readStatus(h, key, challenge.challenge_id);
    expect(status.body).toMatchObject({ status: "failed", reason: "proof_rejected", receipt: verdict.body.receipt, verified_at: null, confidence: null });
  });

  test("expired without a decision: no receipt", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase");
    h.clock.advance(300_001);
    expect((await readStatus(h, key, challenge.challenge_id)).body).toMatchObject({
      status: "expired",
      receipt: null,
      reason: null,
      context_hash: contextHash({}).toString(),
    });
  });

  test("a decision whose process died before its receipt was stored is signed by the status read", async () => {
    const challenge = await requestChallenge(h, key, "alice", "purchase", context);
    // The decision as submitProof stores it, but nobody signs it afterwards.
    const decided = await h.store.decideChallenge(challenge.challenge_id, {
      status: "verified",
      decidedAt: h.clock.now(),
      confidence: 0.99,
      reason: null,
      evidence: {
        checks: ["challenge_owner", "challenge_unexpired", "challenge_pending", "agent_registered", "agent_active", "proof"],
        identityCommitment: alice.identity_commitment,
        vkHash: VK_HASH,
      },
    });
    expect(decided.record?.receipt).toBeNull();
    const first = await readStatus(h, key, challenge.challenge_id);
    expect(await checked(first.body.receipt)).toMatchObject({ jti: challenge.challenge_id, status: "verified" });
    expect((await h.store.getChallenge(challenge.challenge_id))?.receipt).toBe(first.body.receipt);
    expect((await readStatus(h, key, challenge.challenge_id)).body.receipt).toBe(first.body.receipt);
  });
});
