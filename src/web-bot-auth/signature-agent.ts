// The Signature-Agent field: where the operator's key directory is, so a
// verifier knows which directory holds the key a signature names. Two forms
// are in use, and a verifier reads both:
//
//   Signature-Agent: sig1="https://operator.example"   the working group's draft -01: a
//                                                      dictionary with one member per
//                                                      signature label, covered as
//                                                      "signature-agent";key="sig1" (what
//                                                      zkagent's agents send)
//   Signature-Agent: "https://operator.example"        the legacy form (an sf-string, what
//                                                      web-bot-auth 0.1 writes by default),
//                                                      covered as "signature-agent"
//
// Which form applies is what the signature covers: the component with a `key`
// parameter names the dictionary member; without one the whole field is
// covered, and it is read as the legacy string, or else as a dictionary whose
// member named by the signature's label is the one (never another member: a
// signature is attributed only to the member it covers).
//
// The operator is identified by the directory URL the value resolves to
// (draft -01): an origin alone (no path, or "/") stands for its well-known
// directory, a URL with a path is that directory itself; the query and the
// fragment are dropped and the URL normalised as the WHATWG URL parser does.
// Trust lists are resolved the same way, so "https://op.example" and
// "https://op.example/.well-known/http-message-signatures-directory" are one
// operator.
import { HTTP_MESSAGE_SIGNATURES_DIRECTORY } from "web-bot-auth";
import { isInnerList, parseDictionary, parseItem } from "structured-headers";

export const SIGNATURE_AGENT = "signature-agent";

/** The directory URL an operator's URL or origin stands for: http(s) only, query and fragment dropped, an empty path meaning the well-known directory; null when it is none. */
export function directoryUrl(value: string): string | null {
  if (!URL.canParse(value)) return null;
  const url = new URL(value);
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (url.username !== "" || url.password !== "") return null;
  url.search = "";
  url.hash = "";
  if (url.pathname === "" || url.pathname === "/") url.pathname = HTTP_MESSAGE_SIGNATURES_DIRECTORY;
  return url.href;
}

/** The Signature-Agent value a signature covers, or why none can be read. */
export type SignatureAgentValue = { url: string } | { problem: string };

/**
 * The directory URL the Signature-Agent field names for the signature
 * labelled `label`, covered with component parameter `key` (the dictionary
 * member) or without (the whole field).
 */
export function signatureAgentUrl(field: string, label: string, key?: string): SignatureAgentValue {
  let value: unknown;
  if (key !== undefined) {
    let dictionary: ReturnType<typeof parseDictionary>;
    try {
      dictionary = parseDictionary(field);
    } catch {
      return { problem: "Signature-Agent is not a structured-field dictionary" };
    }
    const member = dictionary.get(key);
    if (member === undefined) return { problem: `Signature-Agent has no member ${key}, the one the signature covers` };
    if (isInnerList(member)) return { problem: `Signature-Agent's member ${key} is not a string` };
    value = member[0];
  } else {
    try {
      value = parseItem(field)[0];
    } catch {
      // Not the legacy string: a dictionary covered whole, whose member for this label is the signature's.
      let dictionary: ReturnType<typeof parseDictionary>;
      try {
        dictionary = parseDictionary(field);
      } catch {
        return { problem: "Signature-Agent is neither a string nor a structured-field dictionary" };
      }
      const member = dictionary.get(label);
      if (member === undefined || isInnerList(member))
        return { problem: `Signature-Agent has no member named ${label} (the signature's label), so no member can be attributed to it` };
      value = member[0];
    }
  }
  if (typeof value !== "string") return { problem: "Signature-Agent's value is not a string" };
  const url = directoryUrl(value);
  return url === null ? { problem: "Signature-Agent does not name an http(s) URL" } : { url };
}

/** The Signature-Agent field naming `origin` for the signature labelled `label`, in the dictionary form of draft -01. */
export const signatureAgentField = (origin: string, label = "sig1"): string => `${label}=${JSON.stringify(origin)}`;
