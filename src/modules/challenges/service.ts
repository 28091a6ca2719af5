import { randomBytes } from "node:crypto";
import type { Clock } from "../../clock";
import { ApiError } from "../../errors";
import { canonicalJson, newNonce } from "../../identity/encoding";
import type { ApiKeyRecord, Store } from "../../store/interface";
import { CHALLENGE_LIFETIME_MS } from "./lifecycle";
import type { ChallengeInput } from "./model";

const RATE_WINDOW_MS = 60_000;

/** 128 random bits, URL-safe: `ch_` + 22 base64url characters. */
export const newChallengeId = (): string => `ch_${randomBytes(16).toString("base64url")}`;

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  reset: number;
}

export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    "ratelimit-limit": String(state.limit),
    "ratelimit-remaining": String(state.remaining),
    "ratelimit-reset": String(state.reset),
  };
}

export interface ChallengeDeps {
  store: Store;
  clock: Clock;
}

export async function createChallenge({ store, clock }: ChallengeDeps, key: ApiKeyRecord, input: ChallengeInput, requestId: string | null = null) {
  const now = clock.now();
  const windowStart = now - (now % RATE_WINDOW_MS);
  const reset = Math.ceil((windowStart + RATE_WINDOW_MS - now) / 1000);
  const id = newChallengeId();
  const nonce = newNonce();
  const result = await store.createChallenge(
    {
      id,
      keyId: key.id,
      agentId: input.agentId,
      action: input.action,
      context: input.context === undefined ? null : canonicalJson(input.context),
      nonce,
      createdAt: now,
      expiresAt: now + CHALLENGE_LIFETIME_MS,
      status: "pending",
      decidedAt: null,
      confidence: null,
      reason: null,
      requestId,
    },
    { windowStart, limit: key.rateLimit },
  );
  const rateLimit = key.rateLimit > 0 ? { limit: key.rateLimit, remaining: Math.max(0, key.rateLimit - result.used), reset } : null;
  if (!result.created) {
    throw new ApiError(
      "rate_limited",
      { message: `This key may create ${key.rateLimit} challenges per minute; retry in ${reset} s.` },
      { "retry-after": String(reset), ...rateLimitHeaders(rateLimit!) },
    );
  }
  return {
    body: { challenge_id: id, nonce, expires_in: CHALLENGE_LIFETIME_MS / 1000, timestamp: now },
    rateLimit,
  };
}
