// Content-Digest (RFC 9530): a signature says who sent a request, and covers
// the body only through this field. A covered Content-Digest that is not the
// digest of the body that arrived makes the coverage decorative, so the
// verifier recomputes it: sha-256 and sha-512 (the algorithms RFC 9530
// registers as active); members of other algorithms are ignored, and a field
// with neither is refused (nothing the verifier can check).
import { createHash } from "node:crypto";
import { parseDictionary } from "structured-headers";

export const CONTENT_DIGEST = "content-digest";
const ALGORITHMS: Record<string, string> = { "sha-256": "sha256", "sha-512": "sha512" };

/** The Content-Digest field for `body`, sha-256 (what an agent sends). */
export const contentDigestField = (body: Uint8Array): string => `sha-256=:${createHash("sha256").update(body).digest("base64")}:`;

/** Why `field` is not the digest of `body` (null: it is, by every sha-256 and sha-512 member it holds). */
export function contentDigestProblem(field: string, body: Uint8Array): { malformed: boolean; message: string } | null {
  let dictionary: ReturnType<typeof parseDictionary>;
  try {
    dictionary = parseDictionary(field);
  } catch {
    return { malformed: true, message: "Content-Digest is not a structured-field dictionary (RFC 9530)" };
  }
  let checked = 0;
  for (const [algorithm, member] of dictionary) {
    const hash = ALGORITHMS[algorithm];
    if (hash === undefined) continue;
    const value = member[0];
    if (!(value instanceof ArrayBuffer)) return { malformed: true, message: `Content-Digest's ${algorithm} is not a byte sequence` };
    const expected = createHash(hash).update(body).digest();
    if (!expected.equals(Buffer.from(value))) return { malformed: false, message: `Content-Digest's ${algorithm} is not the digest of the body that arrived` };
    checked++;
  }
  return checked === 0 ? { malformed: true, message: "Content-Digest holds no sha-256 or sha-512 digest" } : null;
}
