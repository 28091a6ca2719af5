// The claim set as a pure function of the decided record.
import { describe, expect, test } from "bun:test";
import { CHECKS, NotDecidedError, receiptClaims } from "../../src/receipts/claims";
import type { ChallengeRecord } from "../../src/store/interface";

const decidedAt = 1_795_000_123_987;
const record: ChallengeRecord = {
  id: "ch_abc",
  keyId: "key_123",
  agentId: "shopper-1",
  action: "purchase",
  context: '{"amount":20,"currency":"EUR"}',
  nonce: "0a".repeat(31),
  createdAt: decidedAt - 5_000,
  expiresAt: decidedAt + 295_000,
  status: "verified",
  decidedAt,
  confidence: 0.999,
  reason: null,
  // An agent's decision: none of a group's or a budget spend's checks.
  evidence: {
    checks: CHECKS.slice(0, CHECKS.indexOf("mandate") + 1).filter((check) => !check.startsWith("group_")),
    identityCommitment: "987654321",
    vkHash: "sha256:" + "cd".repeat(32),
  },
  receipt: null,
};
const input = { record, issuer: "https://zkagent.example", contextHash: "12345" };

describe("receiptClaims", () => {
  test("every claim comes from the record, the issuer and the context hash", () => {
    expect(receiptClaims(input)).toEqual({
      iss: "https://zkagent.example",
      sub: "shopper-1",
      jti: "ch_abc",
      iat: 1_795_000_123, // seconds, rounded down
      session_id: "ch_abc",
      status: "verified",
      reason: null,
      confidence: 0.999,
      action: "purchase",
      context: '{"amount":20,"currency":"EUR"}',
      context_hash: "12345",
      nonce: "0a".repeat(31),
      identity_commitment: "987654321",
      signature: "valid",
      key_id: "key_123",
      circuit: { id: "agent_identity", vk_hash: "sha256:" + "cd".repeat(32) },
      checks: ["challenge_owner", "challenge_unexpired", "challenge_pending", "agent_registered", "agent_active", "proof", "signature", "mandate"],
    });
  });

  test("the circuit claim names the version the evidence stored; evidence from before versions names the bare circuit", () => {
    expect(receiptClaims(input).circuit.id).toBe("agent_identity");
    const versioned = receiptClaims({ ...input, record: { ...record, evidence: { ...record.evidence!, circuitId: "agent_identity-0123456789abcdef" } } });
    expect(versioned.circuit).toEqual({ id: "agent_identity-0123456789abcdef", vk_hash: record.evidence!.vkHash });
  });

  test("the mandate claim comes from the evidence the decision stored, so any later signer names the same mandate", () => {
    const mandate = {
      hash: "sha256:" + "ef".repeat(32),
      consumed: [{ limit: 0, period_start: "2026-11-21T00:00:00.000Z", amount: "20", currency: "EUR" }],
      violation: null,
    };
    const claims = receiptClaims({ ...input, record: { ...record, evidence: { ...record.evidence!, mandate } } });
    expect(claims.mandate).toEqual(mandate);
    expect(receiptClaims(input).mandate).toBeUndefined();
  });

  test("without a passed signature check the signature claim is absent", () => {
    const checks = CHECKS.filter((c) => c !== "signature");
    const claims = receiptClaims({ ...input, record: { ...record, confidence: 0.99, evidence: { ...record.evidence!, checks } } });
    expect(claims.signature).toBe("absent");
    expect(claims.checks).toEqual(checks);
  });

  test("a failed decision carries its reason, no confidence, and the checks that passed", () => {
    const failed: ChallengeRecord = {
      ...record,
      status: "failed",
      confidence: null,
      reason: "proof_rejected",
      context: null,
      evidence: {
        checks: ["challenge_owner", "challenge_unexpired", "challenge_pending", "agent_registered", "agent_active"],
        identityCommitment: "987654321",
        vkHash: "sha256:00",
      },
    };
    const claims = receiptClaims({ ...input, record: failed });
    expect(claims).toMatchObject({ status: "failed", reason: "proof_rejected", confidence: null, context: null, signature: "absent" });
    expect(claims.checks).not.toContain("proof");
  });

  test("mandate is emitted only when the evidence has one", () => {
    expect("mandate" in receiptClaims(input)).toBe(false);
    expect("mandate" in receiptClaims({ ...input, record: { ...record, evidence: { ...record.evidence!, mandate: null } } })).toBe(false);
  });

  test("the same record gives the same claims (and JSON) every time", () => {
    expect(JSON.stringify(receiptClaims(input))).toBe(JSON.stringify(receiptClaims(structuredClone(input))));
  });

  test("a pending record, or one decided without evidence, has no receipt", () => {
    expect(() => receiptClaims({ ...input, record: { ...record, status: "pending", decidedAt: null } })).toThrow(NotDecidedError);
    expect(() => receiptClaims({ ...input, record: { ...record, evidence: null } })).toThrow(NotDecidedError);
  });
});
