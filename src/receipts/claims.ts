// The claim set of a verification receipt, as a pure function of the decided
// challenge record. Everything here is fixed by what the store holds, so a
// receipt signed right after the decision and one signed later by another
// node (after a crash in between) carry the same claims; with Ed25519 being
// deterministic, the same key then gives the same JWS byte for byte.
//
// docs/receipts.md documents each claim; keep the two in step.
import { sessionSubject } from "../identity/subject";
import type { MandateCheck } from "../mandates/enforce";
import type { ChallengeRecord, StoredStatus } from "../store/challenges/records";

/** The protected header's `typ`: what this JWS is, so it cannot pass for another token. */
export const RECEIPT_TYPE = "zkagent-receipt+jwt";
export const RECEIPT_ALG = "EdDSA";
/** The circuit claim of decisions stored before circuits were versioned (their evidence names no version). */
export const UNVERSIONED_CIRCUIT_ID = "agent_identity";

/**
 * The checks a decision runs, in the order it runs them. A receipt lists those
 * that passed; a failed decision stops at the first that did not (its
 * `reason` says which), so the list is always a prefix of this order, except
 * that `signature` appears only when an agent_signature was sent and
 * `mandate` only when the agent has a mandate (docs/mandates.md).
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
  /** A group proof: its message, scope and depth are the challenge's. */
  "group_statement",
  /** A group proof: its root is one the group had with no member removed since (docs/protocol.md). */
  "group_root",
  /** The Groth16 proof verified against the commitment, nonce, action and context hash. */
  "proof",
  /** The agent_signature verified under the agent's registered Ed25519 key. */
  "signature",
  /** The agent's mandate allowed the action, within its period totals (checked in the deciding transaction). */
  "mandate",
  /** A budget spend: its notes root is one of the group's newest checkpoints (in the deciding transaction). */
  "notes_root",
  /** A budget spend: the challenge's day is the current or the previous one at decision. */
  "budget_period",
  /** A budget spend: its nullifier was never seen in the group, and is now recorded with its new note. */
  "nullifier_unspent",
] as const;
export type Check = (typeof CHECKS)[number];
/** The check src/mandates/enforce.ts adds is one of these: were it not, this would not compile (a type-only import, so the receipt verifier loads no mandate code). */
export type MandateCheckListed = Listed<MandateCheck extends Check ? true : false>;
type Listed<T extends true> = T;

/** What a mandate consumed at decision time (docs/mandates.md); from the decision's evidence. */
export interface MandateClaim {
  /** "sha256:<hex>" of the stored mandate: the principal's JWS when signed, else its canonical JSON. */
  hash: string;
  /** Per limit with a period: {limit, period_start, amount, currency} counted; empty for a violation. */
  consumed: unknown;
  /** The constraint a failed decision broke (reason mandate_violation), else null. */
  violation?: string | null;
}

export interface ReceiptClaimsInput {
  /** A decided challenge (status verified or failed) with its evidence. */
  record: ChallengeRecord;
  /** The service's public URL. */
  issuer: string;
  /** The circuit's public input for the context, decimal. */
  contextHash: string;
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
  /** A group session: the group, the root the proof named, and the pseudonym (null when the proof was not read that far). Never a commitment. */
  group?: { id: string; root: string; pseudonym: string | null };
  /** A verified budget spend: its nullifier, new note, amount, currency and payee. Never a member, leaf or pseudonym. */
  spend?: { nullifier: string; commitment: string; amount: string; currency: string; payee: string };
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
    // A group session's subject is the pseudonym: the member at this platform, never its commitment.
    sub: sessionSubject(record).agent_id,
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
    circuit: { id: evidence.circuitId ?? UNVERSIONED_CIRCUIT_ID, vk_hash: evidence.vkHash },
    checks: [...evidence.checks],
  };
  // The mandate check's outcome is stored in the evidence, so every signer of this record names the same mandate.
  if (evidence.mandate) claims.mandate = evidence.mandate;
  if (evidence.group) claims.group = { ...evidence.group };
  if (evidence.spend) claims.spend = { ...evidence.spend };
  return claims;
}
