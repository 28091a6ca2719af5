// The OpenAPI document (GET /swagger/json) is the whole contract:
// - every route the app serves is in it, and nothing else is;
// - every schema in it compiles under ajv 2020 in strict mode, with no
//   keyword outside JSON Schema and `integer` only as a type;
// - every /v1/ response has an example, each a real answer
//   (scripts/api-examples.ts) that its schema accepts, and so does every
//   other JSON response but the probes' 500s;
// - driving every operation to every status it declares passes the same
//   check every HTTP test's answers go through (support/contract.ts), and
//   that check refuses an undeclared status, header or body.
import { describe, expect, test } from "bun:test";
import type { OpenAPIV3_1 } from "openapi-types";
import { recordExamples } from "../../scripts/api-examples";
import { createApp } from "../../src/app";
import { templateOf } from "../../src/http/openapi";
import committed from "../../src/http/openapi-examples.json";
import { createHarness } from "../support/harness";
import { Contract, observed, relink, servedDocument, strictAjv } from "../support/contract";

const document = await servedDocument();
const h = await createHarness();

/** Routes that serve the document and Swagger UI: the API's description, not the API. */
const DOCUMENTATION = ["GET /swagger", "GET /swagger/json", "GET /swagger/assets/swagger-ui-bundle.js", "GET /swagger/assets/swagger-ui.css"];

const documented = Object.entries(document.paths ?? {}).flatMap(([path, item]) => Object.keys(item ?? {}).map((method) => `${method.toUpperCase()} ${path}`));

/** Every schema in the document, with where it is. */
function schemasOf(doc: OpenAPIV3_1.Document): [string, unknown][] {
  const found: [string, unknown][] = Object.entries(doc.components?.schemas ?? {}).map(([name, schema]) => [`components.schemas.${name}`, schema]);
  for (const [name, parameter] of Object.entries(doc.components?.parameters ?? {}))
    found.push([`components.parameters.${name}`, (parameter as OpenAPIV3_1.ParameterObject).schema]);
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item ?? {}) as [string, OpenAPIV3_1.OperationObject][]) {
      const where = `${method.toUpperCase()} ${path}`;
      for (const [type, media] of Object.entries((op.requestBody as OpenAPIV3_1.RequestBodyObject | undefined)?.content ?? {}))
        found.push([`${where} request ${type}`, media.schema]);
      for (const parameter of (op.parameters ?? []) as OpenAPIV3_1.ParameterObject[])
        if (parameter.schema) found.push([`${where} parameter ${parameter.name}`, parameter.schema]);
      for (const [status, response] of Object.entries(op.responses ?? {}) as [string, OpenAPIV3_1.ResponseObject][]) {
        for (const [type, media] of Object.entries(response.content ?? {})) found.push([`${where} ${status} ${type}`, media.schema]);
        for (const [name, header] of Object.entries(response.headers ?? {}))
          found.push([`${where} ${status} header ${name}`, (header as OpenAPIV3_1.HeaderObject).schema]);
      }
    }
  }
  return found;
}

describe("the document lists every route", () => {
  test("every route the app serves is documented, every documented operation is a route", () => {
    const served = h.app.routes.map((route) => `${route.method} ${templateOf(route.path)}`);
    const undocumented = served.filter((route) => !documented.includes(route) && !DOCUMENTATION.includes(route));
    expect(undocumented).toEqual([]);
    expect(documented.filter((route) => !served.includes(route))).toEqual([]);
    expect(documented).toContain("GET /.well-known/jwks.json");
  });

  test("a route added without a description is caught", () => {
    const app = createApp(h.deps).get("/v1/undocumented", () => "hi");
    const served = app.routes.map((route) => `${route.method} ${templateOf(route.path)}`);
    expect(served.filter((route) => !documented.includes(route) && !DOCUMENTATION.includes(route))).toEqual(["GET /v1/undocumented"]);
  });

  test("GET /swagger/json serves this document", async () => {
    expect((await h.call("GET", "/swagger/json")).body).toEqual(document);
  });

  test("servers: PUBLIC_URL when set, else the host that served the document", async () => {
    expect(document.servers).toEqual([{ url: "/", description: expect.any(String) }]);
    expect((await servedDocument("https://zk.example.com")).servers).toEqual([{ url: "https://zk.example.com", description: expect.any(String) }]);
  });
});

describe("standard JSON Schema, strictly", () => {
  test("ajv 2020 in strict mode compiles every schema in the document", () => {
    const ajv = strictAjv(document);
    const all = schemasOf(document);
    for (const [where, schema] of all) {
      try {
        ajv.compile(relink(schema) as object);
      } catch (error) {
        throw new Error(`${where}: ${String(error)}`);
      }
    }
    console.log(`ajv strict: ${all.length} schemas compiled`);
    expect(all.length).toBeGreaterThan(100);
  });

  // ajv's strict mode above refuses any keyword it does not know (the `error` the request schemas used to carry).
  test("integers are a type, never a format", () => {
    expect(JSON.stringify(document)).not.toContain('"format":"integer"');
    const spend = document.components?.schemas?.Spend as OpenAPIV3_1.SchemaObject;
    expect(spend.properties?.limit).toMatchObject({ type: "integer" });
    expect(spend.properties?.count).toEqual({ type: "integer", minimum: 0 });
  });

  test("closed sets are enums: statuses, reasons, details, previous_status, error texts per status", () => {
    const schemas = document.components?.schemas as Record<string, OpenAPIV3_1.SchemaObject>;
    const consts = (schema: unknown) => ((schema as OpenAPIV3_1.SchemaObject).anyOf ?? []).map((member) => (member as OpenAPIV3_1.SchemaObject).const);
    expect(consts(schemas.VerificationFailed!.properties!.reason)).toContain("mandate_violation");
    expect(consts(schemas.VerificationFailed!.properties!.reason)).toContain("circuit_retired");
    expect(consts(schemas.Circuit!.properties!.state)).toEqual(["active", "accepted", "retired"]);
    expect(schemas.Challenge!.required).toContain("circuit_id");
    expect(consts(schemas.VerificationFailed!.properties!.detail)).toEqual([
      "action",
      "merchant",
      "validity",
      "currency",
      "amount_missing",
      "max_amount",
      "max_total",
      "max_count",
    ]);
    expect(consts(schemas.ChallengeUsed!.properties!.previous_status)).toEqual(["verified", "failed", "pending"]);
    expect(consts(schemas.Session!.properties!.status)).toEqual(["pending", "verified", "failed", "expired"]);
    const agents = document.paths!["/v1/agents"]!.post!.responses!["429"] as OpenAPIV3_1.ResponseObject;
    const error = (agents.content!["application/json"]!.schema as OpenAPIV3_1.SchemaObject).properties!.error as OpenAPIV3_1.SchemaObject;
    expect(error.enum).toEqual(["Rate limit exceeded", "Too many agents"]);
  });
});

describe("examples", () => {
  /** Declared statuses no run can provoke: the 500 describe() gives every route, on the two probes that read nothing that can fail. */
  const UNREACHED = ["health 500", "ready 500"];
  const examples = committed as unknown as Record<string, Record<string, Record<string, unknown>>>;

  test("every JSON or text response has an example (but the probes' 500), and every example is accepted by its schema", () => {
    const ajv = strictAjv(document);
    let checked = 0;
    for (const item of Object.values(document.paths ?? {})) {
      for (const op of Object.values(item ?? {}) as OpenAPIV3_1.OperationObject[]) {
        for (const [status, response] of Object.entries(op.responses ?? {}) as [string, OpenAPIV3_1.ResponseObject][]) {
          const recorded = examples[op.operationId!]?.[status] ?? {};
          // Only a 304 Not Modified is declared without content: there is no body to show.
          if (!response.content) {
            expect({ op: op.operationId, status, recorded }).toEqual({ op: op.operationId, status: "304", recorded: {} });
            continue;
          }
          const [mediaType, media] = Object.entries(response.content)[0]!;
          // A binary answer (an artifact download) has no example to read; the probes' 500 is declared
          // for every route (describe()), but no store failure reaches /health or /ready, so no run records one.
          const readable = mediaType === "application/json" || mediaType.startsWith("text/");
          // The list cannot go stale: a status it names must indeed have no recorded answer.
          if (UNREACHED.includes(`${op.operationId} ${status}`))
            expect({ op: op.operationId, status, recorded }).toEqual({ op: op.operationId, status, recorded: {} });
          else if (readable)
            expect({ op: op.operationId, status, examples: Object.keys(recorded).length > 0 }).toEqual({ op: op.operationId, status, examples: true });
          expect(Object.keys(media.examples ?? {})).toEqual(Object.keys(recorded));
          const validate = ajv.compile(relink(media.schema) as object);
          for (const [name, value] of Object.entries(recorded)) {
            if (!validate(value)) throw new Error(`${op.operationId} ${status} ${name}: ${ajv.errorsText(validate.errors)}`);
            checked++;
          }
        }
      }
    }
    console.log(`examples: ${checked} validated`);
  });

  test("scripts/api-examples.ts reaches every recorded status again, every answer within the contract", async () => {
    const fresh = await recordExamples(observed);
    const shape = (all: Record<string, Record<string, unknown>>) =>
      Object.entries(all)
        .filter(([operation]) => operation !== "$comment")
        .flatMap(([operation, statuses]) => Object.keys(statuses).map((status) => `${operation} ${status}`))
        .sort();
    expect(shape(fresh)).toEqual(shape(examples));
  }, 60_000);
});

describe("the check itself", () => {
  const contract = new Contract(document);
  const json = (extra: Record<string, string> = {}) => new Headers({ "content-type": "application/json", "x-request-id": "r1", ...extra });
  const usage = JSON.stringify({ key_id: "0123456789abcdef", name: "k", challenges: 1, verifications: { verified: 0, failed: 0 }, rate_limit_per_minute: 0 });

  test("accepts a declared answer", () => {
    expect(contract.check("GET", "http://x/v1/usage", 200, json(), usage)).toBe("GET /v1/usage 200");
  });
  test("refuses an undeclared status", () => {
    expect(() => contract.check("GET", "http://x/v1/usage", 418, json(), usage)).toThrow("status not declared");
  });
  test("refuses an undeclared header, and a missing required one", () => {
    expect(() => contract.check("GET", "http://x/v1/usage", 200, json({ "x-powered-by": "bun" }), usage)).toThrow("header x-powered-by not declared");
    expect(() => contract.check("GET", "http://x/v1/usage", 200, new Headers({ "content-type": "application/json" }), usage)).toThrow(
      "required header x-request-id",
    );
  });
  test("refuses a body the schema does not accept: a string count, an unknown member, an error text the status cannot carry", () => {
    expect(() => contract.check("GET", "http://x/v1/usage", 200, json(), usage.replace('"challenges":1', '"challenges":"1"'))).toThrow("body does not match");
    expect(() => contract.check("GET", "http://x/v1/usage", 200, json(), usage.replace("{", '{"extra":1,'))).toThrow("body does not match");
    expect(() => contract.check("GET", "http://x/v1/usage", 404, json(), JSON.stringify({ error: "Agent not found", request_id: "r1" }))).toThrow();
    expect(() =>
      contract.check(
        "POST",
        "http://x/v1/agents",
        429,
        json({ "retry-after": "5" }),
        JSON.stringify({ error: "Too many pending challenges", request_id: "r1" }),
      ),
    ).toThrow("body does not match");
  });
  test("a 304 Not Modified has no body and no media type; an artifact is sent as the media type declared", () => {
    const path = "http://x/v1/circuits/agent_identity-b3acd33b3b99ce90/zkey";
    const etag = `"${"a".repeat(64)}"`;
    const cached = (extra: Record<string, string> = {}) =>
      new Headers({ "x-request-id": "r1", etag, "cache-control": "public, max-age=31536000, immutable", ...extra });
    expect(contract.check("GET", path, 304, cached(), "")).toBe("GET /v1/circuits/{id}/zkey 304");
    expect(() => contract.check("GET", path, 304, cached({ "content-type": "application/octet-stream" }), "zkey")).toThrow("declares none");
    expect(contract.check("GET", path, 200, cached({ "content-type": "application/octet-stream" }), "zkey")).toBe("GET /v1/circuits/{id}/zkey 200");
    expect(() => contract.check("GET", path, 200, cached({ "content-type": "application/json" }), "{}")).toThrow("declared application/octet-stream");
    expect(() => contract.check("GET", path, 200, cached({ "content-type": "application/octet-stream", etag: "W/x" }), "zkey")).toThrow("header etag");
  });
  test("an unlisted path must be the catch-all 404", () => {
    expect(
      contract.check("GET", "http://x/nowhere", 404, json(), JSON.stringify({ error: "Not found", message: "No route GET /nowhere", request_id: "r1" })),
    ).toBe("(no route) 404");
    expect(() => contract.check("GET", "http://x/nowhere", 200, json(), "{}")).toThrow("not in the document");
  });
});
