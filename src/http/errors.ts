// The one place where errors become responses. Every error body carries the
// request's id (the same as its x-request-id header), so a caller quoting a
// failed response hands over what finds its log lines. ApiError details
// (Retry-After, the rate window) become headers here, never in a service.
import { randomUUID } from "node:crypto";
import { ApiError, type ErrorDetails, type RateLimitState } from "../errors";
import type { Logger } from "../log";
import { StoreUnavailableError } from "../store/unavailable";
import { REQUEST_ID_HEADER } from "./request-id";

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

/** The RateLimit headers (draft-ietf-httpapi-ratelimit-headers) for a key's window. */
export const rateLimitHeaders = (state: RateLimitState): Record<string, string> => ({
  "ratelimit-limit": String(state.limit),
  "ratelimit-remaining": String(state.remaining),
  "ratelimit-reset": String(state.reset),
});

const detailHeaders = ({ retryAfterSeconds, rateLimit, wwwAuthenticate }: ErrorDetails): Record<string, string> => ({
  ...(retryAfterSeconds === undefined ? {} : { "retry-after": String(retryAfterSeconds) }),
  ...(wwwAuthenticate === undefined ? {} : { "www-authenticate": wwwAuthenticate }),
  ...(rateLimit ? rateLimitHeaders(rateLimit) : {}),
});

/** An error body as sent: the catalogue's body with the request id. */
export const withRequestId = (body: Record<string, unknown>, requestId: string) => ({ ...body, request_id: requestId });

/** Elysia's onError for the app: every error as a catalogue response; anything unexpected is logged and answered 500. */
export const handleError =
  (deps: { logger: Logger }) =>
  ({ error, code, set, request }: { error: unknown; code: unknown; set: { status?: number | string; headers: Record<string, unknown> }; request: Request }) => {
    // observe.ts gives every request its id before any handler runs.
    const requestId = String(set.headers[REQUEST_ID_HEADER] ?? randomUUID());
    let apiError: ApiError;
    if (error instanceof ApiError) apiError = error;
    // The database is gone or locked past the bounded wait: retryable, not a bug (issue 11).
    else if (error instanceof StoreUnavailableError) {
      deps.logger.warn("database unavailable", { request_id: requestId, error: error.message });
      apiError = new ApiError("unavailable");
    } else if (code === "NOT_FOUND") apiError = new ApiError("route_not_found", { message: `No route ${request.method} ${new URL(request.url).pathname}` });
    else {
      deps.logger.error("unhandled error", { request_id: requestId, error: error instanceof Error ? error.stack : String(error) });
      apiError = new ApiError("internal");
    }
    if (apiError.kind === "client_closed_request") deps.logger.debug("client closed the request", { request_id: requestId });
    // set.status is what the request log and metrics record (see observe.ts).
    set.status = apiError.status;
    return new Response(JSON.stringify(withRequestId(apiError.body, requestId)), {
      status: apiError.status,
      headers: { ...detailHeaders(apiError.details), [REQUEST_ID_HEADER]: requestId, "content-type": JSON_CONTENT_TYPE },
    });
  };
