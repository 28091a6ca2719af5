// The receipt of a decided challenge: signed once, stored on the challenge
// row with a conditional write, and from then on read back. The decider, an
// idempotent replay, a lost race and the status endpoint on any node all get
// the stored one. A decision whose process died before signing is signed by
// the next reader; its claims come only from the stored record, and Ed25519
// is deterministic, so that receipt is the one the decider would have made.
import { canonicalContextHash } from "../identity/encoding";
import type { Logger } from "../log";
import type { ChallengeRecord, ChallengesStore } from "../store/challenges/records";
import { receiptClaims } from "./claims";
import type { ReceiptSigner } from "./signer";

/** What the services need to issue receipts; main.ts builds it once. */
export interface Receipts {
  signer: ReceiptSigner;
  /** The service's public URL, the receipts' `iss`. */
  issuer: string;
}

export interface ReceiptDeps extends Receipts {
  store: ChallengesStore;
}

/** The context hash the proof was bound to: an absent context is bound as {}. */
export const boundContextHash = (record: Pick<ChallengeRecord, "context">): string => canonicalContextHash(record.context ?? "{}").toString();

/**
 * The receipt of a decided record with evidence, signed, not stored: the
 * claims come from the record alone, so signing the record a decision is
 * about to store gives the receipt signing the stored row would (the proof
 * path stores it in the deciding update, src/modules/proofs/service.ts).
 */
export async function signReceipt(deps: Receipts, record: ChallengeRecord): Promise<string> {
  return deps.signer.sign(receiptClaims({ record, issuer: deps.issuer, contextHash: boundContextHash(record) }));
}

/**
 * The receipt of `record`, signing and storing it when none is stored yet;
 * null while the challenge is undecided (pending or expired without a
 * decision) or was decided before receipts existed (no evidence stored).
 */
export async function receiptFor(deps: ReceiptDeps, record: ChallengeRecord): Promise<string | null> {
  if (record.status === "pending") return null;
  if (record.receipt) return record.receipt;
  if (!record.evidence) return null;
  const receipt = await signReceipt(deps, record);
  // Another node may have stored its receipt first (signed with another key
  // across a rotation): the stored one is the answer everywhere.
  return (await deps.store.storeReceipt(record.id, receipt)) ?? receipt;
}

/**
 * receiptFor for an answer that must not fail because of it: a signing or
 * store problem (a sealed key and no secret, the database gone) is logged and
 * reads as null. The decision stands; the next status read signs it.
 */
export async function receiptOrNull(deps: ReceiptDeps & { logger: Logger }, record: ChallengeRecord): Promise<string | null> {
  try {
    return await receiptFor(deps, record);
  } catch (error) {
    deps.logger.error("receipt not signed", { session_id: record.id, error: error instanceof Error ? error.message : String(error) });
    return null;
  }
}
