// The guard as Express middleware (Express 4 and 5): a refused request gets
// the guard's answer; a verified one reaches the handler with the session in
// res.locals.zkagent and the body it was verified with in req.body (the
// parsed JSON, or the raw bytes as a Buffer for another media type).
//
//   const orders = zkagent({ url, apiKey, action: "purchase", context: bodyFields(["amount", "currency"]) });
//   app.post("/orders", orders, (req, res) => { const { agent_id, context } = orders.session(res); … });
//
// The proof binds the body's declared fields as the agent sent them, so the
// guard reads the body's bytes: the middleware reads the stream itself when
// nothing read it before, or takes the bytes a parser in front kept
// (`express.json({ verify: (req, _res, buf) => { req.rawBody = buf } })`,
// the pattern payment webhooks use; or express.raw()'s Buffer). A body a
// parser consumed with no raw copy is not guessed at (a re-serialised object
// is not what was sent): the request is answered 400 `body_already_read`
// naming the fix, and onError is told.
// Only the Node types are named here, so a project needs no @types/express
// to use it; the handler fits app.use / app.post as any middleware does.
import type { IncomingMessage, ServerResponse } from "node:http";
import { isJsonType } from "../../http-auth/statement";
import { type GuardMode, type GuardOptions, type ProofScheme, type SessionOf, zkagentGuard } from "../index";
import { reporter, warnOnce } from "../problems";
import { nodeRequest } from "../request";

export type { GuardOptions, SignatureSession, VerifiedSession } from "../index";

/** The parts of Express's request the middleware reads and writes. */
export type ExpressRequest = IncomingMessage & {
  body?: unknown;
  /** The body's bytes as received, kept by a body parser's `verify` callback in front of the middleware. */
  rawBody?: unknown;
  originalUrl?: string;
  protocol?: string;
  /** Set by body-parser once it has read the stream. */
  _body?: boolean;
};
/** The parts of Express's response the middleware writes: res.locals.zkagent holds the session. */
export type ExpressResponse = ServerResponse & { locals: Record<string, unknown> };
export type NextFunction = (error?: unknown) => void;

/** What res.locals holds after the middleware, for a route that accepts `M`. */
export interface ZkAgentLocals<M extends GuardMode = ProofScheme> {
  zkagent: SessionOf<M>;
}

/**
 * The verified session of a request the middleware let through
 * (res.locals.zkagent), typed for the schemes the route accepts (`M`, the
 * proofs by default; the middleware's own `.session(res)` needs no type
 * argument); throws in a handler the middleware is not in front of, rather
 * than letting it serve an unverified request.
 */
export function zkagentSession<M extends GuardMode = ProofScheme>(res: { locals: Record<string, unknown> }): SessionOf<M> {
  const session = res.locals.zkagent;
  if (typeof session !== "object" || session === null) throw new Error("zkagent: no verified session here: mount zkagent(...) in front of this handler");
  return session as SessionOf<M>;
}

export interface ExpressGuardOptions<M extends GuardMode = ProofScheme> extends GuardOptions<M> {
  /** The most body bytes read; a longer body is answered 413. Default 1 MiB. */
  limit?: number;
}

/** The middleware, with the session of the requests it let through typed by its `accept`. */
export interface ZkAgentMiddleware<M extends GuardMode = ProofScheme> {
  (req: ExpressRequest, res: ExpressResponse, next: NextFunction): Promise<void>;
  /** The session in a handler behind this middleware (throws behind none). */
  session(res: { locals: Record<string, unknown> }): SessionOf<M>;
}

/** A body parser (or anything else) read the request before the middleware and kept no raw copy: what it would bind is no longer there. */
export class BodyAlreadyReadError extends Error {
  override readonly name = "BodyAlreadyReadError";
}

const BODY_ALREADY_READ =
  "the request body was read before the zkagent middleware (a body parser such as express.json() in front of it) and its bytes were not kept. " +
  "Keep them: express.json({ verify: (req, _res, buf) => { req.rawBody = buf } }), or mount zkagent(...) before any body parser.";

const JSON_HEADERS = { "content-type": "application/json", "cache-control": "no-store" };

function reply(res: ExpressResponse, status: number, body: Record<string, unknown>): void {
  res.writeHead(status, JSON_HEADERS).end(JSON.stringify(body));
}

class TooLarge extends Error {}

/** The request's body, read to its end; TooLarge past `limit` bytes (the rest is not read). */
function readBody(req: ExpressRequest, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      total += bytes.length;
      if (total > limit) {
        req.off("data", onData);
        req.pause();
        reject(new TooLarge());
        return;
      }
      chunks.push(bytes);
    };
    req.on("data", onData);
    req.once("end", () => resolve(Buffer.concat(chunks)));
    req.once("error", reject);
  });
}

const isEmptyObject = (value: unknown): boolean =>
  typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype && Object.keys(value).length === 0;

/** The bytes a parser in front kept: `req.rawBody` from a verify callback, or express.raw()'s Buffer in req.body. */
function keptBytes(req: ExpressRequest): Uint8Array | null {
  if (req.rawBody instanceof Uint8Array) return req.rawBody;
  if (typeof req.rawBody === "string") return Buffer.from(req.rawBody, "utf8");
  if (req.body instanceof Uint8Array) return req.body;
  return null;
}

export function zkagent<const M extends GuardMode = ProofScheme>(options: ExpressGuardOptions<M>): ZkAgentMiddleware<M> {
  const guard = zkagentGuard(options);
  const report = reporter(options.onError);
  const limit = options.limit ?? 1 << 20;
  if (options.origin === undefined)
    warnOnce(
      options.onError,
      "no_origin",
      "zkagent(...) under Node without `origin`: challenges bind the origin built from each request's Host header. " +
        "Set origin (e.g. https://shop.example), or answer only your own host names.",
    );

  const middleware = async (req: ExpressRequest, res: ExpressResponse, next: NextFunction): Promise<void> => {
    // Express 4's body-parser sets req.body = {} on every request it does not parse: that alone is not a read body.
    const consumed = req._body === true || req.readableEnded || (req.body !== undefined && !isEmptyObject(req.body));
    let body: Buffer | Uint8Array;
    if (consumed) {
      const kept = keptBytes(req);
      if (kept === null) {
        report({ reason: "body_already_read", level: "error", message: BODY_ALREADY_READ, cause: new BodyAlreadyReadError(BODY_ALREADY_READ) });
        // The request is not served and not guessed at; the answer names the fix for whoever reads it first (the merchant, testing).
        return reply(res, 400, { error: "Request body already read", reason: "body_already_read", message: BODY_ALREADY_READ });
      }
      body = kept;
    } else {
      try {
        body = await readBody(req, limit);
      } catch (error) {
        if (error instanceof TooLarge) {
          // The rest of the body is not read: the connection is closed after the answer rather than left with unread bytes on it.
          res.setHeader("connection", "close");
          return reply(res, 413, { error: "Request body too large", reason: "body_too_large", message: `at most ${limit} bytes` });
        }
        return next(error);
      }
    }
    if (body.length > limit) return reply(res, 413, { error: "Request body too large", reason: "body_too_large", message: `at most ${limit} bytes` });
    const built = nodeRequest(req, body);
    if (!built.ok) return reply(res, 400, { error: "Invalid request", reason: "invalid_request", message: built.message });
    const result = await guard.verify(built.request);
    if (!result.ok) {
      const headers: Record<string, string> = {};
      result.response.headers.forEach((value, name) => {
        headers[name] = value;
      });
      res.writeHead(result.response.status, headers).end(Buffer.from(await result.response.arrayBuffer()));
      return;
    }
    // A parser in front already left its reading of these same bytes in req.body (JSON, or express.raw()'s Buffer): kept as it is.
    if (!consumed) {
      // A proof's guard parsed this JSON to derive the context; a signature's never reads the body, so it may not parse: a 400, never a throw (Express 4 would leave it unhandled).
      if (body.length > 0 && isJsonType(req.headers["content-type"] ?? null)) {
        try {
          req.body = JSON.parse(Buffer.from(body).toString("utf8"));
        } catch {
          return reply(res, 400, { error: "Invalid request", reason: "invalid_request", message: "the body is not valid JSON" });
        }
      } else req.body = Buffer.from(body);
    }
    // Marks the stream read for a body parser mounted after this middleware: it leaves req.body as it is.
    req._body = true;
    res.locals.zkagent = result.session;
    next();
  };
  return Object.assign(middleware, { session: (res: { locals: Record<string, unknown> }) => zkagentSession<M>(res) });
}
