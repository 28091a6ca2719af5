// The ZKAgent HTTP authentication scheme on the wire (docs/http-auth.md):
// parsing and writing `WWW-Authenticate: ZKAgent …` and `Authorization:
// ZKAgent …` in the grammar of RFC 9110 §11 (auth-scheme, then a
// comma-separated list of auth-param = token BWS "=" BWS ( token /
// quoted-string )). Pure functions: the merchant middleware and the agent's
// fetch share them, so both sides read one grammar.

export const SCHEME = "ZKAgent";

/** The parameters of one challenge or one set of credentials, names lower-cased (RFC 9110 §11.2: they are case-insensitive). */
export type AuthParams = Record<string, string>;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * One parameter: `name="value"` (a quoted-string, `"` and `\` escaped,
 * RFC 9110 §5.6.4) when the value is printable ASCII; else the RFC 8187
 * extended form `name*=UTF-8''<percent-encoded>`, since header values carry
 * no control characters and no reliable charset beyond ASCII.
 */
function param(name: string, value: string): string {
  if (!TOKEN.test(name)) throw new TypeError(`auth-param name "${name}" is not a token`);
  if (/^[\x20-\x7e]*$/.test(value)) return `${name}="${value.replace(/["\\]/g, "\\$&")}"`;
  // encodeURIComponent leaves ' ( ) * unescaped; RFC 8187's attr-char does not allow them.
  const encoded = encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${name}*=UTF-8''${encoded}`;
}

/** `ZKAgent name="value", …` (a challenge or credentials). */
export function formatAuth(params: AuthParams): string {
  const list = Object.entries(params).map(([name, value]) => param(name, value));
  return list.length === 0 ? SCHEME : `${SCHEME} ${list.join(", ")}`;
}

/**
 * The ZKAgent challenges or credentials in a header value that may hold
 * several (`Basic realm="x", ZKAgent nonce="…"`), each as its parameters; an
 * empty array when there is none, null when the value does not parse.
 */
export function parseAuth(header: string): AuthParams[] | null {
  const found: AuthParams[] = [];
  let i = 0;
  const n = header.length;
  const skipSpace = () => {
    while (i < n && (header[i] === " " || header[i] === "\t")) i++;
  };
  const token = (): string => {
    const start = i;
    while (i < n && TOKEN.test(header[i]!)) i++;
    return header.slice(start, i);
  };
  let current: AuthParams | null = null;
  let ours = false;
  while (i < n) {
    skipSpace();
    if (header[i] === ",") {
      i++;
      continue;
    }
    if (i >= n) break;
    const name = token();
    if (name === "") return null;
    skipSpace();
    if (header[i] === "=" && current !== null && header[i + 1] !== "=") {
      // An auth-param of the current challenge.
      i++;
      skipSpace();
      let value: string;
      if (header[i] === '"') {
        i++;
        value = "";
        while (i < n && header[i] !== '"') {
          if (header[i] === "\\") i++;
          if (i >= n) return null;
          value += header[i++];
        }
        if (header[i] !== '"') return null;
        i++;
      } else {
        value = token();
        if (value === "") return null;
      }
      let key = name.toLowerCase();
      if (key.endsWith("*")) {
        // RFC 8187 ext-value: UTF-8'[language]'percent-encoded.
        const ext = /^UTF-8'[^']*'(.*)$/i.exec(value);
        if (!ext) return null;
        try {
          value = decodeURIComponent(ext[1]!);
        } catch {
          return null;
        }
        key = key.slice(0, -1);
      }
      if (ours) {
        // A parameter given twice (also once plain, once extended) is ambiguous: refused (RFC 9110 §11.2).
        if (Object.hasOwn(current, key)) return null;
        current[key] = value;
      }
      skipSpace();
      if (i < n && header[i] !== ",") return null;
      continue;
    }
    // A new challenge: the scheme name, then a token68 or params (or nothing).
    ours = name.toLowerCase() === SCHEME.toLowerCase();
    current = {};
    if (ours) found.push(current);
    if (i < n && header[i] !== ",") {
      // A token68 (other schemes' form, e.g. Bearer) when it fills the rest
      // of this challenge; else the first auth-param follows.
      const token68 = /^[A-Za-z0-9._~+/-]+=*/.exec(header.slice(i));
      if (token68) {
        let end = i + token68[0].length;
        while (end < n && (header[end] === " " || header[end] === "\t")) end++;
        if (end >= n || header[end] === ",") {
          if (ours) return null; // ZKAgent never uses token68
          i = end;
        }
      }
    }
  }
  return found;
}

/** base64url without padding (RFC 4648 §5) of UTF-8 text: how the context and the proof travel in a parameter. */
export const toBase64url = (text: string): string => Buffer.from(text, "utf8").toString("base64url");

/** The text, or null when `value` is not canonical base64url of valid UTF-8. */
export function fromBase64url(value: string): string | null {
  if (!/^[A-Za-z0-9_-]*$/.test(value)) return null;
  const bytes = Buffer.from(value, "base64url");
  if (bytes.toString("base64url") !== value) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
