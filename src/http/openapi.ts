// The OpenAPI document (GET /swagger/json) and Swagger UI (GET /swagger).
// The document is assembled from the routes themselves: every route's
// `detail` is its operation (docs.ts describe()), whose schemas are the ones
// that validate and type the bodies. A route without one is missing from the
// document, and test/contract/ fails. Named schemas (COMPONENT_SCHEMAS) are
// emitted once under components.schemas and referenced by $ref; the examples
// are real answers recorded by scripts/api-examples.ts.
import { Elysia } from "elysia";
import type { TSchema } from "@sinclair/typebox";
import type { OpenAPIV3_1 } from "openapi-types";
import { agentRequest, agentResponse } from "../modules/agents/model";
import { challengeRequest, challengeResponse } from "../modules/challenges/model";
import { ceremonySummary, ceremonyTranscript, circuitList, circuitView, verificationKey } from "../modules/circuits/model";
import { usageResponse } from "../modules/keys/model";
import { mandateResponse, signedMandateSchema, spendSchema } from "../modules/mandates/model";
import { healthResponse, notReadyResponse, readyResponse } from "../modules/ops/model";
import { challengeExpired, challengeUsed, proofRequest, proofResponse, verificationFailed } from "../modules/proofs/model";
import { jwkSchema, jwksResponse } from "../modules/receipts/model";
import { statusResponse } from "../modules/status/model";
import { eventPayloadSchema, webhookCreated, webhookDelivery, webhookEndpoint, webhookRequest } from "../modules/webhooks/model";
import { EVENT_TYPES } from "../webhooks/events";
import { mandateLimitSchema, mandateSchema } from "../mandates/schema";
import { errorSchema } from "./docs";
import { JSON_CONTENT_TYPE } from "./errors";
import examples from "./openapi-examples.json";
import { SWAGGER_BUNDLE_PATH, SWAGGER_CSS_PATH } from "./swagger-assets";

/** The schemas the document names: each is emitted once here and referenced wherever a route uses it. */
export const COMPONENT_SCHEMAS: Record<string, TSchema> = {
  Error: errorSchema,
  ChallengeRequest: challengeRequest,
  Challenge: challengeResponse,
  ProofRequest: proofRequest,
  ProofResult: proofResponse,
  VerificationFailed: verificationFailed,
  ChallengeExpired: challengeExpired,
  ChallengeUsed: challengeUsed,
  Session: statusResponse,
  AgentRequest: agentRequest,
  Agent: agentResponse,
  AgentMandate: mandateResponse,
  Mandate: mandateSchema,
  MandateLimit: mandateLimitSchema,
  SignedMandate: signedMandateSchema,
  Spend: spendSchema,
  Usage: usageResponse,
  Jwks: jwksResponse,
  Jwk: jwkSchema,
  CircuitList: circuitList,
  Circuit: circuitView,
  CeremonySummary: ceremonySummary,
  VerificationKey: verificationKey,
  CeremonyTranscript: ceremonyTranscript,
  WebhookRequest: webhookRequest,
  Webhook: webhookEndpoint,
  WebhookCreated: webhookCreated,
  WebhookDelivery: webhookDelivery,
  WebhookEvent: eventPayloadSchema,
  Health: healthResponse,
  Ready: readyResponse,
  NotReady: notReadyResponse,
};

export const DOCUMENT_PATH = "/swagger/json";
export const UI_PATH = "/swagger";

/** What the document needs of a route (Elysia's app.routes). */
export interface RouteEntry {
  method: string;
  path: string;
  hooks?: { detail?: unknown };
}

/** Recorded answers: operationId → status → example name → body. */
export type Examples = Record<string, Record<string, Record<string, unknown>>>;

/** "/v1/agents/:agentId" → "/v1/agents/{agentId}". */
export const templateOf = (path: string) => path.replace(/:([^/]+)/g, "{$1}");

/** The operations the routes describe; routes marked hide (the UI and its assets) are not part of the API. */
export function operations(routes: RouteEntry[]) {
  return routes.flatMap((route) => {
    const detail = route.hooks?.detail as (OpenAPIV3_1.OperationObject & { hide?: boolean }) | undefined;
    if (detail?.hide || !detail?.operationId) return [];
    return [{ method: route.method.toLowerCase(), path: templateOf(route.path), operation: detail }];
  });
}

/** A plain JSON copy in which every named schema below the root is its $ref. */
function emit(value: unknown, names: Map<unknown, string>, root?: unknown): unknown {
  if (value !== root && names.has(value)) return { $ref: `#/components/schemas/${names.get(value)}` };
  if (Array.isArray(value)) return value.map((item) => emit(item, names));
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, emit(child, names)]));
}

export interface DocumentOptions {
  version: string;
  /** PUBLIC_URL; without it the server is "/", the host that served the document. */
  publicUrl?: string;
}

export function openapiDocument(routes: RouteEntry[], options: DocumentOptions): OpenAPIV3_1.Document {
  const names = new Map<unknown, string>(Object.entries(COMPONENT_SCHEMAS).map(([name, schema]) => [schema, name]));
  // The file opens with a "$comment" (generated, do not edit), which names no operation.
  const recorded = examples as unknown as Examples;
  const paths: OpenAPIV3_1.PathsObject = {};
  for (const { method, path, operation } of operations(routes)) {
    const emitted = emit(operation, names) as OpenAPIV3_1.OperationObject;
    for (const [status, response] of Object.entries(emitted.responses ?? {}) as [string, OpenAPIV3_1.ResponseObject][]) {
      const bodies = recorded[operation.operationId!]?.[status];
      const media = response.content && Object.values(response.content)[0];
      if (bodies && media) media.examples = Object.fromEntries(Object.entries(bodies).map(([name, value]) => [name, { summary: name, value }]));
    }
    paths[path] = { ...paths[path], [method]: emitted };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "zkagent",
      version: options.version,
      description:
        "Zero-knowledge identity verification for AI agents: request a one-time challenge, submit the agent's Groth16 proof, read the session's status. Authorize with an API key (X-Api-Key). Every response carries X-Request-Id; every error body is an Error. Any method or path not listed here answers 404 `Not found`.",
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [
      options.publicUrl
        ? { url: options.publicUrl, description: "This service (PUBLIC_URL)" }
        : { url: "/", description: "The host that served this document (the server has no PUBLIC_URL)" },
    ],
    tags: [
      { name: "Verification", description: "The challenge → proof → status flow, and the keys that check its receipts" },
      { name: "Agents", description: "Identity commitments the agents prove against, and their mandates" },
      { name: "Keys", description: "The calling API key" },
      { name: "Circuits", description: "Circuit versions and the artifacts agents prove with; public, and immutable per version (docs/trust.md)" },
      { name: "Webhooks", description: "Decisions pushed to your endpoints, signed as Standard Webhooks specifies (docs/webhooks.md)" },
      { name: "Operations", description: "Liveness, readiness and Prometheus metrics" },
    ],
    paths,
    webhooks: eventOperations(),
    components: {
      schemas: Object.fromEntries(Object.entries(COMPONENT_SCHEMAS).map(([name, schema]) => [name, emit(schema, names, schema)])) as Record<
        string,
        OpenAPIV3_1.SchemaObject
      >,
      parameters: {
        RequestId: {
          name: "X-Request-Id",
          in: "header",
          required: false,
          description: "Your id for the request (a letter or digit, then up to 127 of A–Z a–z 0–9 . _ : - / + = @); kept if sane, else replaced",
          schema: { type: "string", maxLength: 128 },
        },
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description: "Makes a retry safe: the same key with the same body within 24 h gets the first answer again (docs/api.md, Idempotency)",
          schema: { type: "string", pattern: "^[!-~]{1,255}$" },
        },
        IfNoneMatch: {
          name: "If-None-Match",
          in: "header",
          required: false,
          description: 'ETags you hold (`"<hash>"`, comma-separated, W/ ignored) or *: when one is this artifact\'s, the answer is 304 without a body',
          schema: { type: "string" },
        },
      },
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "X-Api-Key", description: "zka_<16 hex>_<43 base64url>" },
        metricsToken: { type: "http", scheme: "bearer", description: "METRICS_TOKEN, when the server sets one" },
      },
    },
  };
}

/** The signature headers of every delivery (Standard Webhooks). */
const WEBHOOK_HEADERS: OpenAPIV3_1.ParameterObject[] = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The event's id: the same on every attempt; deduplicate by it",
    schema: { type: "string", pattern: "^msg_[0-9a-f]{32}$" },
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "Seconds since the Unix epoch, of this attempt",
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      "Space-separated `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>` under the endpoint's secret; two during a secret rotation's overlap. Verify with a Standard Webhooks library.",
    schema: { type: "string" },
  },
];

/** The OpenAPI 3.1 `webhooks` section: what this service POSTs to the endpoints registered with POST /v1/webhooks. */
function eventOperations(): Record<string, OpenAPIV3_1.PathItemObject> {
  const summaries: Record<(typeof EVENT_TYPES)[number], string> = {
    "session.verified": "A session was verified",
    "session.failed": "A session failed verification (a bad proof, an unknown or revoked agent, a bad signature, or a mandate refusal)",
  };
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `event_${type.replace(".", "_")}`,
          summary: summaries[type],
          description:
            "Sent at least once (deduplicate by webhook-id), within a second of the decision; retried with exponential backoff for more than 24 hours until a 2xx answers. Redirects are not followed.",
          tags: ["Webhooks"],
          // The receiver authenticates the delivery by its signature headers, not by a credential.
          security: [],
          parameters: WEBHOOK_HEADERS,
          requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/WebhookEvent" } } } },
          responses: { "200": { description: "Received: any 2xx ends the delivery; anything else, or no answer within the timeout, is retried" } },
        },
      },
    ]),
  );
}

const swaggerPage = (title: string) => `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>${title}</title>
  <link rel="stylesheet" href="${SWAGGER_CSS_PATH}" />
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${SWAGGER_BUNDLE_PATH}"></script>
  <script>
    // validatorUrl "none": the online validator badge (an image from validator.swagger.io) stays off; the page never contacts another host.
    window.onload = () => { window.ui = SwaggerUIBundle({ url: "${DOCUMENT_PATH}", dom_id: "#swagger-ui", persistAuthorization: true, validatorUrl: "none" }); };
  </script>
</body>
</html>`;

/**
 * GET /swagger and GET /swagger/json. The document is built from `routes()`
 * and serialized once per app, on the first request (every route is mounted
 * by then; start-up does not pay for it); later requests send the same text.
 */
export const apiDocs = (options: { routes: () => RouteEntry[]; publicUrl?: string; version: string }) => {
  let document: string | undefined;
  const page = swaggerPage("zkagent");
  return new Elysia({ name: "api-docs" })
    .get(UI_PATH, () => new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } }), { detail: { hide: true } })
    .get(
      DOCUMENT_PATH,
      () =>
        new Response((document ??= JSON.stringify(openapiDocument(options.routes(), options))), {
          headers: { "content-type": JSON_CONTENT_TYPE },
        }),
      { detail: { hide: true } },
    );
};
