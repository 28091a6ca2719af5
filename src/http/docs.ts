// How a route describes itself in the OpenAPI document: describe() turns a
// RouteDoc into the route's operation, its `detail`. Everything it states is
// read from what the service uses: request and response schemas are the
// TypeBox schemas that validate and type the bodies, and the error responses
// are built from the error catalogue (src/errors.ts) by kind, so each status
// lists exactly the `error` texts the route can answer with. openapi.ts
// assembles the operations of every route into the document.
//
// Adding a route: give it `detail: describe({ operationId, tag, summary,
// ok: { status, schema, description }, errors: [the catalogue kinds it
// throws] })` (plus `public`, `noStore`, `params`, `body` as they apply;
// `ok.mediaType` for an answer that is not JSON; an ETag in `ok.headers` for
// an answer that If-None-Match can make a 304);
// name its response schemas in COMPONENT_SCHEMAS (openapi.ts) if they should
// be components; for a /v1/ route, add its calls to scripts/api-examples.ts
// and run it. test/contract/ fails until the route is documented, and every
// HTTP test's answer from it is then held to what describe() declared.
import { type TSchema, Type } from "@sinclair/typebox";
import type { OpenAPIV3 } from "openapi-types";
import { type ErrorKind, errorEntry, METRICS_AUTH_CHALLENGE } from "../errors";

/** Every error body: the catalogue's shape. Each response narrows `error` to the texts that status can carry on its route. */
export const errorSchema = Type.Object(
  {
    error: Type.String({ description: "Stable text; clients may match on it (docs/api.md, Errors)" }),
    message: Type.Optional(Type.String({ description: "What to do about it" })),
    request_id: Type.String({ description: "The request's id, as in its X-Request-Id header" }),
  },
  { additionalProperties: false, description: 'An error. Any method or path not in this document answers 404 with this body and `error` "Not found".' },
);

/** The texts of the 400s that name fields: "Missing required fields: a, b", "Invalid field <path>: <why>". */
export const FIELD_ERROR_PATTERN = "^(Missing required fields: |Invalid field )";

/** The response headers the service sends; `required` per response is decided where they are attached. */
export const RESPONSE_HEADERS = {
  "X-Request-Id": { description: "The request's id: the caller's X-Request-Id when it is a sane token, else a new UUID", schema: { type: "string" } },
  "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer", minimum: 0 } },
  "RateLimit-Limit": { description: "Challenges per minute this key may request (keys with a rate limit)", schema: { type: "integer", minimum: 0 } },
  "RateLimit-Remaining": { description: "What is left of it in the current window", schema: { type: "integer", minimum: 0 } },
  "RateLimit-Reset": { description: "Seconds until the window resets", schema: { type: "integer", minimum: 0 } },
  "Idempotent-Replayed": {
    description: "The saved answer of an earlier request with the same Idempotency-Key",
    schema: { type: "string", enum: ["true"] },
  },
  "WWW-Authenticate": { description: "The bearer challenge", schema: { type: "string", enum: [METRICS_AUTH_CHALLENGE] } },
  "Cache-Control": { description: "How long the answer may be cached", schema: { type: "string" } },
  ETag: {
    description: "A strong validator for If-None-Match, quoted: an artifact's hash (hex), or a group's \"<version>-<root>\" (the members route)",
    schema: { type: "string", pattern: '^"([0-9a-f]{64}|[0-9]+-[0-9]+)"$' },
  },
} as const satisfies Record<string, { description: string; schema: OpenAPIV3.SchemaObject }>;

export type HeaderName = keyof typeof RESPONSE_HEADERS;
/** A response's headers beyond X-Request-Id (on every response): name → required. */
export type Headers = Partial<Record<HeaderName, boolean>>;

/** The rate window of a key with a rate limit (src/http/errors.ts rateLimitHeaders). */
export const RATE_LIMIT_HEADERS: Headers = { "RateLimit-Limit": false, "RateLimit-Remaining": false, "RateLimit-Reset": false };

/** What a route that reads a JSON body answers about the body itself (src/http/body.ts, validate.ts). */
export const JSON_BODY_ERRORS: ErrorKind[] = ["unsupported_media_type", "payload_too_large", "malformed_json", "invalid_request"];

/** Headers an error kind's answer carries (src/http/errors.ts turns its details into them). */
const KIND_HEADERS: Partial<Record<ErrorKind, Headers>> = {
  rate_limited: { "Retry-After": true },
  too_many_pending: { "Retry-After": true },
  group_additions_busy: { "Retry-After": true },
  members_rate_limited: { "Retry-After": true },
  metrics_unauthorized: { "WWW-Authenticate": true },
};

export interface RouteDoc {
  /** A stable camelCase name: generated clients name their methods after it. */
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** No API key (probes, the key set). */
  public?: boolean;
  /** Does not read the database: no 503 `Service unavailable`. */
  noStore?: boolean;
  /** Takes Idempotency-Key; its 200 and 400 may be replays (Idempotent-Replayed). */
  idempotent?: boolean;
  /** Descriptions of the path parameters (`:name` in the route). */
  params?: Record<string, string>;
  /** Optional query parameters: name → description and schema. */
  query?: Record<string, { description: string; schema: OpenAPIV3.SchemaObject }>;
  body?: TSchema;
  ok: { status: number; description: string; schema: TSchema; headers?: Headers; mediaType?: string };
  /** Headers a route adds to an error status (the challenge route's rate window on its 429). */
  headers?: Partial<Record<number, Headers>>;
  /** Answers that are not catalogue errors (the readiness probe's 503). */
  other?: Record<number, { description: string; schema: TSchema }>;
  /**
   * The catalogue errors the route answers with, beyond what describe() adds:
   * 401/403 of authentication (unless public), 503 (unless noStore), 500.
   */
  errors: ErrorKind[];
  /** The body of an error kind whose answer carries more than error/message (the proof's 400s). */
  bodies?: Partial<Record<ErrorKind, TSchema>>;
}

/** The `error` property of a response: the fixed texts of its kinds, and the field errors' pattern when invalid_request is one. */
function errorText(kinds: ErrorKind[]): OpenAPIV3.SchemaObject {
  const texts = [...new Set(kinds.flatMap((kind) => errorEntry(kind).error ?? []))];
  const fixed: OpenAPIV3.SchemaObject = { type: "string", enum: texts };
  if (!kinds.includes("invalid_request")) return fixed;
  const named: OpenAPIV3.SchemaObject = { type: "string", pattern: FIELD_ERROR_PATTERN };
  return texts.length === 0 ? named : { anyOf: [fixed, named] };
}

/** The body of one status: the plain errors as Error with `error` narrowed, each richer kind as its own schema; several bodies are a oneOf, told apart by `error`. */
function errorBody(kinds: ErrorKind[], bodies: Partial<Record<ErrorKind, TSchema>>): TSchema {
  const plain = kinds.filter((kind) => !bodies[kind]);
  const members: TSchema[] = kinds.flatMap((kind) => bodies[kind] ?? []);
  if (plain.length > 0) {
    // The emitter (openapi.ts) turns errorSchema into its $ref; additionalProperties there still closes the body.
    members.unshift(Type.Unsafe({ allOf: [errorSchema], type: "object", required: ["error"], properties: { error: errorText(plain) } }));
  }
  return members.length === 1 ? members[0]! : Type.Unsafe({ oneOf: members });
}

function headersOf(headers: Headers): Record<string, OpenAPIV3.HeaderObject> {
  const all: Record<string, OpenAPIV3.HeaderObject> = { "X-Request-Id": { ...RESPONSE_HEADERS["X-Request-Id"], required: true } };
  for (const [name, required] of Object.entries(headers) as [HeaderName, boolean][]) all[name] = { ...RESPONSE_HEADERS[name], required };
  return all;
}

/** Headers of several kinds at one status: present in all of them → as they declare it, else optional. */
function mergeHeaders(list: Headers[]): Headers {
  const merged: Headers = {};
  for (const headers of list) {
    for (const [name, required] of Object.entries(headers) as [HeaderName, boolean][]) merged[name] = (merged[name] ?? true) && required;
  }
  for (const name of Object.keys(merged) as HeaderName[]) if (list.some((headers) => !(name in headers))) merged[name] = false;
  return merged;
}

const json = (schema: TSchema, mediaType = "application/json") => ({ [mediaType]: { schema: schema as OpenAPIV3.SchemaObject } });

/** The OpenAPI operation of a route, for its `detail`. */
export function describe(doc: RouteDoc): OpenAPIV3.OperationObject {
  const kinds: ErrorKind[] = [...doc.errors, "internal"];
  if (!doc.public) kinds.push("missing_api_key", "invalid_api_key");
  if (!doc.noStore) kinds.push("unavailable");
  const byStatus = new Map<number, ErrorKind[]>();
  for (const kind of new Set(kinds)) {
    const status = errorEntry(kind).status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), kind]);
  }

  const replayable: Headers = doc.idempotent ? { "Idempotent-Replayed": false } : {};
  // An answer with an ETag takes If-None-Match: one naming it is 304 Not Modified,
  // without a body, with the ETag and Cache-Control (the circuit artifacts).
  const conditional = doc.ok.headers?.ETag !== undefined;
  const responses: OpenAPIV3.ResponsesObject = {
    [doc.ok.status]: {
      description: doc.ok.description,
      headers: headersOf({ ...doc.ok.headers, ...replayable }),
      content: json(doc.ok.schema, doc.ok.mediaType),
    },
  };
  if (conditional) {
    responses[304] = {
      description: "Not Modified: If-None-Match names this ETag (or is *); no body",
      headers: headersOf({ ETag: true, "Cache-Control": true }),
    };
  }
  for (const [status, other] of Object.entries(doc.other ?? {})) {
    responses[status] = { description: other.description, headers: headersOf({}), content: json(other.schema) };
  }
  for (const [status, group] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers = { ...mergeHeaders(group.map((kind) => KIND_HEADERS[kind] ?? {})), ...doc.headers?.[status] };
    const description = group
      .map((kind) => errorEntry(kind).error ?? "Missing required fields: …, or Invalid field <field>: <why>")
      .map((text) => `\`${text}\``)
      .join(", ");
    responses[status] = {
      description,
      headers: headersOf(group.includes("verification_failed") ? { ...headers, ...replayable } : headers),
      content: json(errorBody(group, doc.bodies ?? {})),
    };
  }

  const parameters: OpenAPIV3.ParameterObject[] = Object.entries(doc.params ?? {}).map(([name, description]) => ({
    name,
    in: "path",
    required: true,
    description,
    schema: { type: "string" },
  }));
  for (const [name, { description, schema }] of Object.entries(doc.query ?? {})) parameters.push({ name, in: "query", required: false, description, schema });
  const refs: OpenAPIV3.ReferenceObject[] = [{ $ref: "#/components/parameters/RequestId" }];
  if (doc.idempotent) refs.push({ $ref: "#/components/parameters/IdempotencyKey" });
  if (conditional) refs.push({ $ref: "#/components/parameters/IfNoneMatch" });

  return {
    operationId: doc.operationId,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag],
    security: doc.public ? [] : [{ apiKey: [] }],
    parameters: [...parameters, ...refs] as OpenAPIV3.ParameterObject[],
    ...(doc.body ? { requestBody: { required: true, content: json(doc.body) } } : {}),
    responses,
  };
}
