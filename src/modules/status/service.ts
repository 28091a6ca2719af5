import type { Clock } from "../../clock";
import { ApiError } from "../../errors";
import type { Logger } from "../../log";
import { boundContextHash, type Receipts, receiptOrNull } from "../../receipts/service";
import type { ChallengesStore } from "../../store/challenges/records";
import type { ApiKeyRecord } from "../../store/keys/records";
import { isRetained, sessionView } from "../challenges/lifecycle";

export interface StatusDeps {
  store: ChallengesStore;
  clock: Clock;
  logger: Logger;
  receipts: Receipts;
}

/** `sessionId` is null when the path segment did not percent-decode: it names no session. */
export async function readSession(deps: StatusDeps, key: ApiKeyRecord, sessionId: string | null) {
  const { store, clock } = deps;
  const now = clock.now();
  const challenge = sessionId !== null && sessionId.length <= 256 ? await store.getChallenge(sessionId) : null;
  if (!challenge || !isRetained(challenge, now)) throw new ApiError("session_not_found");
  if (challenge.keyId !== key.id) throw new ApiError("unauthorized_session");
  return {
    ...sessionView(challenge, now),
    reason: challenge.status === "failed" ? challenge.reason : null,
    context_hash: boundContextHash(challenge),
    receipt: await receiptOrNull({ store: deps.store, logger: deps.logger, ...deps.receipts }, challenge),
  };
}
