// I-JSON (RFC 7493) over the raw request text, before anything is bound,
// stored or fingerprinted. RFC 8785 canonicalization — what the proof binds
// the context to — assumes I-JSON; JSON.parse does not enforce it and loses
// what would show the difference (duplicate names: last wins; escapes: a lone
// `\ud800` becomes a string that SQLite stores as U+FFFD; numbers: 2^53 + 1
// silently becomes 2^53, 1e400 becomes Infinity). So a request whose text
// means more than one thing is refused, naming where:
//
//   duplicate_member   an object names a member twice
//   lone_surrogate     a string (value or member name) holds an unpaired UTF-16 surrogate
//   non_finite_number  a number overflows the IEEE double range (1e400)
//   unsafe_number      |value| > 2^53 − 1: beyond it neighbouring integers alias
//   inexact_number     the decimal value written is not the value of the double it
//                      becomes (0.1000000000000000000001, 1e-400): canonical JSON
//                      would bind another number than the one sent
//
// The rule for numbers, precisely: the number is accepted when the shortest
// round-trip decimal of its double (what RFC 8785 writes) has the same
// mathematical value as the text. `20.00`, `2e1` and `20` are one number;
// `-0` is zero.
//
// No npm package does this whole job: `lossless-json` keeps numbers exact and
// handles repeated names (by default it refuses them only when the values
// differ; recent versions take a callback), but it reports positions, not
// paths, and neither checks surrogates nor the number rule above;
// `secure-json-parse` handles only `__proto__`. The scanner is
// iterative (an explicit stack) so a 64 KiB body nested 30 000 deep cannot
// overflow the call stack.

export type IJsonRule = "syntax" | "duplicate_member" | "lone_surrogate" | "non_finite_number" | "unsafe_number" | "inexact_number";

export type IJsonResult =
  | { ok: true; value: unknown }
  | {
      ok: false;
      rule: IJsonRule;
      /** Where: `context.amount`, `items[2]`, `context["a b"]`; "" for the whole text. */
      path: string;
      /** Why, in words a caller can act on. */
      message: string;
    };

class Violation {
  constructor(
    readonly rule: IJsonRule,
    readonly path: string,
    readonly message: string,
  ) {}
}

const MAX_NAME_SHOWN = 40;
const PLAIN_NAME = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** One step of a path: `.name` for plain names, `["…"]` (JSON-escaped, shortened) for the rest. */
export function memberPath(parent: string, name: string): string {
  if (PLAIN_NAME.test(name) && name.length <= MAX_NAME_SHOWN) return parent === "" ? name : `${parent}.${name}`;
  // A lone surrogate stays whole (Array.from keeps it as one element) and JSON.stringify escapes it.
  const chars = Array.from(name);
  const shown = chars.length > MAX_NAME_SHOWN ? `${chars.slice(0, MAX_NAME_SHOWN).join("")}…` : name;
  return `${parent}[${JSON.stringify(shown)}]`;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/** A decimal as sign, significant digits (no leading/trailing zeros) and exponent; zero is { digits: "" }. */
function decimal(text: string): { negative: boolean; digits: string; exponent: number } {
  const match = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text)!;
  const fraction = match[3] ?? "";
  let digits = match[2]! + fraction;
  let exponent = Number(match[4] ?? "0") - fraction.length;
  digits = digits.replace(/^0+/, "");
  const trailing = digits.length - digits.replace(/0+$/, "").length;
  digits = digits.slice(0, digits.length - trailing);
  exponent += trailing;
  return digits === "" ? { negative: false, digits: "", exponent: 0 } : { negative: match[1] === "-", digits, exponent };
}

const sameDecimal = (a: string, b: string): boolean => {
  const x = decimal(a);
  const y = decimal(b);
  return x.negative === y.negative && x.digits === y.digits && x.exponent === y.exponent;
};

const shorten = (text: string) => (text.length > 40 ? `${text.slice(0, 40)}…` : text);

function checkNumber(text: string, path: string): number {
  const value = Number(text);
  if (!Number.isFinite(value))
    throw new Violation("non_finite_number", path, "number is too large for a double (it would become Infinity); send it as a string");
  if (Math.abs(value) > Number.MAX_SAFE_INTEGER) {
    throw new Violation("unsafe_number", path, "number is outside ±(2^53−1), where distinct integers become one; send it as a string");
  }
  // String(value) is the shortest round-trip decimal, which RFC 8785 writes.
  if (!sameDecimal(text, String(value))) {
    throw new Violation("inexact_number", path, `number ${shorten(text)} has no exact double (it would be bound as ${String(value)}); send it as a string`);
  }
  return value;
}

type Frame =
  | { kind: "object"; value: Record<string, unknown>; path: string; names: Set<string>; name: string }
  | { kind: "array"; value: unknown[]; path: string };

/**
 * Parses `text` as I-JSON. For any text JSON.parse accepts, the result is
 * either `ok` with a value equal to JSON.parse's, or a violation naming the
 * rule and the path; for any text it rejects, `syntax`.
 */
export function parseIJson(text: string): IJsonResult {
  let i = 0;
  const n = text.length;
  const syntax = () => new Violation("syntax", "", `not valid JSON at character ${i}`);
  const skipSpace = () => {
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    }
  };
  /** The string token at i, decoded; `path` names it when it is not well-formed (null: the caller checks). */
  const readString = (path: string | null): string => {
    if (text[i] !== '"') throw syntax();
    let j = i + 1;
    for (;;) {
      if (j >= n) throw syntax();
      const c = text.charCodeAt(j);
      if (c === 0x22) break;
      if (c < 0x20) throw syntax();
      j += c === 0x5c ? 2 : 1; // a backslash escapes the next character; \uXXXX's hex digits are neither quote nor backslash
    }
    let value: string;
    try {
      value = JSON.parse(text.slice(i, j + 1)) as string;
    } catch {
      throw syntax();
    }
    i = j + 1;
    if (path !== null && !value.isWellFormed())
      throw new Violation("lone_surrogate", path, "string contains a lone UTF-16 surrogate (not a Unicode character)");
    return value;
  };
  /** Reads `"name":` into the frame, checks the name, and returns the member's path. */
  const readName = (frame: Extract<Frame, { kind: "object" }>): string => {
    skipSpace();
    const name = readString(null);
    // JSON.stringify escapes a lone surrogate (\ud800), so the path shows it.
    const path = memberPath(frame.path, name);
    if (!name.isWellFormed()) throw new Violation("lone_surrogate", path, "member name contains a lone UTF-16 surrogate (not a Unicode character)");
    if (frame.names.has(name)) throw new Violation("duplicate_member", path, "member name appears more than once in its object; send each name once");
    frame.names.add(name);
    frame.name = name;
    skipSpace();
    if (text[i] !== ":") throw syntax();
    i++;
    return path;
  };

  const stack: Frame[] = [];
  let path = "";
  try {
    for (;;) {
      // A value starts at i, at `path`.
      skipSpace();
      let value: unknown;
      const c = text[i];
      if (c === "{") {
        i++;
        skipSpace();
        if (text[i] === "}") {
          i++;
          value = {};
        } else {
          const frame: Frame = { kind: "object", value: {}, path, names: new Set(), name: "" };
          stack.push(frame);
          path = readName(frame);
          continue;
        }
      } else if (c === "[") {
        i++;
        skipSpace();
        if (text[i] === "]") {
          i++;
          value = [];
        } else {
          stack.push({ kind: "array", value: [], path });
          path = `${path}[0]`;
          continue;
        }
      } else if (c === '"') value = readString(path);
      else if (text.startsWith("true", i)) (value = true), (i += 4);
      else if (text.startsWith("false", i)) (value = false), (i += 5);
      else if (text.startsWith("null", i)) (value = null), (i += 4);
      else {
        NUMBER.lastIndex = i;
        const match = NUMBER.exec(text);
        if (!match) throw syntax();
        i += match[0].length;
        value = checkNumber(match[0], path);
      }
      // Place the value in its container; close every container that ends here.
      for (;;) {
        const top = stack.at(-1);
        skipSpace();
        if (!top) {
          if (i !== n) throw syntax();
          return { ok: true, value };
        }
        if (top.kind === "array") {
          top.value.push(value);
          if (text[i] === ",") {
            i++;
            path = `${top.path}[${top.value.length}]`;
            break;
          }
          if (text[i] !== "]") throw syntax();
        } else {
          // defineProperty, as JSON.parse does: "__proto__" stays an own member, the prototype untouched.
          Object.defineProperty(top.value, top.name, { value, enumerable: true, writable: true, configurable: true });
          if (text[i] === ",") {
            i++;
            path = readName(top);
            break;
          }
          if (text[i] !== "}") throw syntax();
        }
        i++;
        value = top.value;
        stack.pop();
      }
    }
  } catch (error) {
    if (error instanceof Violation) return { ok: false, rule: error.rule, path: error.path, message: error.message };
    throw error;
  }
}
