// The guard as Express middleware (Express 4 and 5): a refused request gets
// the guard's answer; a verified one reaches the handler with the session in
// res.locals.zkagent and the body it was verified with in req.body (the
// parsed JSON, or the raw bytes as a Buffer for another media type).
//
//   app.post("/orders", zkagent({ url, apiKey, action: "purchase", context: bodyFields(["amount", "currency"]) }),
//     (req, res) => { const { agent_id, context } = zkagentSession(res); … });
//
// The proof binds the body's declared fields as the agent sent them, so the
// middleware reads the body itself, byte for byte: mount it with no body
// parser in front of it (express.json() before it would have consumed the
// stream and left only a re-serialised object, which is not what was proved).
// A request that reaches it with its body already consumed is not guessed at:
// it is passed to next() as an Error naming the problem (Express answers 500
// and logs it), so the mistake shows on the first request in development.
// Only the Node types are named here, so a project needs no @types/express
// to use it; the handler fits app.use / app.post as any middleware does.
import type { IncomingMessage, ServerResponse } from "node:http";
import { isJsonType } from "../../http-auth/statement";
import { type GuardOptions, type VerifiedSession, zkagentGuard } from "../index";

export type { GuardOptions, VerifiedSession } from "../index";

/** The parts of Express's request the middleware reads and writes. */
export type ExpressRequest = IncomingMessage & {
  body?: unknown;
  originalUrl?: string;
  protocol?: string;
  /** Set by body-parser once it has read the stream. */
  _body?: boolean;
};
/** The parts of Express's response the middleware writes: res.locals.zkagent holds the session. */
export type ExpressResponse = ServerResponse & { locals: Record<string, unknown> };
export type NextFunction = (error?: unknown) => void;

/** What res.locals holds after the middleware. */
export interface ZkAgentLocals {
  zkagent: VerifiedSession;
}

/**
 * The verified session of a request the middleware let through
 * (res.locals.zkagent, typed); throws in a handler the middleware is not in
 * front of, rather than letting it serve an unverified request.
 */
export function zkagentSession(res: { locals: Record<string, unknown> }): VerifiedSession {
  const session = res.locals.zkagent;
  if (typeof session !== "object" || session === null) throw new Error("zkagent: no verified session here: mount zkagent(...) in front of this handler");
  return session as VerifiedSession;
}

export interface ExpressGuardOptions extends GuardOptions {
  /** The most body bytes read; a longer body is answered 413. Default 1 MiB. */
  limit?: number;
}

/** A body parser (or anything else) read the request before the middleware: what it would bind is no longer there. */
export class BodyAlreadyReadError extends Error {
  override readonly name = "BodyAlreadyReadError";
}

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

/** The Fetch API Request the guard checks, built from the Node request and the bytes read. */
function fetchRequest(req: ExpressRequest, body: Buffer): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const protocol = req.protocol ?? ((req.socket as { encrypted?: boolean }).encrypted ? "https" : "http");
  const url = new URL(req.originalUrl ?? req.url ?? "/", `${protocol}://${req.headers.host ?? "localhost"}`);
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD" && body.length > 0;
  return new Request(url, { method, headers, body: hasBody ? new Uint8Array(body) : undefined });
}

export function zkagent(options: ExpressGuardOptions): (req: ExpressRequest, res: ExpressResponse, next: NextFunction) => Promise<void> {
  const guard = zkagentGuard(options);
  const limit = options.limit ?? 1 << 20;
  return async (req, res, next) => {
    if (req._body === true || req.body !== undefined || req.readableEnded) {
      next(
        new BodyAlreadyReadError(
          "zkagent: the request body was read before the zkagent middleware (a body parser such as express.json() is mounted in front of it). " +
            "The proof binds the body as the agent sent it: mount zkagent(...) before any body parser, or on the route itself with no parser; " +
            "it leaves the parsed JSON in req.body.",
        ),
      );
      return;
    }
    let body: Buffer;
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
    const result = await guard.verify(fetchRequest(req, body));
    if (!result.ok) {
      const headers: Record<string, string> = {};
      result.response.headers.forEach((value, name) => {
        headers[name] = value;
      });
      res.writeHead(result.response.status, headers).end(Buffer.from(await result.response.arrayBuffer()));
      return;
    }
    // A proof's guard parsed this JSON to derive the context; a signature's never reads the body, so it may not parse: a 400, never a throw (Express 4 would leave it unhandled).
    if (body.length > 0 && isJsonType(req.headers["content-type"] ?? null)) {
      try {
        req.body = JSON.parse(body.toString("utf8"));
      } catch {
        return reply(res, 400, { error: "Invalid request", reason: "invalid_request", message: "the body is not valid JSON" });
      }
    } else req.body = body;
    // Marks the stream read for a body parser mounted after this middleware: it leaves req.body as it is.
    req._body = true;
    res.locals.zkagent = result.session;
    next();
  };
}
