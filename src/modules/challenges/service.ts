import { randomBytes } from "node:crypto";
import type { CircuitRegistry } from "../../circuits/registry";
import type { Clock } from "../../clock";
import { DEFAULT_MAX_PENDING_PER_KEY } from "../../config";
import { ApiError, invalidField, type RateLimitState } from "../../errors";
import { canonicalJson, newNonce } from "../../identity/encoding";
import { previousWeight, retryAfterSeconds, windowStart } from "../../sliding-window";
import type { ChallengeRecord, ChallengesStore } from "../../store/challenges/records";
import type { GroupRecord, GroupsStore } from "../../store/groups/records";
import type { ApiKeyRecord } from "../../store/keys/records";
import { CHALLENGE_LIFETIME_MS } from "./lifecycle";
import type { ChallengeRequest, GroupChallengeRequest } from "./model";
import { anonymityWarning } from "../../groups/roots";
import { boundOrigin, challengeScope, groupMessage } from "../../groups/derivation";
import {
  budgetGroup,
  budgetMessage,
  currencyExponent,
  currencyField,
  minorUnits,
  NOTES_GENESIS_LEAF,
  payeeField,
  periodsAt,
  serializeOrigin,
} from "../../budgets/encoding";
import { BUDGET_CIRCUIT_ID } from "../../circuits/budget";
import type { JsonObject } from "../../identity/encoding";
import type { BudgetChallenge } from "../../store/challenges/records";
import type { BudgetsStore } from "../../store/budgets/records";

/** The store's aggregates this module uses. */
type Stores = ChallengesStore & GroupsStore & Pick<BudgetsStore, "checkpoints">;

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
  /** What a budget challenge adds, from the same clock reading and its nonce. */
  budget?: (now: number, nonce: string) => BudgetChallenge,
): Promise<{ challenge: ChallengeRecord; rateLimit: RateLimitState | null }> {
  const now = clock.now();
  await checkPendingCap(store, key, now, limits?.maxPendingPerKey ?? DEFAULT_MAX_PENDING_PER_KEY);
  const nonce = newNonce();
  const challenge = pendingChallenge({ ...fields, id: newChallengeId(), keyId: key.id, nonce }, now);
  if (budget) challenge.budget = budget(now, nonce);
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
  if (group.budget) return createBudgetChallenge(deps, key, input, requestId, group);
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

/** What a budget challenge's context states of the payment: amount in exact minor units, and currency; else the 400 naming it. */
export function paymentOf(context: JsonObject | undefined): { amount: bigint; currency: string } {
  if (context === undefined) throw invalidField("context", 'a budget challenge binds amount and currency (e.g. {"amount": "20.00", "currency": "EUR"})');
  const currency = context.currency;
  if (currency === undefined) throw invalidField("context", "a budget challenge binds currency (an ISO 4217 code such as EUR)");
  if (typeof currency !== "string") throw invalidField("context", "currency must be an ISO 4217 code such as EUR");
  const exponent = currencyExponent(currency);
  if (!exponent.ok) throw invalidField("context", `currency ${exponent.error}`);
  if (context.amount === undefined) throw invalidField("context", 'a budget challenge binds amount (a decimal such as "20.00")');
  const amount = minorUnits(context.amount, currency);
  if (!amount.ok) throw invalidField("context", `amount ${amount.error}`);
  if (amount.value === 0n) throw invalidField("context", "amount must be at least one minor unit");
  return { amount: amount.value, currency };
}

/**
 * The payee a budget challenge binds: the origin its context's @request
 * binds (what a guard writes), which must be one of the key's registered
 * origins; without @request, the key's only origin.
 */
export function payeeOf(key: ApiKeyRecord, context: JsonObject | undefined): string {
  const origins = key.origins ?? [];
  if (origins.length === 0) throw new ApiError("key_no_origin");
  const hasRequest = context !== undefined && Object.hasOwn(context, "@request");
  if (!hasRequest) {
    if (origins.length > 1) throw invalidField("context", "a budget challenge binds @request.origin (this key has several origins)");
    return origins[0]!;
  }
  const bound = boundOrigin(context);
  const serialized = serializeOrigin(bound);
  if (bound === null || !serialized.ok) throw invalidField("context", "a budget challenge binds @request.origin, an http(s) origin");
  if (!origins.includes(serialized.value)) throw new ApiError("origin_not_registered");
  return serialized.value;
}

/**
 * A budgeted group's challenge (issue 40, docs/api.md "Budget spends"): the
 * spend circuit's public values, fixed now from one clock reading and the
 * challenge's nonce, and stored with it; the enrolment root and the newest
 * notes checkpoint as hints. Nothing in it depends on who will answer.
 */
async function createBudgetChallenge(deps: ChallengeDeps, key: ApiKeyRecord, input: GroupChallengeRequest, requestId: string | null, group: GroupRecord) {
  const context = input.context as JsonObject | undefined;
  const { amount, currency } = paymentOf(context);
  const payee = payeeOf(key, context);
  const [newest] = (await deps.store.checkpoints(group.groupId, 1)).slice(-1);
  const { challenge, rateLimit } = await issue(
    deps,
    key,
    {
      agentId: "",
      action: input.action,
      context: input.context === undefined ? null : canonicalJson(input.context),
      requestId,
      circuitId: BUDGET_CIRCUIT_ID,
      groupId: group.groupId,
      groupRoot: group.root,
      groupDepth: group.depth,
    },
    (now, nonce) => {
      const p = periodsAt(now);
      return {
        payee,
        amount: amount.toString(),
        currency,
        periods: { day: p.day.toString(), week: p.week.toString(), month: p.month.toString(), minute: p.minute.toString() },
        ctx: budgetMessage({ nonce, action: input.action, context }).toString(),
      };
    },
  );
  const budget = challenge.budget!;
  return {
    body: {
      ...basics(challenge),
      group_id: group.groupId,
      merkle_tree_root: group.root,
      size: group.size,
      anonymity_warning: anonymityWarning(group.activeMembers),
      budget: {
        group: budgetGroup(group.groupId).toString(),
        payee,
        payee_field: payeeField(payee).toString(),
        amount: budget.amount,
        currency,
        currency_field: currencyField(currency).toString(),
        periods: budget.periods,
        ctx: budget.ctx,
        notes_root: newest?.root ?? NOTES_GENESIS_LEAF.toString(),
        notes_size: newest?.size ?? 1,
      },
    },
    rateLimit,
  };
}
