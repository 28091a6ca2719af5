// The rules for everything the project's clients fetch from a party they do
// not control (the agent from a zkagent service, the merchant's guard from an
// operator's key directory): which URLs are read at all, and bodies bounded
// while they stream, so a hostile server cannot make the reader buffer more
// than the limit before it is refused (docs/trust.md, "What the agent pins").
import { createHash } from "node:crypto";

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Whether the agent reads from `url` at all: https, or http to a loopback
 * host (localhost, 127.0.0.0/8, ::1) only when its caller asked for it
 * (allowInsecureLoopback: a local service, tests). One rule for circuits and
 * group members alike.
 */
export const acceptedSource = (url: URL, allowInsecureLoopback = false): boolean =>
  url.protocol === "https:" || (url.protocol === "http:" && allowInsecureLoopback && LOOPBACK.test(url.hostname));

/** The body and its SHA-256 (hex), hashed as the bytes arrived; null as soon as it passes `limit` bytes (the stream is cancelled). */
export async function readBounded(response: Response, limit: number): Promise<{ bytes: Uint8Array; sha256: string } | null> {
  const hash = createHash("sha256");
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body?.getReader();
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel();
        return null;
      }
      hash.update(value);
      chunks.push(value);
    }
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { bytes, sha256: hash.digest("hex") };
}
