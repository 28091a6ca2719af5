// The closed set of API errors: one kind → one status → one JSON body.
// Services throw ApiError; only src/http/errors.ts turns it into a response
// (adding the request id to every body and the headers its details ask for).
// The `error` texts (docs/api.md, "Errors") are part of the API and must not
// drift.

export const BODY_LIMIT_BYTES = 64 * 1024;

const catalogue = {
  missing_api_key: { status: 401, error: "Missing API key", message: "Provide your API key in the X-Api-Key header." },
  invalid_api_key: { status: 403, error: "Invalid API key" },
  unsupported_media_type: { status: 415, error: "Unsupported Media Type", message: "Send the body as JSON with Content-Type: application/json." },
  payload_too_large: { status: 413, error: "Payload too large", message: `Request bodies are limited to ${BODY_LIMIT_BYTES} bytes.` },
  malformed_json: { status: 400, error: "Malformed JSON body" },
  invalid_request: { status: 400 }, // `error` names the missing or invalid fields
  challenge_not_found: { status: 404, error: "Challenge not found", message: "The challenge_id is invalid or expired." },
  session_not_found: { status: 404, error: "Session not found" },
  unauthorized_session: { status: 403, error: "Unauthorized access to session" },
  challenge_expired: { status: 400, error: "Challenge expired", verified: false },
  challenge_used: { status: 400, error: "Challenge already used", verified: false }, // + previous_status
  verification_failed: { status: 400, verified: false, error: "Proof verification failed" }, // + reason
  rate_limited: { status: 429, error: "Rate limit exceeded" }, // + message
  too_many_pending: { status: 429, error: "Too many pending challenges" }, // + message
  too_many_agents: { status: 429, error: "Too many agents" }, // + message
  agent_not_found: { status: 404, error: "Agent not found" },
  circuit_not_found: { status: 404, error: "Circuit not found" },
  // Issue 23: a circuit stored before transcripts were checked, whose stored transcript failed the re-check on the first start since.
  circuit_not_served: {
    status: 409,
    error: "Circuit not served",
    message: "Its stored ceremony transcript did not pass the checks; the operator can add the ceremony again (zkagent circuits add).",
  },
  // A Semaphore circuit's zkey or wasm where its package is not installed (the compiled binary): + message naming the package and file.
  artifact_not_served: {
    status: 404,
    error: "Artifact not served here",
    message: "This service verifies the circuit but does not carry this file: get it from the package the circuit names (artifacts_package).",
  },
  webhook_not_found: { status: 404, error: "Webhook not found" },
  webhook_event_not_found: {
    status: 404,
    error: "Webhook event not found",
    message: "No delivery of this event to a current endpoint of this key, or one is being attempted now.",
  },
  group_not_found: { status: 404, error: "Group not found" },
  member_not_found: { status: 404, error: "Member not found", message: "The commitment is not an active member of the group." },
  group_exists: { status: 409, error: "Group already exists", message: "Group ids are unique across the service; choose another." },
  group_forbidden: { status: 403, error: "Group owned by another key", message: "Only the key that created the group changes it." },
  group_empty: { status: 409, error: "Group has no members", message: "Add members before asking a group for a proof." },
  // Issue 32: the bounds on groups (config.ts GROUP_*), each message naming its limit.
  too_many_groups: { status: 409, error: "Too many groups" }, // + message naming GROUP_MAX_PER_KEY
  group_full: { status: 409, error: "Group full" }, // + message naming GROUP_MAX_MEMBERS
  // Issue 37: other processes kept changing the group while this change was planned; nothing applied, Retry-After.
  group_contended: {
    status: 503,
    error: "Group busy",
    message:
      "Other requests changed this group while this change was being prepared, again and again; nothing was applied. Retry after the time Retry-After says.",
  },
  group_additions_busy: { status: 429, error: "Too many additions in flight" }, // + message naming GROUP_ADDITIONS_IN_FLIGHT, Retry-After
  members_rate_limited: { status: 429, error: "Too many reads of group members" }, // + message naming GROUP_MEMBERS_READS_PER_MINUTE, Retry-After
  // Issue 34: an owner cannot cycle a member out and back in to unmask it.
  member_removed_before: {
    status: 409,
    error: "Commitment removed before",
    message: "A commitment removed from a group cannot be added back to it: enrol a new identity (a new commitment).",
  }, // + index: which commitment of the batch
  // Issue 40: a budgeted group's leaves are computed by the service from verified terms.
  group_budgeted: {
    status: 409,
    error: "Budgeted group",
    message: "This group's leaves come only from enrolments with verified terms: POST /v1/groups/{groupId}/enrolments.",
  },
  group_not_budgeted: { status: 409, error: "Group not budgeted", message: "Only a group created with budget: true enrols members with terms." },
  mandate_enrolled: {
    status: 409,
    error: "Mandate already enrolled",
    message: "A mandate is enrolled once across the service: have the principal sign a new one.",
  },
  identity_enrolled: {
    status: 409,
    error: "Identity enrolled before",
    message: "An identity is enrolled in a budgeted group once, ever (removed or not): enrol a new identity.",
  },
  // Issue 40: budget spends. A budget challenge's payee is one of the asking key's registered origins (zkagent keys set-origins).
  key_no_origin: {
    status: 409,
    error: "Key has no registered origin",
    message: "A budget spend pays one of the key's registered origins: register them with zkagent keys set-origins.",
  },
  origin_not_registered: {
    status: 403,
    error: "Origin not registered for this key",
    message: "The context's @request.origin must be one of the key's registered origins (zkagent keys set-origins).",
  },
  group_challenger_forbidden: {
    status: 403,
    error: "Key may not challenge this group",
    message: "The group's owner restricts which API keys may challenge it (challengers).",
  },
  agent_exists: { status: 409, error: "Agent already registered", message: "Revoke the agent first to register a new commitment for it." },
  agent_revoked: { status: 409, error: "Agent revoked", message: "Register the agent again before giving it a mandate." },
  mandate_signature_required: {
    status: 409,
    error: "Signed mandate required",
    message: "This agent acts for a principal: only a mandate its principal signed can replace the current one, and it cannot be removed.",
  },
  mandate_superseded: { status: 409, error: "Mandate superseded", message: "The stored mandate was issued later (iat); have the principal sign a new one." },
  idempotency_mismatch: { status: 422, error: "Idempotency key reused", message: "This Idempotency-Key was used with a different request; use a new key." },
  idempotency_in_progress: {
    status: 409,
    error: "Idempotent request in progress",
    message: "A request with this Idempotency-Key is still running; retry shortly.",
  },
  route_not_found: { status: 404, error: "Not found" }, // + message naming the method and path
  internal: { status: 500, error: "Internal server error" },
  unavailable: { status: 503, error: "Service unavailable", message: "The database cannot be reached; retry later." },
  // Issue 11. 499 (nginx's "client closed request"): the client left mid-body; nobody
  // receives this answer, but the request log and the metrics record it, and not as a 5xx.
  client_closed_request: { status: 499, error: "Client closed request" },
  metrics_unauthorized: { status: 401, error: "Metrics token required", message: "Send Authorization: Bearer <METRICS_TOKEN>." },
} as const satisfies Record<string, { status: number; error?: string; message?: string; verified?: boolean }>;

export type ErrorKind = keyof typeof catalogue;

/** A kind's status, fixed `error` text (none for invalid_request, which names the fields) and fixed `message`, as the OpenAPI document states them. */
export const errorEntry = (kind: ErrorKind): { status: number; error?: string; message?: string } => catalogue[kind];

/** The kinds with a fixed `error` text (all but invalid_request). */
type TextKind = { [K in ErrorKind]: (typeof catalogue)[K] extends { error: string } ? K : never }[ErrorKind];

/** A kind's fixed `error` text, as its literal type: for the schemas of the richer error bodies (the proof's 400s), so the text is stated once, here. */
export const errorTextOf = <K extends TextKind>(kind: K): (typeof catalogue)[K]["error"] => catalogue[kind].error;

/** A key's place in its rate window: what the RateLimit headers report. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  reset: number;
}

/** Facts about an error that are not part of its body; the HTTP layer turns them into headers. */
export interface ErrorDetails {
  /** Seconds after which a retry may succeed (Retry-After). */
  retryAfterSeconds?: number;
  /** The WWW-Authenticate challenge of a 401 that is not about the API key. */
  wwwAuthenticate?: string;
  rateLimit?: RateLimitState;
}

export class ApiError extends Error {
  readonly status: number;
  readonly body: Record<string, unknown>;

  constructor(
    readonly kind: ErrorKind,
    extra: Record<string, unknown> = {},
    readonly details: ErrorDetails = {},
  ) {
    const { status, ...body } = catalogue[kind];
    super(kind);
    this.status = status;
    this.body = { ...body, ...extra };
  }
}

/** 400 whose `error` lists the missing required fields. */
export const missingFields = (fields: string[]) => new ApiError("invalid_request", { error: `Missing required fields: ${fields.join(", ")}` });

/** 400 naming a field that is present but unacceptable, and why. */
export const invalidField = (field: string, why: string) => new ApiError("invalid_request", { error: `Invalid field ${field}: ${why}` });

/** The WWW-Authenticate challenge sent with `metrics_unauthorized` (RFC 6750 §3), and declared in the OpenAPI document. */
export const METRICS_AUTH_CHALLENGE = 'Bearer realm="metrics"';
