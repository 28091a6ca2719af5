import type { Clock } from "../../clock";
import { ApiError } from "../../errors";
import type { ApiKeyRecord, Store } from "../../store/interface";
import { isRetained, sessionView } from "../challenges/lifecycle";

/** `sessionId` is null when the path segment did not percent-decode: it names no session. */
export async function readSession({ store, clock }: { store: Store; clock: Clock }, key: ApiKeyRecord, sessionId: string | null) {
  const now = clock.now();
  const challenge = sessionId !== null && sessionId.length <= 256 ? await store.getChallenge(sessionId) : null;
  if (!challenge || !isRetained(challenge, now)) throw new ApiError("session_not_found");
  if (challenge.keyId !== key.id) throw new ApiError("unauthorized_session");
  return sessionView(challenge, now);
}
