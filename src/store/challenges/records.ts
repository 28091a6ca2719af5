// Challenges: creation under the key's rate window, reads, the verification claim, receipts, expiry.
// The types the domain sees and what it asks of this aggregate; sqlite.ts and
// postgres.ts beside this file answer it. Times are Unix milliseconds.
import type { MandateDecision } from "../../mandates/enforce";
import type { AgentRecord } from "../agents/records";
import type { SpendSubject } from "../../identity/subject";

export type StoredStatus = "pending" | "verified" | "failed";

export interface ChallengeRecord {
  id: string;
  keyId: string;
  agentId: string;
  action: string;
  /** The context as canonical JSON (RFC 8785), or null when none was given. */
  context: string | null;
  nonce: string;
  createdAt: number;
  expiresAt: number;
  status: StoredStatus;
  decidedAt: number | null;
  confidence: number | null;
  reason: string | null;
  /** The request that created it; written to the audit trail, not read back. */
  requestId?: string | null;
  /** What the decision rested on, stored with it; null while pending. */
  evidence?: DecisionEvidence | null;
  /** The signed receipt (compact JWS) of the decision; null until signed. */
  receipt?: string | null;
  /**
   * The circuit that was active when the challenge was created: its proof is
   * verified against that circuit's key. Null or absent on rows from before
   * circuits were versioned (the shipped circuit, src/circuits/registry.ts).
   */
  circuitId?: string | null;
  /** A group challenge (issue 24): its group, the group's root when it was created, and the depth to prove at; absent for an agent challenge. */
  groupId?: string | null;
  groupRoot?: string | null;
  groupDepth?: number | null;
  /** A budget spend's challenge (issue 40): the public values the service set, fixed at creation; absent otherwise. */
  budget?: BudgetChallenge | null;
}

/**
 * What a budget challenge binds besides its nonce, action and context
 * (docs/protocol.md, "The statement"), as decimal strings: every value the
 * service rebuilds the spend's public signals from, read from one clock
 * reading at creation and never recomputed.
 */
export interface BudgetChallenge {
  /** The payee's origin (RFC 6454 serialization): one of the asking key's registered origins. */
  payee: string;
  /** Minor units. */
  amount: string;
  currency: string;
  periods: { day: string; week: string; month: string; minute: string };
  /** budgetMessage({nonce, action, context}). */
  ctx: string;
}

/**
 * What a decision rested on, fixed at decision time so that a receipt signed
 * later (after a crash between decision and signature) says exactly what a
 * receipt signed at once would have said.
 */
export interface DecisionEvidence {
  /** The checks that passed, in the order they ran (vocabulary: src/receipts/claims.ts). */
  checks: string[];
  /** The agent's commitment the proof was checked against; null when the agent was unknown. */
  identityCommitment: string | null;
  /** "sha256:<hex>" of the verification key used. */
  vkHash: string;
  /** The circuit version whose key that is (absent in decisions from before circuits were versioned). */
  circuitId?: string;
  /** The agent's mandate the decision was checked against, and what it consumed or which constraint it broke. */
  mandate?: MandateDecision | null;
  /** A group decision: the group, the root the proof named, and the pseudonym (the proof's nullifier) when the proof was read. Never a commitment. */
  group?: { id: string; root: string; pseudonym: string | null } | null;
  /** A budget spend (issue 40): what it revealed and paid, once the proof verified; never a member, leaf or pseudonym. */
  spend?: SpendEvidence | null;
}

/** A verified budget spend as the receipt, the status and the webhook event name it (amount in major units as the currency writes it, "20.00"). */
export type SpendEvidence = SpendSubject;

export interface RateWindow {
  /** Start of the fixed one-minute window the request falls in. */
  windowStart: number;
  /** Requests allowed in the sliding minute (src/sliding-window.ts); 0 means unlimited. */
  limit: number;
  /** How much of the previous minute (windowStart − 60 s) the sliding minute still covers; absent: 0 (a fixed window). */
  previousWeight?: number;
}

/** `used`: the requests in the sliding minute, this one included (the rate limit headers); a refusal's `previous` and `current`: the windows' counts, for Retry-After. */
export type CreateChallengeResult = { created: true; used: number } | { created: false; used: number; previous: number; current: number };

/**
 * A claim on a pending challenge: the right to run its one verification
 * (issue 18). `token` names the claimant; the claim lapses at `until` (Unix
 * ms), so a node that died holding it strands the challenge no longer than
 * that. Judged at `now` against the challenge's expiry, like a decision.
 */
export interface Claim {
  token: string;
  now: number;
  until: number;
}

/**
 * `claimed` only for the one caller whose conditional update took the claim;
 * otherwise the challenge as it now is (decided, expired, or pending under
 * another claimant's unexpired claim), or null when there is none.
 */
export type ClaimResult = { claimed: true } | { claimed: false; record: ChallengeRecord | null };

export interface ChallengesStore {
  /**
   * Counts the request in the key's rate window and, when within the limit,
   * stores the challenge and increments the key's usage counter — one
   * transaction. `used` is the window's count including this request.
   */
  createChallenge(challenge: ChallengeRecord, window: RateWindow): Promise<CreateChallengeResult>;

  getChallenge(id: string): Promise<ChallengeRecord | null>;

  /**
   * The challenge and its agent (the row of the challenge's key and agent id,
   * revoked or not; null when there is none), read together: the proof path
   * needs both, and on PostgreSQL a join is one round trip instead of two.
   */
  getChallengeWithAgent(id: string): Promise<{ challenge: ChallengeRecord; agent: AgentRecord | null } | null>;

  /**
   * Claims a challenge for verification, with one conditional update: only a
   * challenge still pending, not past `expiresAt` at `claim.now`, and not
   * under another claim that lasts past `claim.now` is claimed. However many
   * submissions race on however many nodes, at most one holds the claim at a
   * time, so one key's flood costs one proof check per challenge (the others
   * wait for its decision). The claim gates no decision: decideChallenge
   * still decides any pending challenge, so a claimant slower than its lease
   * loses nothing it acknowledged.
   */
  claimChallenge(id: string, claim: Claim): Promise<ClaimResult>;

  /** Drops the claim `token` holds (its verification ended without a decision), so another submission need not wait for the lease. */
  releaseClaim(id: string, token: string): Promise<void>;

  /** Deletes challenges whose expiry is before `expiredBefore`; returns how many. */
  purgeChallenges(expiredBefore: number): Promise<number>;

  /** Challenges still pending and unexpired at `now`, for the given key or all. */
  countPending(now: number, keyId?: string): Promise<number>;

  /**
   * Stores a decided challenge's receipt unless one is stored already, and
   * returns the receipt that is stored now (this one or the earlier one), or
   * null when the challenge is gone or not decided.
   */
  storeReceipt(id: string, receipt: string): Promise<string | null>;
}
