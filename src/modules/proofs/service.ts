// POST /v1/verify/proof, in the order of service-interface.md §4.2 and the
// precedence of decisions.md: not found → ownership → expired → already used
// → verification. The decision is one conditional update in the store, so of
// any number of concurrent submissions exactly one decides; the others learn
// the winner's status.
import type { Clock } from "../../clock";
import { ApiError } from "../../errors";
import { confidence } from "../../identity/confidence";
import { canonicalContextHash, statementSignals } from "../../identity/encoding";
import { verifySignature } from "../../identity/signature";
import type { Logger } from "../../log";
import type { Metrics } from "../../observability/metrics";
import type { ApiKeyRecord, ChallengeRecord, Decision, Store } from "../../store/interface";
import type { Verifier, VerifyFailure } from "../../verifier/types";
import { isExpired, isRetained } from "../challenges/lifecycle";
import type { ProofRequest } from "./model";

/**
 * Why a verification failed: the verifier's own reasons plus what this
 * service checks around the proof (the agent, the signature). A closed set,
 * documented in docs/protocol.md.
 */
export type FailureReason = VerifyFailure | "unknown_agent" | "agent_revoked" | "invalid_signature" | "signature_not_verifiable";

export interface ProofDeps {
  store: Store;
  clock: Clock;
  verifier: Verifier;
  logger: Logger;
  metrics?: Metrics;
}

interface Evaluation {
  reason: FailureReason | null;
  signatureValid: boolean;
}

async function evaluate(deps: ProofDeps, challenge: ChallengeRecord, input: ProofRequest): Promise<Evaluation> {
  const agent = await deps.store.getAgent(challenge.keyId, challenge.agentId);
  if (!agent) return { reason: "unknown_agent", signatureValid: false };
  if (agent.revokedAt !== null) return { reason: "agent_revoked", signatureValid: false };

  const hashOfContext = canonicalContextHash(challenge.context ?? "{}");
  const signals = statementSignals({
    identityCommitment: BigInt(agent.identityCommitment),
    nonce: challenge.nonce,
    action: challenge.action,
    contextHash: hashOfContext,
  });
  const verdict = await deps.verifier.verify(input.proof, signals);
  if (!verdict.ok) return { reason: verdict.reason, signatureValid: false };

  const signature = input.agent_signature ?? null;
  if (signature === null) return { reason: null, signatureValid: false };
  if (agent.signingKey === null) return { reason: "signature_not_verifiable", signatureValid: false };
  const check = verifySignature(agent.signingKey, signature, {
    challengeId: challenge.id,
    nonce: challenge.nonce,
    action: challenge.action,
    contextHash: hashOfContext,
  });
  return check === "valid" ? { reason: null, signatureValid: true } : { reason: "invalid_signature", signatureValid: false };
}


export async function submitProof(deps: ProofDeps, key: ApiKeyRecord, input: ProofRequest, requestId: string | null = null) {
  const { store, clock, logger } = deps;
  const challenge = await store.getChallenge(input.challenge_id);
  if (!challenge || !isRetained(challenge, clock.now())) throw new ApiError("challenge_not_found");
  // Checked before anything else about the challenge: a stranger learns
  // nothing about it and can never burn it.
  if (challenge.keyId !== key.id) throw new ApiError("unauthorized_session");
  if (isExpired(challenge, clock.now())) throw new ApiError("challenge_expired");
  if (challenge.status !== "pending") throw new ApiError("challenge_used", { previous_status: challenge.status });

  const started = performance.now();
  const { reason, signatureValid } = await evaluate(deps, challenge, input);
  const evaluationMs = performance.now() - started;
  const score = confidence({ proofValid: reason === null, signatureValid });
  const decision: Decision = { status: reason === null ? "verified" : "failed", decidedAt: clock.now(), confidence: score, reason, requestId };
  const outcome = await store.decideChallenge(challenge.id, decision);

  if (!outcome.decided) {
    // Another submission won the race, or the lifetime ran out while we verified.
    const current = outcome.record;
    if (!current) throw new ApiError("challenge_not_found");
    if (current.status === "pending") throw new ApiError("challenge_expired");
    throw new ApiError("challenge_used", { previous_status: current.status });
  }
  // Counted only for the submission whose decision stood, so a lost race is not counted twice.
  deps.metrics?.verification(reason === null ? "verified" : "failed", reason, evaluationMs);

  if (reason !== null) {
    logger.info("verification failed", { key_id: key.id, session_id: challenge.id, agent_id: challenge.agentId, reason });
    throw new ApiError("verification_failed", { reason });
  }
  return {
    verified: true as const,
    agent_id: challenge.agentId,
    action: challenge.action,
    confidence: score!,
    timestamp: new Date(decision.decidedAt).toISOString(),
    session_id: challenge.id,
  };
}
