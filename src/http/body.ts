// Reading a JSON request body in the order docs/api.md fixes: content type
// (415), size (413), syntax (400); the fields are validate.ts's. Routes that
// use it turn off Elysia's own parser so that authentication is decided
// before the body is read.
import { ApiError, BODY_LIMIT_BYTES } from "../errors";

const isJson = (contentType: string | null): boolean => {
  if (!contentType) return false;
  const mediaType = contentType.split(";", 1)[0]!.trim().toLowerCase();
  return mediaType === "application/json" || (mediaType.startsWith("application/") && mediaType.endsWith("+json"));
};

/**
 * The body's bytes, or 413 as soon as more than `limit` arrive: a chunked body
 * (no Content-Length) is never buffered past the limit.
 */
async function readAtMost(request: Request, limit: number): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new ApiError("payload_too_large");
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

export async function readJsonObject(request: Request): Promise<Record<string, unknown>> {
  if (!isJson(request.headers.get("content-type"))) throw new ApiError("unsupported_media_type");
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > BODY_LIMIT_BYTES) throw new ApiError("payload_too_large");
  const bytes = await readAtMost(request, BODY_LIMIT_BYTES);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
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
  return value as Record<string, unknown>;
}
