// The values a transcript holds, for the unlinkability tests: every string
// and number token of 8 characters or more, wherever it hides. JSON is read
// by value (field names are the protocol's vocabulary, not data); strings are
// split at separators (headers such as `ZKAgent budget="…", proof="…"`, URLs);
// base64url that decodes to JSON (a proof in a header, a receipt's segments)
// and JSON inside a string are opened and read the same way, so a value
// cannot pass unseen by being encoded.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const MIN_TOKEN = 8;

const COARSE = /[\s"',;=(){}[\]<>\\]+/;
const FINE = /[/:?&#.@]+/;

function decodedJson(piece: string): unknown {
  if (piece.length < 16 || !/^[A-Za-z0-9_-]+={0,2}$/.test(piece)) return undefined;
  try {
    const text = Buffer.from(piece, "base64url").toString("utf8");
    if (!/^\s*[[{]/.test(text)) return undefined;
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** `name="value"` and `?name=value`: the parameter's name is the protocol's word, its value the data. */
const PARAMETER_NAME = /(^|[\s,;?&])[A-Za-z_][\w-]*=/g;

function addString(text: string, into: Set<string>): void {
  if (/^\s*[[{]/.test(text)) {
    try {
      addValue(JSON.parse(text), into);
      return;
    } catch {}
  }
  if (text.length >= MIN_TOKEN) into.add(text);
  for (const coarse of text.replace(PARAMETER_NAME, "$1 ").split(COARSE)) {
    if (coarse.length < MIN_TOKEN) continue;
    into.add(coarse);
    // A compact JWS: header and payload opened, the signature kept as a token.
    const segments = coarse.split(".");
    for (const segment of segments.length === 3 ? segments : [coarse]) {
      const json = decodedJson(segment);
      if (json !== undefined) addValue(json, into);
      else if (segment.length >= MIN_TOKEN) into.add(segment);
    }
    for (const fine of coarse.split(FINE)) if (fine.length >= MIN_TOKEN) into.add(fine);
  }
}

/** Adds every token of a JSON value to `into`. */
export function addValue(value: unknown, into: Set<string>): Set<string> {
  if (typeof value === "string") addString(value, into);
  else if (typeof value === "number" || typeof value === "bigint") {
    const text = String(value);
    if (text.length >= MIN_TOKEN) into.add(text);
  } else if (Array.isArray(value)) for (const item of value) addValue(item, into);
  else if (typeof value === "object" && value !== null) for (const member of Object.values(value)) addValue(member, into);
  return into;
}

/** Every token of every JSON file in a folder, with the files each comes from. */
export function tokensOfFolder(dir: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith(".json")) continue;
    for (const token of addValue(JSON.parse(readFileSync(join(dir, name), "utf8")), new Set())) {
      const files = found.get(token) ?? [];
      files.push(name);
      found.set(token, files);
    }
  }
  return found;
}

const IMF_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const CLOCK_TIME = /^\d{2}:\d{2}:\d{2}$/;

/**
 * A reading of the clock: an ISO 8601 date or time, an HTTP date, a time of day, or an
 * integer that is a Unix time in s, ms or minutes within `window` (ms).
 * Every party reads the clock; the time of a purchase is what each merchant
 * sees anyway (docs/privacy.md says what timing tells colluding merchants).
 */
export function isClockReading(token: string, window: { from: number; to: number }): boolean {
  if (ISO_TIME.test(token) || CLOCK_TIME.test(token) || IMF_DATE.test(token)) return true;
  if (!/^\d+$/.test(token)) return false;
  const n = Number(token);
  return [n * 1000, n, n * 60_000].some((ms) => ms >= window.from && ms <= window.to);
}

/**
 * A word of the protocol rather than a value: letters only, or letters
 * joined by `_` or `-` (field names, reasons, header words, `keep-alive`).
 * Every value zkagent derives from a member, a key or a session is a decimal
 * field element, hex, base64url or an id with digits, never such a word.
 */
export const isWord = (token: string): boolean => /^[A-Za-z]+([_-][A-Za-z]+)*$/.test(token);

const PIECES = /[\s"',;=(){}[\]<>\\/:?&#.@+]+/;

/**
 * Whether a token two parties share is explained without linking them: a
 * public value, a word, a clock reading, a term of `vocabulary`, or text made
 * only of such pieces and pieces under MIN_TOKEN characters (a header such
 * as `ZKAgent realm="shop", budget="<public group>"`). Any longer piece of a
 * token is a token of its own, scanned on its own: a value inside text is
 * never explained by the text around it. base64url of JSON is explained
 * when all it holds is (a receipt's protected header: alg, the JWKS's kid, typ).
 */
export function explained(
  token: string,
  allowed: { isPublic: (token: string) => boolean; vocabulary: ReadonlySet<string>; window: { from: number; to: number } },
): boolean {
  if (allowed.isPublic(token) || allowed.vocabulary.has(token) || isWord(token) || isClockReading(token, allowed.window)) return true;
  // base64url of JSON (a JWS's protected header): explained when everything it holds is.
  const json = decodedJson(token);
  if (json !== undefined) return [...addValue(json, new Set())].every((inner) => explained(inner, allowed));
  const pieces = token.split(PIECES).filter((piece) => piece !== "");
  if (pieces.length === 1 && pieces[0] === token) return false;
  return pieces.every((piece) => piece.length < MIN_TOKEN || explained(piece, allowed));
}
