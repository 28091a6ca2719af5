import { randomBytes } from "node:crypto";
import type { CircuitRegistry } from "../../circuits/registry";
import type { Clock } from "../../clock";
import { DEFAULT_MAX_PENDING_PER_KEY } from "../../config";
import { ApiError, type RateLimitState } from "../../errors";
import { canonicalJson, newNonce } from "../../identity/encoding";
import { previousWeight, retryAfterSeconds, windowStart } from "../../sliding-window";
import type { ChallengeRecord, ChallengesStore } from "../../store/challenges/records";
import type { GroupsStore } from "../../store/groups/records";
import type { ApiKeyRecord } from "../../store/keys/records";
import { CHALLENGE_LIFETIME_MS } from "./lifecycle";
import type { ChallengeRequest, GroupChallengeRequest } from "./model";
import { anonymityWarning } from "../../groups/roots";
import { challengeScope, groupMessage } from "../../groups/derivation";

/** The store's aggregates this module uses. */
type Stores = ChallengesStore & GroupsStore;

const RATE_WINDOW_MS = 60_000;

/** 128 random bits, URL-safe: `ch_` + 22 base64url characters. */
export const newChallengeId = (): string => `ch_${randomBytes(16).toString("base64url")}`;

export interface ChallengeDeps {
  store: Stores;
  clock: Clock;
  /** Which circuit new challenges are proved with: the active one (every node within CIRCUIT_REFRESH_MS). */
  circuits: CircuitRegistry;
  limits?: { maxPendingPerKey?: number };
}

/**
 * A key may hold at most `max` live pending challenges. A rate-limited key
 * whose limit × WINDOWS_PER_LIFETIME is within the cap can never exceed it,
 * and is not counted. For the others the count comes from the store at most once a
 * second per process and is estimated in between (+1 per creation here):
 * a bound on abuse, not an invariant — concurrent processes may overshoot by
 * what they create within that second.
 */
const RECOUNT_INTERVAL_MS = 1_000;
/**
 * How many fixed rate windows one challenge can be pending in: created at
 * the last instant of a window and live until exactly 300 s later (still
 * pending then), it spans floor(300 / 60) + 1 = 6 of them, so a key may hold
 * up to 6 × its rate (issue 11: 5 × let the cap be exceeded by 20 %).
 */
export const WINDOWS_PER_LIFETIME = Math.floor(CHALLENGE_LIFETIME_MS / RATE_WINDOW_MS) + 1;
const pendingEstimates = new WeakMap<Stores, Map<string, { count: number; countedAt: number }>>();

async function checkPendingCap(store: Stores, key: ApiKeyRecord, now: number, max: number): Promise<void> {
  if (max === 0) return;
  if (key.rateLimit > 0 && key.rateLimit * WINDOWS_PER_LIFETIME <= max) return;
  let perKey = pendingEstimates.get(store);
  if (!perKey) pendingEstimates.set(store, (perKey = new Map()));
  let estimate = perKey.get(key.id);
  if (!estimate || now - estimate.countedAt >= RECOUNT_INTERVAL_MS || now < estimate.countedAt) {
    estimate = { count: await store.countPending(now, key.id), countedAt: now };
    perKey.set(key.id, estimate);
  }
  if (estimate.count < max) {
    estimate.count++;
    return;
  }
  throw new ApiError(
    "too_many_pending",
    { message: `This key holds ${max} unexpired pending challenges; use or let some expire (at most ${CHALLENGE_LIFETIME_MS / 1000} s).` },
    { retryAfterSeconds: CHALLENGE_LIFETIME_MS / 1000 },
  );
}

/**
 * The record of a challenge issued at `now`: pending for CHALLENGE_LIFETIME_MS,
 * nothing decided. What createChallenge stores; benches seed the same record
 * straight into the store (bench/support.ts).
 */
export function pendingChallenge(
  fields: Pick<
    ChallengeRecord,
    "id" | "keyId" | "agentId" | "action" | "context" | "nonce" | "requestId" | "circuitId" | "groupId" | "groupRoot" | "groupDepth"
  >,
  now: number,
): ChallengeRecord {
  return { ...fields, createdAt: now, expiresAt: now + CHALLENGE_LIFETIME_MS, status: "pending", decidedAt: null, confidence: null, reason: null };
}

/** Stores the challenge in the key's rate window (after the pending cap); the rate window for the caller to report. */
async function issue(
  { store, clock, limits }: ChallengeDeps,
  key: ApiKeyRecord,
  fields: Omit<Parameters<typeof pendingChallenge>[0], "id" | "keyId" | "nonce">,
): Promise<{ challenge: ChallengeRecord; rateLimit: RateLimitState | null }> {
  const now = clock.now();
  await checkPendingCap(store, key, now, limits?.maxPendingPerKey ?? DEFAULT_MAX_PENDING_PER_KEY);
  const challenge = pendingChallenge({ ...fields, id: newChallengeId(), keyId: key.id, nonce: newNonce() }, now);
  // A sliding minute (src/sliding-window.ts): a burst at the end of one minute is not followed by another at the start of the next.
  const result = await store.createChallenge(challenge, { windowStart: windowStart(now), limit: key.rateLimit, previousWeight: previousWeight(now) });
  const refusedFor = result.created ? null : retryAfterSeconds(result.previous, result.current, key.rateLimit, now);
  // RateLimit-Reset: when the used-up part frees (a refusal's Retry-After), else when the current fixed minute ends.
  const reset = refusedFor ?? Math.ceil((windowStart(now) + RATE_WINDOW_MS - now) / 1000);
  const rateLimit = key.rateLimit > 0 ? { limit: key.rateLimit, remaining: Math.max(0, key.rateLimit - result.used), reset } : null;
  if (refusedFor !== null) {
    throw new ApiError(
      "rate_limited",
      { message: `This key may create ${key.rateLimit} challenges in any minute; retry in ${refusedFor} s.` },
      { retryAfterSeconds: refusedFor, rateLimit: rateLimit! },
    );
  }
  return { challenge, rateLimit };
}

const basics = (challenge: ChallengeRecord) => ({
  challenge_id: challenge.id,
  nonce: challenge.nonce,
  expires_in: CHALLENGE_LIFETIME_MS / 1000,
  timestamp: challenge.createdAt,
  circuit_id: challenge.circuitId!,
});

/** The challenge, and the key's rate window after it (null for an unlimited key) for the caller to report. */
export async function createChallenge(deps: ChallengeDeps, key: ApiKeyRecord, input: ChallengeRequest, requestId: string | null = null) {
  const circuit = await deps.circuits.active();
  const { challenge, rateLimit } = await issue(deps, key, {
    agentId: input.agent_id,
    action: input.action,
    context: input.context === undefined ? null : canonicalJson(input.context),
    requestId,
    circuitId: circuit.id,
  });
  return { body: basics(challenge), rateLimit };
}

/**
 * A challenge for a group (issue 24): it names the group's root and depth
 * now, the Semaphore circuit of that depth, and the message and scope a
 * stock client passes to generateProof. The agent column stays empty: who
 * answers is not known, and never will be beyond the pseudonym.
 */
export async function createGroupChallenge(deps: ChallengeDeps, key: ApiKeyRecord, input: GroupChallengeRequest, requestId: string | null = null) {
  const group = await deps.store.getGroup(input.group_id);
  if (!group) throw new ApiError("group_not_found");
  // The owner's allow-list (issue 34), before anything else about the group is said.
  if (group.challengers !== null && !group.challengers.includes(key.id)) throw new ApiError("group_challenger_forbidden");
  if (group.activeMembers === 0) throw new ApiError("group_empty");
  // A depth-0 tree (one leaf) is proved with the depth-1 circuit, as Semaphore's generateProof does.
  const depth = Math.max(1, group.depth);
  const circuit = await deps.circuits.semaphore.circuit(depth);
  const { challenge, rateLimit } = await issue(deps, key, {
    agentId: "",
    action: input.action,
    context: input.context === undefined ? null : canonicalJson(input.context),
    requestId,
    circuitId: circuit.id,
    groupId: group.groupId,
    groupRoot: group.root,
    groupDepth: depth,
  });
  return {
    body: {
      ...basics(challenge),
      group_id: group.groupId,
      merkle_tree_root: group.root,
      merkle_tree_depth: depth,
      size: group.size,
      message: groupMessage(challenge).toString(),
      scope: challengeScope({ keyId: key.id, groupId: group.groupId, context: input.context }).toString(),
      anonymity_warning: anonymityWarning(group.activeMembers),
    },
    rateLimit,
  };
}
