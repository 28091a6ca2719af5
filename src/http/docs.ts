// OpenAPI descriptions for routes that read their own body (see body.ts):
// schemas are attached here, not as Elysia validators, because validate.ts
// applies them after authentication, with the error texts and order the
// interface fixes. The schema documented is the schema that validates.
import { t, type TSchema } from "elysia";
import type { OpenAPIV3 } from "openapi-types";

export const errorBody = t.Object({
  error: t.String(),
  message: t.Optional(t.String()),
  request_id: t.String({ description: "The request's id, as in its x-request-id header" }),
});

// TypeBox schemas are JSON Schema objects; OpenAPI takes them as they are.
const json = (schema: TSchema) => ({ "application/json": { schema: schema as OpenAPIV3.SchemaObject } });

export interface RouteDoc {
  summary: string;
  description?: string;
  tag: string;
  body?: TSchema;
  ok: { status: number; schema: TSchema; description: string };
  /** Error statuses beyond the 401/403 of authentication, which are added unless `public`. */
  errors: Record<number, string>;
  failure?: TSchema;
  public?: boolean;
}

export function describe(doc: RouteDoc) {
  const responses: OpenAPIV3.ResponsesObject = {
    [doc.ok.status]: { description: doc.ok.description, content: json(doc.ok.schema) },
  };
  // Every authenticated route answers 401 and 403; a route may word its 403 more precisely.
  const errors = doc.public ? doc.errors : { 401: "Missing API key", 403: "Invalid API key", ...doc.errors };
  for (const [status, description] of Object.entries(errors)) {
    responses[status] = { description, content: json(status === "400" && doc.failure ? t.Union([doc.failure, errorBody]) : errorBody) };
  }
  return {
    summary: doc.summary,
    description: doc.description,
    tags: [doc.tag],
    security: doc.public ? [] : [{ apiKey: [] }],
    ...(doc.body ? { requestBody: { required: true, content: json(doc.body) } } : {}),
    responses,
  };
}
