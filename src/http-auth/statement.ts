// What a ZKAgent challenge binds (docs/http-auth.md, "What the proof binds"),
// computed in one place for both sides. The guard builds the challenged
// context from the request it received; the agent builds the same from the
// request it is about to send and compares it with the challenge it was
// handed, so it proves only its own request (WebAuthn's clientDataJSON, with
// the origin inside what is signed, is the model).
//
// Scheme version 2 (this file): the request member carries the origin
// (scheme and authority) beside the method and the target. Version 1 bound
// method and target only, so a site the agent merely visited could relay a
// challenge for another origin's route: an agent refuses a challenge whose
// request member lacks the origin.
import canonicalize from "canonicalize";
import type { JsonObject } from "../identity/encoding";

/** The version of what a challenge binds; 2 added the origin. */
export const SCHEME_VERSION = 2;

/** The member of the challenged context that binds the request: `{method, origin, target}`. The guard's own. */
export const REQUEST_MEMBER = "@request";

/** The request a challenge binds. */
export interface BoundRequest {
  /** As sent (Fetch normalises the standard methods to upper case). */
  method: string;
  /** `scheme://host[:port]`, as the WHATWG URL parser serialises an origin (lower-case host, default port dropped). */
  origin: string;
  /** The request target: path and query string, as the URL parser serialises them. */
  target: string;
}

/** The origin of an http(s) URL (`https://shop.example`), or null for anything else. */
export function originOf(url: string | URL): string | null {
  const text = String(url);
  if (!URL.canParse(text)) return null;
  const parsed = new URL(text);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null;
  return parsed.origin;
}

/**
 * The request a challenge binds for a request to `url` with `method`: the
 * origin is `origin` when given (the merchant's configured public origin,
 * e.g. behind a proxy that terminates TLS or rewrites Host), else the URL's.
 */
export function boundRequest(method: string, url: string | URL, origin?: string): BoundRequest {
  const parsed = new URL(String(url));
  const own = origin === undefined ? originOf(parsed) : originOf(origin);
  if (own === null) throw new TypeError(`not an http(s) origin: ${origin ?? String(url)}`);
  return { method, origin: own, target: parsed.pathname + parsed.search };
}

/** The context a challenge binds: the merchant's declared fields and the request member. */
export function challengedContext(declared: JsonObject, request: BoundRequest): JsonObject {
  if (Object.hasOwn(declared, REQUEST_MEMBER)) throw new TypeError(`the context member "${REQUEST_MEMBER}" is the guard's own`);
  return { ...declared, [REQUEST_MEMBER]: { method: request.method, origin: request.origin, target: request.target } };
}

/**
 * Why `value` cannot be bound as JSON exactly as given, or null: a number that
 * is not finite (JSON.parse turns 1e400 into Infinity, which canonical JSON
 * cannot write), a string with a lone surrogate (not well-formed UTF-16, so
 * not one UTF-8 text), or anything but null, booleans, numbers, strings,
 * arrays and plain objects. `path` names where, for the message.
 */
export function jsonProblem(value: unknown, path = "context"): string | null {
  switch (typeof value) {
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : `${path} is a number JSON cannot carry exactly (${value})`;
    case "string":
      return value.isWellFormed() ? null : `${path} is not well-formed Unicode (a lone surrogate)`;
    case "object": {
      if (value === null) return null;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const problem = jsonProblem(value[i], `${path}[${i}]`);
          if (problem) return problem;
        }
        return null;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return `${path} is not a plain JSON object`;
      for (const [name, member] of Object.entries(value)) {
        if (!name.isWellFormed()) return `${path} has a member name that is not well-formed Unicode`;
        const problem = jsonProblem(member, `${path}.${name}`);
        if (problem) return problem;
      }
      return null;
    }
    default:
      return `${path} is not JSON (${typeof value})`;
  }
}

/** Whether a Content-Type is JSON (`application/json`, `application/*+json`): the bodies whose fields a context may declare, on both sides. */
export const isJsonType = (contentType: string | null): boolean => /^application\/([a-z0-9.+-]*\+)?json\b/i.test(contentType ?? "");

/** Why a challenge does not bind the request the agent is sending: the field that differs, and how. */
export interface Mismatch {
  /** `action`, `@request`, `method`, `origin`, `target`, or the body field's name. */
  field: string;
  message: string;
}

/** The request as the agent is about to send it. */
export interface OutgoingRequest {
  method: string;
  url: string | URL;
  /** The body parsed as JSON when it is JSON; undefined otherwise. */
  body: unknown;
}

const same = (a: unknown, b: unknown): boolean => canonicalize(a) === canonicalize(b);

/**
 * Null when the challenge (its action and decoded context) binds exactly the
 * request the agent is sending: the request member names the same method,
 * origin and target; every member of the declared context that the body has
 * at its top level equals the body's (members the body lacks are the
 * merchant's own, such as its name: `approve` sees them); and the action is
 * `expect.action` when the agent says which it means. Otherwise the first
 * field that differs.
 */
export function requestMismatch(
  challenge: { action: string; context: JsonObject },
  request: OutgoingRequest,
  expect: { action?: string } = {},
): Mismatch | null {
  if (expect.action !== undefined && challenge.action !== expect.action)
    return { field: "action", message: `the challenge is for action "${challenge.action}", not "${expect.action}"` };
  const bound = challenge.context[REQUEST_MEMBER];
  if (typeof bound !== "object" || bound === null || Array.isArray(bound))
    return { field: REQUEST_MEMBER, message: `the challenge's context binds no request (no "${REQUEST_MEMBER}" member)` };
  const { method, origin, target } = bound as Record<string, unknown>;
  if (typeof origin !== "string")
    return { field: "origin", message: `the challenge binds no origin (scheme version 1); version ${SCHEME_VERSION} binds the origin the request is sent to` };
  const mine = boundRequest(request.method, request.url);
  if (method !== mine.method) return { field: "method", message: `the challenge is for method ${String(method)}, the request is ${mine.method}` };
  if (origin !== mine.origin) return { field: "origin", message: `the challenge is for origin ${origin}, the request goes to ${mine.origin}` };
  if (target !== mine.target) return { field: "target", message: `the challenge is for target ${String(target)}, the request is for ${mine.target}` };
  const body = request.body;
  if (typeof body === "object" && body !== null && !Array.isArray(body)) {
    for (const [name, value] of Object.entries(challenge.context)) {
      if (name === REQUEST_MEMBER || !Object.hasOwn(body, name)) continue;
      if (!same(value, (body as JsonObject)[name]))
        return {
          field: name,
          message: `the challenge binds ${name} = ${canonicalize(value)}, the request's body has ${canonicalize((body as JsonObject)[name])}`,
        };
    }
  }
  return null;
}
