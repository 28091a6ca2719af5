// Reading a JSON request body in the order docs/api.md fixes: content type
// (415), size (413), syntax (400), then I-JSON (400 naming the field, issue
// 11); the fields are validate.ts's. Routes that use it turn off Elysia's own
// parser so that authentication is decided before the body is read.
import { ApiError, BODY_LIMIT_BYTES, invalidField } from "../errors";
import { parseIJson } from "../identity/ijson";

/** The media type (lower case) and the charset parameter, if any (lower case, unquoted). */
function contentType(header: string): { mediaType: string; charset: string | undefined } {
  const [mediaType, ...parameters] = header.split(";");
  let charset: string | undefined;
  for (const parameter of parameters) {
    const at = parameter.indexOf("=");
    if (at < 0 || parameter.slice(0, at).trim().toLowerCase() !== "charset") continue;
    charset = parameter
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1")
      .toLowerCase();
  }
  return { mediaType: mediaType!.trim().toLowerCase(), charset };
}

const isJson = (mediaType: string): boolean => mediaType === "application/json" || (mediaType.startsWith("application/") && mediaType.endsWith("+json"));

/**
 * The body is read as UTF-8 and nothing else (RFC 8259 §8.1): a declared
 * charset other than UTF-8 is refused with 415 naming it, never silently
 * decoded as UTF-8 (issue 11: `charset=utf-16` was).
 */
function checkContentType(header: string | null): void {
  if (!header) throw new ApiError("unsupported_media_type");
  const { mediaType, charset } = contentType(header);
  if (!isJson(mediaType)) throw new ApiError("unsupported_media_type");
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    throw new ApiError("unsupported_media_type", {
      message: `The charset ${JSON.stringify(charset.slice(0, 40))} is not supported: send the body as UTF-8 (charset=utf-8 or none).`,
    });
  }
}

/**
 * The client went away mid-body (disconnect, timeout on its side): not a
 * server error. src/http/errors.ts logs it at debug and answers 499, which
 * nobody receives but the request log and the metrics record.
 */
function clientClosed(): ApiError {
  return new ApiError("client_closed_request");
}

/**
 * The body's bytes, or 413 as soon as more than `limit` arrive: a chunked body
 * (no Content-Length) is never buffered past the limit.
 */
async function readAtMost(request: Request, limit: number, tooLarge: () => ApiError): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      // Only the connection feeds this stream: an error here is the client's.
      throw clientClosed();
    }
    const { done, value } = chunk;
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** `limit`: BODY_LIMIT_BYTES for every route but those that take more (a group's batch of 10,000 members). */
export async function readJsonObject(request: Request, limit = BODY_LIMIT_BYTES): Promise<Record<string, unknown>> {
  return jsonObjectOf(await readJsonBytes(request, limit));
}

/** A JSON body's bytes, its content type (415) and size (413) checked: what jsonObjectOf then parses, here or on another thread. */
export async function readJsonBytes(request: Request, limit = BODY_LIMIT_BYTES): Promise<Uint8Array> {
  checkContentType(request.headers.get("content-type"));
  const declared = Number(request.headers.get("content-length") ?? "0");
  const tooLarge = () =>
    new ApiError("payload_too_large", limit === BODY_LIMIT_BYTES ? {} : { message: `Request bodies are limited to ${limit} bytes on this route.` });
  if (declared > limit) throw tooLarge();
  return readAtMost(request, limit, tooLarge);
}

/** A body's bytes as a JSON object: UTF-8 without byte order mark, JSON, an object, I-JSON (each a 400 naming what is wrong). */
export function jsonObjectOf(bytes: Uint8Array): Record<string, unknown> {
  // RFC 8259 §8.1: no byte order mark. TextDecoder would drop it silently (the docs said 400; issue 11).
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw new ApiError("malformed_json", { message: "The body starts with a UTF-8 byte order mark; send JSON without one." });
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ApiError("malformed_json", { message: "The body is not valid UTF-8." });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError("malformed_json", { message: "The body is not valid JSON." });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ApiError("malformed_json", { message: "The body must be a JSON object." });
  }
  // The whole body is I-JSON before anything is bound, stored or fingerprinted
  // (docs/protocol.md): duplicates, lone surrogates, numbers that would not be
  // bound as sent. JSON.parse accepted the text, so the scanner's value equals
  // its; the scanner's is returned, the one it checked.
  const checked = parseIJson(text);
  if (!checked.ok) throw invalidField(checked.path || "body", checked.message);
  return checked.value as Record<string, unknown>;
}
