// Idempotency-Key on the POST endpoints, as Stripe does it: a retried request
// with the same key and body gets the first response again and changes
// nothing; the same key with a different body is a 422; a retry while the
// first is still running is a 409. Keys are scoped to the API key and kept
// 24 hours. Results are saved only when the request changed or decided
// something: a success, or a verification that failed (the challenge is now
// failed). Every other answer (not found, foreign key, expired, already used,
// 429, 5xx) changed nothing and is not kept: a retry gets the same answer
// anyway or may legitimately get past it, and keeping it would let any key
// write a row per request (issue 11: 49,913 stored 404s in 20 s). Validation
// errors happen before the key is looked at and are never saved.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import type { Clock } from "../clock";
import { ApiError, invalidField, type ErrorKind } from "../errors";
import { requestContext } from "../log";
import type { IdempotencyStore } from "../store/idempotency/records";
import type { ApiKeyRecord } from "../store/keys/records";
import { JSON_CONTENT_TYPE, withRequestId } from "./errors";

export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** A reservation unfinished this long belongs to a process that died; a retry takes it over. */
const STALE_RESERVATION_MS = 60_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The error answers that record a change (the challenge was decided), so a retry must replay them. */
const RECORDED_ERRORS: ReadonlySet<ErrorKind> = new Set<ErrorKind>(["verification_failed"]);

export interface Outcome {
  status: number;
  body: unknown;
}

export async function idempotent(
  deps: { store: IdempotencyStore; clock: Clock },
  key: ApiKeyRecord,
  request: Request,
  route: string,
  body: Record<string, unknown>,
  run: () => Promise<unknown>,
): Promise<Outcome | Response> {
  const idemKey = request.headers.get("idempotency-key");
  if (idemKey === null) return { status: 200, body: await run() };
  if (!KEY_PATTERN.test(idemKey)) throw invalidField("Idempotency-Key", "must be 1 to 255 visible ASCII characters");

  const fingerprint = createHash("sha256")
    .update(`${route}\n${canonicalize(body)}`)
    .digest("hex");
  const now = deps.clock.now();
  const held = await deps.store.reserveIdempotency(key.id, idemKey, fingerprint, now, now - STALE_RESERVATION_MS);
  if (held.state === "mismatch") throw new ApiError("idempotency_mismatch");
  if (held.state === "in_progress") throw new ApiError("idempotency_in_progress");
  if (held.state === "done") {
    // Error bodies are saved without a request id; the replay carries this request's, as every error body does.
    const requestId = requestContext.getStore()?.requestId;
    const replayed = held.status >= 400 && requestId ? JSON.stringify(withRequestId(JSON.parse(held.body), requestId)) : held.body;
    return new Response(replayed, {
      status: held.status,
      headers: { "content-type": JSON_CONTENT_TYPE, "idempotent-replayed": "true" },
    });
  }

  try {
    const result = await run();
    await deps.store.completeIdempotency(key.id, idemKey, 200, JSON.stringify(result));
    return { status: 200, body: result };
  } catch (error) {
    if (error instanceof ApiError && RECORDED_ERRORS.has(error.kind)) {
      await deps.store.completeIdempotency(key.id, idemKey, error.status, JSON.stringify(error.body));
    } else {
      await deps.store.releaseIdempotency(key.id, idemKey);
    }
    throw error;
  }
}
