// POST /v1/verify/proof, in the processing order of docs/api.md:
// not found → ownership → expired → already used
// → verification. The decision is one conditional update in the store, so of
// any number of concurrent submissions exactly one decides; the others learn
// the winner's status.
//
// Proof work per challenge is bounded whatever one key sends at once (issue
// 18): before its proof check a submission claims the challenge in the
// database (store.claimChallenge, a lease of CLAIM_LEASE_MS), so at most one
// verification per challenge is in flight across every node. Submissions in
// the same process join the one in flight and, once it is decided, answer
// `Challenge already used` with its status, without a proof check; a
// submission on another node that finds the claim taken polls the row for
// up to LOSER_WAIT_MS and answers the same once it is decided, `pending` as
// `previous_status` if it is not decided by then (docs/api.md, Decisions). A
// claim whose lease ran out (its node died) is taken over by the next
// submission, which then verifies its own proof.
import type { CircuitRegistry } from "../../circuits/registry";
import type { Clock } from "../../clock";
import { ApiError, invalidField } from "../../errors";
import { confidence } from "../../identity/confidence";
import { canonicalContextHash, statementSignals } from "../../identity/encoding";
import { verifySignature } from "../../identity/signature";
import type { Logger } from "../../log";
import type { Metrics, SubmissionOutcome } from "../../observability/metrics";
import type { Check } from "../../receipts/claims";
import { type Receipts, receiptOrNull, signReceipt } from "../../receipts/service";
import type { AgentRecord } from "../../store/agents/records";
import type { ChallengeRecord, ChallengesStore, DecisionEvidence } from "../../store/challenges/records";
import type { Decision, DecisionsStore, SpendScope } from "../../store/decisions/records";
import type { GroupsStore } from "../../store/groups/records";
import type { ApiKeyRecord } from "../../store/keys/records";
import type { VerifyFailure } from "../../verifier/types";
import { type SpendSubject, sessionSubject } from "../../identity/subject";
import { budgetGroup, currencyField, majorUnits, payeeField } from "../../budgets/encoding";
import { parseSpendProof } from "../../budgets/proof";
import { spendPublicSignals } from "../../budgets/statement";
import { SETTINGS } from "../../config";
import { isExpired, isRetained } from "../challenges/lifecycle";
import { PROOF_STRING_REQUIREMENT, type ProofRequest } from "./model";
import { challengeScope, groupMessage } from "../../groups/derivation";
import type { JsonObject } from "../../identity/encoding";
import { parseSemaphoreProof, publicSignals, unpackPoints } from "../../groups/proof-object";
import type { MandateScope } from "../../mandates/enforce";

/** The store's aggregates this module uses. */
type Stores = ChallengesStore & DecisionsStore & GroupsStore;

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
  | "circuit_retired"
  /** Group proofs: the proof's message, scope or depth is not the challenge's. */
  | "message_mismatch"
  | "scope_mismatch"
  | "depth_mismatch"
  /** Group proofs: the root is not one of the group's acceptable roots (a non-member's tree, or a member removed since). */
  | "not_member"
  /** Budget spends: the notes root is not one of the group's newest checkpoints (sync the notes feed and prove again). */
  | "stale_notes_root"
  /** Budget spends: the challenge's day is neither the current nor the previous one at decision. */
  | "period_ended"
  /** Budget spends: the nullifier was spent before (a replay, a re-randomised proof, or a concurrent spend of the same note that won). */
  | "already_spent";

export interface ProofDeps {
  store: Stores;
  clock: Clock;
  /** The verifier of each circuit version: a proof is checked against its challenge's circuit. */
  circuits: CircuitRegistry;
  logger: Logger;
  metrics?: Metrics;
  receipts: Receipts;
  limits?: { budgetCheckpointWindow?: number };
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
  /** A group challenge: the group, the root the proof named, the pseudonym once the proof verified. */
  group?: { id: string; root: string; pseudonym: string | null };
  /** A budget spend whose proof verified: what its deciding transaction checks and writes, and what the answer names. */
  spend?: { scope: SpendScope; evidence: SpendSubject };
}

/**
 * A budget spend's proof (issue 40, docs/api.md "Budget spends"): its shape,
 * then Groth16 with this service's verifier against the budget circuit's key
 * and the 13 public signals rebuilt from the stored challenge and the
 * proof's nullifier, commitment and two roots. The roots, the period and
 * the nullifier are judged in the deciding transaction (decideSpend).
 */
async function evaluateBudget(deps: ProofDeps, challenge: ChallengeRecord, input: ProofRequest): Promise<Evaluation> {
  const checks: Check[] = [...CHALLENGE_CHECKS];
  const circuit = await deps.circuits.verifierFor(challenge.circuitId);
  const used = { id: circuit.id, vkHash: circuit.vkHash };
  const failed = (reason: FailureReason): Evaluation => ({ reason, signatureValid: false, checks, identityCommitment: null, circuit: used });
  const proof = parseSpendProof(input.proof);
  if (!proof) return failed("invalid_proof_format");
  if (!circuit.ok) return failed(circuit.reason);
  const budget = challenge.budget!;
  const groupId = challenge.groupId!;
  const signals = spendPublicSignals(proof.nullifier, proof.commitment, {
    group: budgetGroup(groupId),
    rootEnrolment: proof.enrolmentRoot,
    rootNotes: proof.notesRoot,
    periods: {
      day: BigInt(budget.periods.day),
      week: BigInt(budget.periods.week),
      month: BigInt(budget.periods.month),
      minute: BigInt(budget.periods.minute),
    },
    amount: BigInt(budget.amount),
    currency: currencyField(budget.currency),
    payee: payeeField(budget.payee),
    ctx: BigInt(budget.ctx),
  });
  deps.metrics?.proofCheck(challenge.keyId);
  const verdict = await circuit.verifier.verify(proof.groth16, signals, { tenant: challenge.keyId });
  if (!verdict.ok) return failed(verdict.reason);
  checks.push("proof");
  // A spend carries no agent key: nothing a signature could be checked against.
  if ((input.agent_signature ?? null) !== null) return failed("signature_not_verifiable");
  const nullifier = proof.nullifier.toString();
  const commitment = proof.commitment.toString();
  return {
    reason: null,
    signatureValid: false,
    checks,
    identityCommitment: null,
    circuit: used,
    spend: {
      scope: {
        groupId,
        enrolmentRoot: proof.enrolmentRoot.toString(),
        notesRoot: proof.notesRoot.toString(),
        nullifier,
        commitment,
        day: Number(budget.periods.day),
        window: deps.limits?.budgetCheckpointWindow ?? SETTINGS.budgetCheckpointWindow.default,
      },
      evidence: { nullifier, commitment, amount: majorUnits(BigInt(budget.amount), budget.currency), currency: budget.currency, payee: budget.payee },
    },
  };
}

/**
 * A group challenge's proof (issue 24): the stock Semaphore v4 proof object,
 * checked against the challenge's message, scope and depth, its root against
 * the group's acceptable roots (read from the store now; the deciding
 * transaction reads them again), then verified with this service's own
 * Groth16 verifier against that depth's key.
 */
async function evaluateGroup(deps: ProofDeps, challenge: ChallengeRecord, input: ProofRequest): Promise<Evaluation> {
  const checks: Check[] = [...CHALLENGE_CHECKS];
  const circuit = await deps.circuits.verifierFor(challenge.circuitId);
  const used = { id: circuit.id, vkHash: circuit.vkHash };
  const groupId = challenge.groupId!;
  const proof = parseSemaphoreProof(input.proof);
  const group = { id: groupId, root: proof?.merkleTreeRoot ?? challenge.groupRoot!, pseudonym: null as string | null };
  const failed = (reason: FailureReason): Evaluation => ({ reason, signatureValid: false, checks, identityCommitment: null, circuit: used, group });
  if (!proof) return failed("invalid_proof_format");
  if (proof.message !== groupMessage(challenge).toString()) return failed("message_mismatch");
  // The stored context is the canonical text the service wrote: its @request.origin, if any, names the platform (groups/derivation.ts).
  const context = challenge.context === null ? null : (JSON.parse(challenge.context) as JsonObject);
  if (proof.scope !== challengeScope({ keyId: challenge.keyId, groupId, context }).toString()) return failed("scope_mismatch");
  if (proof.merkleTreeDepth !== challenge.groupDepth) return failed("depth_mismatch");
  checks.push("group_statement");
  if (!(await deps.store.acceptableRoot(groupId, proof.merkleTreeRoot, deps.clock.now()))) return failed("not_member");
  checks.push("group_root");
  if (!circuit.ok) return failed(circuit.reason);
  deps.metrics?.proofCheck(challenge.keyId);
  const verdict = await circuit.verifier.verify(unpackPoints(proof.points), publicSignals(proof), { tenant: challenge.keyId });
  if (!verdict.ok) return failed(verdict.reason);
  checks.push("proof");
  // Only a verified proof's nullifier is the member's pseudonym.
  group.pseudonym = proof.nullifier;
  if ((input.agent_signature ?? null) !== null) return failed("signature_not_verifiable");
  return { reason: null, signatureValid: false, checks, identityCommitment: null, circuit: used, group };
}

/** Checked by submitProof before evaluation, and again by the store's conditional update. */
const CHALLENGE_CHECKS: readonly Check[] = ["challenge_owner", "challenge_unexpired", "challenge_pending"];

/** `agent` is the challenge's agent as read with the challenge (store.getChallengeWithAgent). */
async function evaluate(deps: ProofDeps, challenge: ChallengeRecord, agent: AgentRecord | null, input: ProofRequest): Promise<Evaluation> {
  if (challenge.budget) return evaluateBudget(deps, challenge, input);
  if (challenge.groupId) return evaluateGroup(deps, challenge, input);
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
  // Counted per key: the pairing work a key's submissions cause (at most one check per challenge at a time).
  deps.metrics?.proofCheck(challenge.keyId);
  const verdict = await circuit.verifier.verify(input.proof as string, signals, { tenant: challenge.keyId });
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

/**
 * How long a claim holds a challenge for the submission verifying it. A
 * verification takes milliseconds (tens under load, seconds only when a node
 * is overloaded); the lease only matters when the claimant died, and then
 * bounds how long the challenge cannot be verified. A claimant slower than
 * its lease still decides (the decision does not need the claim): at worst a
 * second submission verifies too, and the conditional update keeps one.
 */
export const CLAIM_LEASE_MS = 10_000;
/** How long a submission that found the challenge claimed on another node waits for its decision before answering `pending`. */
export const LOSER_WAIT_MS = 2_000;
const POLL_FIRST_MS = 5;
const POLL_MAX_MS = 100;

/** How a verification in flight in this process ended, for the submissions that joined it: a status, or null when it decided nothing (a fault). */
type Settled = "verified" | "failed" | "pending" | "expired" | "gone" | null;

/** Per store (tests run several in one process), the verifications in flight in this process by challenge id. */
const inFlight = new WeakMap<Stores, Map<string, Promise<Settled>>>();
const flightsOf = (store: Stores) => {
  let flights = inFlight.get(store);
  if (!flights) inFlight.set(store, (flights = new Map()));
  return flights;
};

/** The answer to a submission that did not verify: the challenge's status as decided by another. */
function answerFor(settled: Exclude<Settled, null>): ApiError {
  if (settled === "expired") return new ApiError("challenge_expired");
  if (settled === "gone") return new ApiError("challenge_not_found");
  return new ApiError("challenge_used", { previous_status: settled });
}

/** What a record read back says to a submission that could not claim it. */
function settledOf(record: ChallengeRecord | null, now: number): Exclude<Settled, null> | "claimed" {
  if (!record) return "gone";
  if (record.status !== "pending") return record.status;
  if (isExpired(record, now)) return "expired";
  return "claimed";
}

export async function submitProof(deps: ProofDeps, key: ApiKeyRecord, input: ProofRequest, requestId: string | null = null) {
  try {
    const result = await submit(deps, key, input, requestId);
    deps.metrics?.proofSubmission(key.id, "verified");
    return result;
  } catch (error) {
    deps.metrics?.proofSubmission(key.id, submissionOutcome(error));
    throw error;
  }
}

const ANSWERED: ReadonlySet<string> = new Set(["challenge_used", "challenge_expired", "challenge_not_found", "unauthorized_session"]);
function submissionOutcome(error: unknown): SubmissionOutcome {
  if (!(error instanceof ApiError)) return "error";
  if (error.kind === "verification_failed") return "failed";
  return ANSWERED.has(error.kind) ? (error.kind as SubmissionOutcome) : "error";
}

async function submit(deps: ProofDeps, key: ApiKeyRecord, input: ProofRequest, requestId: string | null) {
  const { store, clock } = deps;
  // The agent comes with the challenge (one query on PostgreSQL); nothing about it is used before the checks below.
  const found = await store.getChallengeWithAgent(input.challenge_id);
  // A proof object is a group challenge's only: for any other id the answer is the one agent clients always had.
  if (typeof input.proof !== "string" && !found?.challenge.groupId) throw invalidField("proof", PROOF_STRING_REQUIREMENT);
  if (!found || !isRetained(found.challenge, clock.now())) throw new ApiError("challenge_not_found");
  const { challenge, agent } = found;
  // Checked before anything else about the challenge: a stranger learns
  // nothing about it and can never burn it.
  if (challenge.keyId !== key.id) throw new ApiError("unauthorized_session");
  if (isExpired(challenge, clock.now())) throw new ApiError("challenge_expired");
  if (challenge.status !== "pending") throw new ApiError("challenge_used", { previous_status: challenge.status });

  // One verification per challenge in flight in this process: join it.
  const flights = flightsOf(store);
  for (let joined = 0; ; joined++) {
    const running = flights.get(challenge.id);
    if (!running) break;
    const settled = await running;
    if (settled !== null) throw answerFor(settled);
    // It decided nothing (a verifier fault, answered 500): try once to verify this one instead.
    if (joined > 0) throw answerFor("pending");
  }
  let settle!: (settled: Settled) => void;
  const flight = new Promise<Settled>((resolve) => (settle = resolve));
  flights.set(challenge.id, flight);
  try {
    return await claimAndDecide({ deps, key, input, requestId, challenge, agent }, settle);
  } finally {
    settle(null); // a no-op once settled
    if (flights.get(challenge.id) === flight) flights.delete(challenge.id);
  }
}

/** One submission, its challenge checked pending and its own (submit): what claiming and deciding need. */
interface Submission {
  deps: ProofDeps;
  key: ApiKeyRecord;
  input: ProofRequest;
  requestId: string | null;
  challenge: ChallengeRecord;
  agent: AgentRecord | null;
}

/**
 * This process's one verification of the challenge: claim it in the
 * database (or wait for the claimant elsewhere), verify, decide. `settle`
 * tells the submissions that joined it how it ended.
 */
async function claimAndDecide(submission: Submission, settle: (settled: Settled) => void) {
  const { deps, challenge } = submission;
  const token = crypto.randomUUID();
  const claimed = await claimOrWait(deps, challenge, token);
  if (claimed !== true) {
    settle(claimed);
    throw answerFor(claimed);
  }
  try {
    const result = await decide(submission);
    settle("verified");
    return result;
  } catch (error) {
    if (error instanceof ApiError) {
      // A decision (failed, or lost to another) or the expiry: what joiners answer too.
      if (error.kind === "verification_failed") settle("failed");
      else if (error.kind === "challenge_used") settle(error.body.previous_status as Settled);
      else if (error.kind === "challenge_expired") settle("expired");
      else if (error.kind === "challenge_not_found") settle("gone");
    } else {
      // Nothing decided (a verifier or store fault): free the challenge at once rather than after the lease.
      await deps.store.releaseClaim(challenge.id, token).catch(() => {});
    }
    throw error;
  }
}

/**
 * true once this submission holds the claim; otherwise how the challenge was
 * settled by the claimant elsewhere, or "pending" when it is still being
 * verified after LOSER_WAIT_MS. A lapsed claim (its node died) is taken over.
 */
async function claimOrWait(deps: ProofDeps, challenge: ChallengeRecord, token: string): Promise<true | Exclude<Settled, null>> {
  const { store, clock } = deps;
  const waitUntil = performance.now() + LOSER_WAIT_MS;
  let pause = POLL_FIRST_MS;
  for (;;) {
    const now = clock.now();
    const claim = await store.claimChallenge(challenge.id, { token, now, until: now + CLAIM_LEASE_MS });
    if (claim.claimed) return true;
    const state = settledOf(claim.record, clock.now());
    if (state !== "claimed") return state;
    const left = waitUntil - performance.now();
    if (left <= 0) return "pending";
    await Bun.sleep(Math.min(pause, left));
    pause = Math.min(pause * 2, POLL_MAX_MS);
  }
}

/** The proof checked and the challenge decided by this submission, which holds its claim. */
async function decide({ deps, key, input, requestId, challenge, agent }: Submission) {
  const { store, clock, logger } = deps;
  const started = performance.now();
  const { reason, signatureValid, checks, identityCommitment, circuit, group, spend } = await evaluate(deps, challenge, agent, input);
  const evaluationMs = performance.now() - started;
  const score = confidence({ proofValid: reason === null, signatureValid });
  // Stored with the decision, in the same update, so its receipt can be signed from the row alone.
  const evidence: DecisionEvidence = {
    checks,
    identityCommitment,
    vkHash: circuit.vkHash,
    circuitId: circuit.id,
    ...(group ? { group } : {}),
    ...(spend ? { spend: spend.evidence } : {}),
  };
  const proposed: Decision = { status: reason === null ? "verified" : "failed", decidedAt: clock.now(), confidence: score, reason, requestId, evidence };
  // A spend's decision may be refused in its transaction: its receipt is signed from the stored row.
  const decision: Decision = { ...proposed, receipt: spend ? null : await presignedReceipt(deps, challenge, agent, proposed) };
  // The challenge is the mandate scope: the agent's mandate is checked (and
  // its period totals moved) in the transaction that decides; what it
  // consumed joins the evidence, and so the receipt.
  // A group's mandate is held per pseudonym, and its root judged again in that transaction.
  const scope: MandateScope =
    group?.pseudonym && reason === null ? { ...challenge, group: { groupId: group.id, root: group.root, pseudonym: group.pseudonym } } : challenge;
  const outcome =
    spend && reason === null ? await store.decideSpend(challenge.id, decision, spend.scope) : await store.decideChallenge(challenge.id, decision, scope);

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
    ...verifiedSubject(outcome.record),
    action: challenge.action,
    confidence: score!,
    timestamp: new Date(decision.decidedAt).toISOString(),
    session_id: challenge.id,
    receipt,
  };
}

/** A verified decision's subject (sessionSubject): a verified group proof always named its pseudonym, a verified spend its spend. */
function verifiedSubject(
  record: ChallengeRecord,
): { agent_id: string } | { agent_id: string; group_id: string; pseudonym: string } | { agent_id: string; group_id: string; spend: SpendSubject } {
  const subject = sessionSubject(record);
  if (!("group_id" in subject)) return subject;
  if ("spend" in subject) {
    if (subject.spend === null) throw new Error(`verified budget session ${record.id} has no spend`);
    return { ...subject, spend: subject.spend };
  }
  if (subject.pseudonym === null) throw new Error(`verified group session ${record.id} has no pseudonym`);
  return { ...subject, pseudonym: subject.pseudonym };
}
