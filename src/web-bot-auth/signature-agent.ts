// The Signature-Agent header: which operator's key directory holds the key a
// signature names. Two forms are in use, and a verifier reads both:
//
//   Signature-Agent: "https://operator.example"        what web-bot-auth 0.1 writes (an sf-string),
//                                                      covered as "signature-agent"
//   Signature-Agent: sig1="https://operator.example"   the IETF draft's (a dictionary member per
//                                                      signature label), covered as "signature-agent";key="sig1"
//
// Which form applies is what the signature covers: the component with a `key`
// parameter names the dictionary member, without one the whole field is the
// string. Either way the value must be an https (or http) origin; a path is
// tolerated (some operators write their URL) but only its origin counts.
import { isInnerList, parseDictionary, parseItem } from "structured-headers";
import { originOf } from "../http-auth/statement";

export const SIGNATURE_AGENT = "signature-agent";

/** The origin the Signature-Agent field names for the member `key` (the dictionary form) or as a whole (the string form); null when it names none. */
export function signatureAgentOrigin(field: string, key?: string): string | null {
  let value: unknown;
  try {
    if (key === undefined) {
      value = parseItem(field)[0];
    } else {
      const member = parseDictionary(field).get(key);
      if (member === undefined || isInnerList(member)) return null;
      value = member[0];
    }
  } catch {
    return null;
  }
  return typeof value === "string" ? originOf(value) : null;
}

/** The Signature-Agent field for an origin, in the form web-bot-auth 0.1 writes (and verifies): a quoted string. */
export const signatureAgentField = (origin: string): string => JSON.stringify(origin);
