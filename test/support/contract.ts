// The published contract, checked against every response the HTTP tests
// receive. observed(app) wraps app.handle: each answer is matched to its
// operation in the OpenAPI document (GET /swagger/json) and must have a
// declared status, only declared headers (and every required one), the
// declared media type, and a body the declared schema accepts (ajv, strict).
// A violation throws from app.handle, so the test that provoked it fails. The
// answers are counted per route and status; the preload prints the counts
// at the end of the run (test/preload.ts).
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import type { OpenAPIV3_1 } from "openapi-types";
import pkg from "../../package.json";
import { createApp } from "../../src/app";
import { openapiDocument } from "../../src/http/openapi";
import { systemClock } from "../../src/clock";
import { silentLogger } from "../../src/log";
import { openSqlite } from "../../src/store/sqlite";
import type { Verifier } from "../../src/verifier/types";

/**
 * The document GET /swagger/json serves, built the same way from the app's
 * routes (test/contract/ checks they are equal). Not through app.handle: a
 * request outside a test would leave its request context (AsyncLocalStorage
 * enterWith) on the test runner's own chain.
 */
export async function servedDocument(publicUrl?: string): Promise<OpenAPIV3_1.Document> {
  const app = createApp({ store: openSqlite(":memory:"), clock: systemClock, verifier: {} as Verifier, logger: silentLogger, publicUrl });
  return JSON.parse(JSON.stringify(openapiDocument(app.routes, { version: pkg.version, publicUrl }))) as OpenAPIV3_1.Document;
}

const COMPONENTS = "https://zkagent.invalid/components/schemas/";

/** A strict ajv over the document's schemas; refs to components resolve to the schemas added under COMPONENTS. */
export function strictAjv(document: OpenAPIV3_1.Document) {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  for (const [name, schema] of Object.entries(document.components?.schemas ?? {})) ajv.addSchema(relink(schema) as object, `${COMPONENTS}${name}`);
  return ajv;
}

/** A copy whose "#/components/schemas/X" refs name the schemas as added to ajv. */
export function relink(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(relink);
  if (typeof schema !== "object" || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === "$ref" && typeof value === "string" ? value.replace("#/components/schemas/", COMPONENTS) : relink(value),
    ]),
  );
}

/** Headers of the transport, not of the API: never declared in OpenAPI (Content-Type is checked against the media type). */
const TRANSPORT_HEADERS = new Set(["content-type", "content-length", "date", "connection", "keep-alive", "transfer-encoding"]);

/** The answer nobody receives (the client left mid-body, docs/api.md): recorded by the service, not part of the contract. */
const CLIENT_CLOSED = 499;

/** Routes that serve the document itself rather than the API. */
const DOCUMENTATION_PATHS = /^\/swagger(\/|$)/;

export const NO_ROUTE = "(no route)";

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  operation: OpenAPIV3_1.OperationObject;
}

/** Where the counts live: a global, so the preload can print them without importing the app. */
export const COUNTS_KEY = Symbol.for("zkagent.contract.counts");
const globalCounts = ((globalThis as Record<symbol, unknown>)[COUNTS_KEY] ??= new Map<string, number>()) as Map<string, number>;

export class Contract {
  readonly counts = globalCounts;
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<unknown, ValidateFunction>();
  private readonly operations: Operation[];
  private readonly notFound: ValidateFunction;

  constructor(readonly document: OpenAPIV3_1.Document) {
    this.ajv = strictAjv(document);
    this.operations = Object.entries(document.paths ?? {}).flatMap(([template, item]) =>
      Object.entries(item ?? {}).map(([method, operation]) => ({
        method: method.toUpperCase(),
        template,
        // A template's {param} matches one non-empty segment.
        pattern: new RegExp(`^${template.replace(/[.]/g, "\\.").replace(/\{[^}]+\}/g, "[^/]+")}/?$`),
        operation: operation as OpenAPIV3_1.OperationObject,
      })),
    );
    this.notFound = this.ajv.compile({
      allOf: [{ $ref: `${COMPONENTS}Error` }],
      type: "object",
      required: ["error"],
      properties: { error: { const: "Not found" } },
    });
  }

  private validator(schema: unknown): ValidateFunction {
    let validate = this.validators.get(schema);
    if (!validate) this.validators.set(schema, (validate = this.ajv.compile(relink(schema) as object)));
    return validate;
  }

  /** Checks one answer; throws naming what breaks the contract. Returns the route and status it was counted under. */
  check(method: string, url: string, status: number, headers: Headers, text: string): string | null {
    const path = new URL(url).pathname;
    if (DOCUMENTATION_PATHS.test(path) || status === CLIENT_CLOSED) return null;
    // HEAD is GET without the body (RFC 9110 §9.3.2): held to the GET operation's status and headers.
    const head = method === "HEAD";
    const found = this.operations.find((op) => op.method === (head ? "GET" : method) && op.pattern.test(path));
    const where = `${method} ${found?.template ?? path} → ${status}`;
    const fail = (why: string): never => {
      throw new Error(`contract: ${where}: ${why}\n${text.slice(0, 500)}`);
    };
    if (!found) {
      // The catch-all: any method or path the document does not list.
      if (status !== 404 || !(head || this.notFound(JSON.parse(text)))) fail("not in the document, and not the catch-all 404 Not found");
      return this.count(`${NO_ROUTE} ${status}`);
    }
    const response = found.operation.responses?.[String(status)] as OpenAPIV3_1.ResponseObject | undefined;
    if (!response) fail(`status not declared (declared: ${Object.keys(found.operation.responses ?? {}).join(", ")})`);
    const declared = Object.fromEntries(
      Object.entries(response!.headers ?? {}).map(([name, header]) => [name.toLowerCase(), header as OpenAPIV3_1.HeaderObject]),
    );
    for (const [name] of headers) {
      if (!TRANSPORT_HEADERS.has(name) && !declared[name]) fail(`header ${name} not declared`);
    }
    for (const [name, header] of Object.entries(declared)) {
      const value = headers.get(name);
      if (value === null) {
        if (header.required) fail(`required header ${name} missing`);
        continue;
      }
      const schema = header.schema as OpenAPIV3_1.SchemaObject;
      const parsed = schema.type === "integer" && /^\d+$/.test(value) ? Number(value) : value;
      if (!this.validator(schema)(parsed)) fail(`header ${name}: ${JSON.stringify(value)} does not match ${JSON.stringify(schema)}`);
    }
    const sent = (headers.get("content-type") ?? "").split(";")[0]!.trim();
    // A response declared without content (304 Not Modified) has no body and no media type.
    if (!response!.content) {
      if (text !== "" || sent !== "") fail(`a body (${sent || "no content-type"}) where the document declares none`);
      return this.count(`${head ? "HEAD" : method} ${found.template} ${status}`);
    }
    const [mediaType, media] = Object.entries(response!.content)[0] ?? fail("no content declared");
    if (sent !== mediaType) fail(`content-type ${sent}, declared ${mediaType}`);
    if (head) return this.count(`HEAD ${found.template} ${status}`);
    const body = mediaType === "application/json" ? JSON.parse(text) : text;
    const validate = this.validator(media.schema);
    if (!validate(body)) fail(`body does not match: ${this.ajv.errorsText(validate.errors)}`);
    return this.count(`${method} ${found.template} ${status}`);
  }

  private count(key: string): string {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    return key;
  }
}

let shared: Promise<Contract> | undefined;
/** One Contract for the whole test run (every file shares the counts). */
export const contract = (): Promise<Contract> => (shared ??= servedDocument().then((document) => new Contract(document)));

/** The app, with every answer of app.handle checked against the contract before the test sees it. */
export function observed<T extends { handle: (request: Request) => Promise<Response> }>(app: T): T {
  const handle = app.handle.bind(app);
  app.handle = async (request: Request) => {
    const method = request.method;
    const url = request.url;
    const response = await handle(request);
    const text = await response.clone().text();
    (await contract()).check(method, url, response.status, response.headers, text);
    return response;
  };
  return app;
}
