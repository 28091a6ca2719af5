// What the guard reads from a request before any call to the service: the
// URL it was sent to, the action and the context a challenge binds (the
// merchant's declared fields and the request member, http-auth/statement.ts).
// A request whose URL or context cannot be read is refused here (400), so
// the service never sees it. Node's request (IncomingMessage) becomes the
// Fetch API Request the guard reads in one place, nodeRequest, for every
// Node adapter.
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

/**
 * Why the guard cannot read the URL a request was sent to, or null. A Fetch
 * API server builds `request.url` from the Host header: a Host that is no
 * host[:port] (`[::1`, `shop.example:99999`) leaves a URL that does not
 * parse, and every origin or target taken from it would be a guess (RFC 9112
 * §3.2: such a request is answered 400).
 */
export function requestUrlProblem(request: Request): string | null {
  if (!URL.canParse(request.url)) return "the request's URL does not parse: its Host header is not a host[:port]";
  const { protocol } = new URL(request.url);
  return protocol === "http:" || protocol === "https:" ? null : `the request's URL is not http(s) (${protocol})`;
}

/** A Host header as RFC 9110 §7.2 has it: a registered name, IPv4 or bracketed IPv6 literal, then an optional port; no userinfo, path or space. */
const HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~!$&'()*+,;=%-]+)(:[0-9]*)?$/;

/** What a Node adapter reads from Node's request (IncomingMessage) beside its body; written out so the core's types need no Node types. */
export interface NodeRequestParts {
  method?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
  /** TLS sockets say `encrypted`. */
  socket?: unknown;
  /** Express's: the target before a router stripped its mount path. */
  originalUrl?: string;
  /** Express's: "https" behind a proxy it trusts (X-Forwarded-Proto). */
  protocol?: string;
}

/**
 * The Fetch API Request the guard checks, built from a Node request and the
 * body bytes read, or why it cannot be (a 400's message). Only the path and
 * query are taken from the request target: Node keeps an absolute-form target
 * (`POST https://relay.example/orders HTTP/1.1`, RFC 9112 §3.2.2) in `req.url`
 * as sent, and `new URL(target, base)` would take the client's authority over
 * the Host header, so such a target, or one starting `//` (which a URL parser
 * reads as an authority), is refused. The authority is Host's, checked to be
 * a host[:port]; the guard's `origin`, when set, replaces it anyway.
 */
export function nodeRequest(req: NodeRequestParts, body: Uint8Array): { ok: true; request: Request } | { ok: false; message: string } {
  const target = req.originalUrl ?? req.url ?? "";
  if (!target.startsWith("/") || target.startsWith("//"))
    return { ok: false, message: "the request target must be a path (origin-form, RFC 9112 §3.2.1), not an absolute URL or //authority" };
  const host = req.headers.host;
  if (host === undefined || host === "") return { ok: false, message: "the request has no Host header" };
  if (typeof host !== "string" || !HOST.test(host) || !URL.canParse(`http://${host}/`)) return { ok: false, message: "the Host header is not a host[:port]" };
  const protocol = req.protocol ?? ((req.socket as { encrypted?: boolean } | null | undefined)?.encrypted ? "https" : "http");
  // Express's req.protocol is X-Forwarded-Proto's first value behind a proxy it trusts: anything a client wrote there.
  if (protocol !== "http" && protocol !== "https") return { ok: false, message: `the request's protocol is not http(s) (${protocol})` };
  const url = `${protocol}://${host}${target}`;
  if (!URL.canParse(url)) return { ok: false, message: "the request target does not parse as a path and query" };
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD" && body.length > 0;
  try {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
    }
    return { ok: true, request: new Request(url, { method, headers, body: hasBody ? new Uint8Array(body) : undefined }) };
  } catch {
    // Node admits a few header values and methods the Fetch API refuses: the client's to fix, never a 500.
    return { ok: false, message: "a header or the method is not one the Fetch API can carry" };
  }
}
