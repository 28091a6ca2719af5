// The claim set of a verification receipt, as a pure function of the decided
// challenge record. Everything here is fixed by what the store holds, so a
// receipt signed right after the decision and one signed later by another
// node (after a crash in between) carry the same claims; with Ed25519 being
// deterministic, the same key then gives the same JWS byte for byte.
//
// docs/receipts.md documents each claim; keep the two in step.
import type { ChallengeRecord, StoredStatus } from "../store/interface";

/** The protected header's `typ`: what this JWS is, so it cannot pass for another token. */
export const RECEIPT_TYPE = "zkagent-receipt+jwt";
export const RECEIPT_ALG = "EdDSA";
export const CIRCUIT_ID = "agent_identity";

/**
 * The checks a decision runs, in the order it runs them. A receipt lists those
 * that passed; a failed decision stops at the first that did not (its
 * `reason` says which), so the list is always a prefix of this order, except
 * that `signature` appears only when an agent_signature was sent.
 */
export const CHECKS = [
  /** The API key deciding is the one that created the challenge. */
  "challenge_owner",
  /** Within its 300 s lifetime at decision time. */
  "challenge_unexpired",
  /** Not decided before: one-time use. */
  "challenge_pending",
  /** The agent is registered under the key. */
  "agent_registered",
  /** ... and not revoked. */
  "agent_active",
  /** The Groth16 proof verified against the commitment, nonce, action and context hash. */
  "proof",
  /** The agent_signature verified under the agent's registered Ed25519 key. */
  "signature",
] as const;
export type Check = (typeof CHECKS)[number];

/** What a mandate consumed at decision time; supplied by the mandates feature when present. */
export interface MandateClaim {
  /** Hash identifying the mandate the decision was held against. */
  hash: string;
  /** What the decision consumed of it (amount and period, as that feature defines). */
  consumed: unknown;
}

export interface ReceiptClaimsInput {
  /** A decided challenge (status verified or failed) with its evidence. */
  record: ChallengeRecord;
  /** The service's public URL. */
  issuer: string;
  /** The circuit's public input for the context, decimal. */
  contextHash: string;
  /** The decision's mandate, when the mandates feature attached one. */
  mandate?: MandateClaim | null;
}

export interface ReceiptClaims {
  iss: string;
  sub: string;
  jti: string;
  iat: number;
  session_id: string;
  status: Exclude<StoredStatus, "pending">;
  reason: string | null;
  confidence: number | null;
  action: string;
  context: string | null;
  context_hash: string;
  nonce: string;
  identity_commitment: string | null;
  signature: "absent" | "valid";
  key_id: string;
  circuit: { id: string; vk_hash: string };
  checks: string[];
  mandate?: MandateClaim;
}

export class NotDecidedError extends Error {}

/** The claims of `input.record`'s receipt. Throws NotDecidedError for a pending record or one without evidence. */
export function receiptClaims(input: ReceiptClaimsInput): ReceiptClaims {
  const { record } = input;
  if (record.status === "pending" || record.decidedAt === null) throw new NotDecidedError(`challenge ${record.id} is not decided`);
  const evidence = record.evidence;
  if (!evidence) throw new NotDecidedError(`challenge ${record.id} was decided without evidence`);
  const claims: ReceiptClaims = {
    iss: input.issuer,
    sub: record.agentId,
    jti: record.id,
    iat: Math.floor(record.decidedAt / 1000),
    session_id: record.id,
    status: record.status,
    reason: record.reason,
    confidence: record.confidence,
    action: record.action,
    context: record.context,
    context_hash: input.contextHash,
    nonce: record.nonce,
    identity_commitment: evidence.identityCommitment,
    signature: evidence.checks.includes("signature") ? "valid" : "absent",
    key_id: record.keyId,
    circuit: { id: CIRCUIT_ID, vk_hash: evidence.vkHash },
    checks: [...evidence.checks],
  };
  if (input.mandate) claims.mandate = input.mandate;
  return claims;
}
