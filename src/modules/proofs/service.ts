// POST /v1/verify/proof, in the processing order of docs/api.md:
// not found → ownership → expired → already used
// → verification. The decision is one conditional update in the store, so of
// any number of concurrent submissions exactly one decides; the others learn
// the winner's status.
import type { CircuitRegistry } from "../../circuits/registry";
import type { Clock } from "../../clock";
import { ApiError } from "../../errors";
import { confidence } from "../../identity/confidence";
import { canonicalContextHash, statementSignals } from "../../identity/encoding";
import { verifySignature } from "../../identity/signature";
import type { Logger } from "../../log";
import type { Metrics } from "../../observability/metrics";
import type { Check } from "../../receipts/claims";
import { type Receipts, receiptOrNull, signReceipt } from "../../receipts/service";
import type { AgentRecord, ApiKeyRecord, ChallengeRecord, Decision, DecisionEvidence, Store } from "../../store/interface";
import type { VerifyFailure } from "../../verifier/types";
import { isExpired, isRetained } from "../challenges/lifecycle";
import type { ProofRequest } from "./model";

/**
 * Why a verification failed: the verifier's own reasons plus what this
 * service checks around the proof (the agent, the signature, the mandate). A
 * closed set, documented in docs/protocol.md.
 */
export type FailureReason =
  | VerifyFailure
  | "unknown_agent"
  | "agent_revoked"
  | "invalid_signature"
  | "signature_not_verifiable"
  /** The proof verified but the agent's mandate forbids the action; `detail` names the constraint. */
  | "mandate_violation"
  /** The challenge's circuit was retired after the challenge was created: its key verifies nothing. */
  | "circuit_retired";

export interface ProofDeps {
  store: Store;
  clock: Clock;
  /** The verifier of each circuit version: a proof is checked against its challenge's circuit. */
  circuits: CircuitRegistry;
  logger: Logger;
  metrics?: Metrics;
  receipts: Receipts;
}

interface Evaluation {
  reason: FailureReason | null;
  signatureValid: boolean;
  /** The checks that passed, in the order they ran; the receipt lists them. */
  checks: Check[];
  /** The commitment the proof was checked against; null when the agent is unknown. */
  identityCommitment: string | null;
  /** The challenge's circuit and its key's hash: what the receipt names. */
  circuit: { id: string; vkHash: string };
}

/** Checked by submitProof before evaluation, and again by the store's conditional update. */
const CHALLENGE_CHECKS: readonly Check[] = ["challenge_owner", "challenge_unexpired", "challenge_pending"];

/** `agent` is the challenge's agent as read with the challenge (store.getChallengeWithAgent). */
async function evaluate(deps: ProofDeps, challenge: ChallengeRecord, agent: AgentRecord | null, input: ProofRequest): Promise<Evaluation> {
  const checks: Check[] = [...CHALLENGE_CHECKS];
  // The circuit the challenge was issued with, whatever is active now. An
  // unknown id throws (a fault: the challenge stays pending), never a verdict.
  const circuit = await deps.circuits.verifierFor(challenge.circuitId);
  const used = { id: circuit.id, vkHash: circuit.vkHash };
  if (!agent) return { reason: "unknown_agent", signatureValid: false, checks, identityCommitment: null, circuit: used };
  checks.push("agent_registered");
  const identityCommitment = agent.identityCommitment;
  const failed = (reason: FailureReason): Evaluation => ({ reason, signatureValid: false, checks, identityCommitment, circuit: used });
  if (agent.revokedAt !== null) return failed("agent_revoked");
  checks.push("agent_active");

  const hashOfContext = canonicalContextHash(challenge.context ?? "{}");
  const signals = statementSignals({
    identityCommitment: BigInt(agent.identityCommitment),
    nonce: challenge.nonce,
    action: challenge.action,
    contextHash: hashOfContext,
  });
  if (!circuit.ok) return failed(circuit.reason);
  const verdict = await circuit.verifier.verify(input.proof, signals);
  if (!verdict.ok) return failed(verdict.reason);
  checks.push("proof");

  const signature = input.agent_signature ?? null;
  if (signature === null) return { reason: null, signatureValid: false, checks, identityCommitment, circuit: used };
  if (agent.signingKey === null) return failed("signature_not_verifiable");
  const check = verifySignature(agent.signingKey, signature, {
    challengeId: challenge.id,
    nonce: challenge.nonce,
    action: challenge.action,
    contextHash: hashOfContext,
  });
  if (check !== "valid") return failed("invalid_signature");
  checks.push("signature");
  return { reason: null, signatureValid: true, checks, identityCommitment, circuit: used };
}

/**
 * The receipt of the decision as proposed, signed before it is stored so that
 * the store writes it in the deciding update (one write fewer). Only when no
 * mandate can change the decision: the agent has none (a mandate's outcome
 * joins the evidence, and the store then leaves the receipt to be signed from
 * the stored row). The claims are read off the record the update will store,
 * so the receipt is the one receiptFor would sign from the stored row. On a
 * signing error nothing is lost: the receipt is signed afterwards as before.
 * Only with a key already loaded (main.ts loads it at start): on a fresh
 * store the first signature writes the key, and that write must not come
 * before the decision.
 */
async function presignedReceipt(deps: ProofDeps, challenge: ChallengeRecord, agent: AgentRecord | null, decision: Decision): Promise<string | null> {
  if (agent?.mandate || !deps.receipts.signer.hasKey) return null;
  const { status, decidedAt, confidence, reason } = decision;
  const record: ChallengeRecord = { ...challenge, status, decidedAt, confidence, reason, evidence: decision.evidence ?? null, receipt: null };
  try {
    return await signReceipt(deps.receipts, record);
  } catch {
    return null;
  }
}

export async function submitProof(deps: ProofDeps, key: ApiKeyRecord, input: ProofRequest, requestId: string | null = null) {
  const { store, clock, logger } = deps;
  // The agent comes with the challenge (one query on PostgreSQL); nothing about it is used before the checks below.
  const found = await store.getChallengeWithAgent(input.challenge_id);
  if (!found || !isRetained(found.challenge, clock.now())) throw new ApiError("challenge_not_found");
  const { challenge, agent } = found;
  // Checked before anything else about the challenge: a stranger learns
  // nothing about it and can never burn it.
  if (challenge.keyId !== key.id) throw new ApiError("unauthorized_session");
  if (isExpired(challenge, clock.now())) throw new ApiError("challenge_expired");
  if (challenge.status !== "pending") throw new ApiError("challenge_used", { previous_status: challenge.status });

  const started = performance.now();
  const { reason, signatureValid, checks, identityCommitment, circuit } = await evaluate(deps, challenge, agent, input);
  const evaluationMs = performance.now() - started;
  const score = confidence({ proofValid: reason === null, signatureValid });
  // Stored with the decision, in the same update, so its receipt can be signed from the row alone.
  const evidence: DecisionEvidence = { checks, identityCommitment, vkHash: circuit.vkHash, circuitId: circuit.id };
  const proposed: Decision = { status: reason === null ? "verified" : "failed", decidedAt: clock.now(), confidence: score, reason, requestId, evidence };
  const decision: Decision = { ...proposed, receipt: await presignedReceipt(deps, challenge, agent, proposed) };
  // The challenge is the mandate scope: the agent's mandate is checked (and
  // its period totals moved) in the transaction that decides; what it
  // consumed joins the evidence, and so the receipt.
  const outcome = await store.decideChallenge(challenge.id, decision, challenge);

  if (!outcome.decided) {
    // Another submission won the race, or the lifetime ran out while we verified.
    const current = outcome.record;
    if (!current) throw new ApiError("challenge_not_found");
    if (current.status === "pending") throw new ApiError("challenge_expired");
    throw new ApiError("challenge_used", { previous_status: current.status });
  }
  // The decision that stood: a verified proof may have been refused by the mandate.
  const decided = outcome.record.reason as FailureReason | null;
  const mandate = outcome.mandate ?? null;
  // Counted only for the submission whose decision stood, so a lost race is not counted twice.
  deps.metrics?.verification(decided === null ? "verified" : "failed", decided, evaluationMs);
  const receipt = await receiptOrNull({ store: deps.store, logger: deps.logger, ...deps.receipts }, outcome.record);

  if (decided !== null) {
    const detail = mandate?.violation ?? undefined;
    logger.info("verification failed", {
      key_id: key.id,
      session_id: challenge.id,
      agent_id: challenge.agentId,
      reason: decided,
      ...(detail ? { detail } : {}),
    });
    throw new ApiError("verification_failed", { reason: decided, ...(detail ? { detail } : {}), receipt });
  }
  return {
    verified: true as const,
    agent_id: challenge.agentId,
    action: challenge.action,
    confidence: score!,
    timestamp: new Date(decision.decidedAt).toISOString(),
    session_id: challenge.id,
    receipt,
  };
}
