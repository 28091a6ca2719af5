// What the guard reads from a request before any call to the service: the
// action and the context a challenge binds (the merchant's declared fields
// and the request member, http-auth/statement.ts). A request from which no
// JSON-safe context can be derived is refused here (400), so the service
// never sees it.
import type { JsonObject } from "../identity/encoding";
import { parseIJson } from "../identity/ijson";
import { type BoundRequest, boundRequest, challengedContext, isJsonType, jsonProblem } from "../http-auth/statement";
import type { GuardOptions, RequestInput } from "./types";

/** Thrown by a context or action function: the request cannot be challenged as it is (400, with this message). */
export class BadRequest extends Error {}

/**
 * A context function that takes `names` from the JSON body, each required
 * (400 naming the first one missing) and each a value JSON carries exactly
 * (400 for a number that overflowed, such as 1e400, or a lone surrogate),
 * and adds `extra` (e.g. the merchant's name):
 * `context: bodyFields(["amount", "currency"], { merchant: "shop" })`.
 */
export function bodyFields(names: string[], extra: JsonObject = {}): (input: RequestInput) => JsonObject {
  return ({ body }) => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new BadRequest("the body must be a JSON object");
    const context: JsonObject = {};
    for (const name of names) {
      const value = (body as JsonObject)[name];
      if (value === undefined || value === null) throw new BadRequest(`${name} is required`);
      const problem = jsonProblem(value, name);
      if (problem) throw new BadRequest(problem);
      context[name] = value;
    }
    return { ...context, ...extra };
  };
}

/** The action and the context a challenge for this request binds. */
export interface Derived {
  action: string;
  /** The merchant's declared fields: the session's context. */
  declared: JsonObject;
  /** `declared` plus the request member: what the challenge binds. */
  context: JsonObject;
  bound: BoundRequest;
}

/** Reads the body once (as JSON when it says it is), runs the merchant's functions, and checks that what they derived can be bound. */
export async function deriveRequest(request: Request, options: Pick<GuardOptions, "action" | "context" | "origin">): Promise<Derived> {
  let body: unknown;
  if (request.body !== null && isJsonType(request.headers.get("content-type"))) {
    // I-JSON (RFC 7493), as the service reads its own bodies: a member named twice
    // ({"amount":"1","amount":"1000"}) is refused, not read last-wins while
    // another parser in the merchant's stack might read it first-wins.
    const parsed = parseIJson(await request.clone().text());
    if (!parsed.ok) throw new BadRequest(parsed.rule === "syntax" ? "the body is not valid JSON" : `the body's ${parsed.path || "text"}: ${parsed.message}`);
    body = parsed.value;
  }
  const input = { request, body };
  const action = typeof options.action === "string" ? options.action : await options.action(input);
  if (typeof action !== "string") throw new TypeError("the action function must return a string");
  const declared = options.context ? await options.context(input) : {};
  if (typeof declared !== "object" || declared === null || Array.isArray(declared)) throw new TypeError("the context function must return a JSON object");
  const bound = boundRequest(request.method, request.url, options.origin);
  const context = challengedContext(declared, bound);
  // A value JSON cannot carry exactly (1e400 parsed as Infinity, a lone
  // surrogate) would be bound as something else or not at all: refused
  // before the service is asked for a challenge.
  const problem = jsonProblem(action, "action") ?? jsonProblem(context, "context");
  if (problem) throw new BadRequest(problem);
  return { action, declared, context, bound };
}
