// What the verifier reads from Signature-Input before it trusts anything:
// which labels there are and their tags, so that it verifies the signature
// meant for it (a request may carry other signatures, e.g. a CDN's), and an
// Ed25519 verifier for http-message-sig from a directory's key.
import { verify as ed25519Verify } from "node:crypto";
import type { Verifier } from "http-message-sig";
import { isInnerList, parseDictionary } from "structured-headers";
import { publicKeyObject } from "../identity/signature";

export interface SignatureInput {
  label: string;
  /** Component names and their parameters, as listed. */
  components: { name: string; params: Map<string, unknown> }[];
  params: Map<string, unknown>;
}

/** The members of a Signature-Input field; null when it does not parse as a dictionary of inner lists. */
export function readSignatureInputs(field: string): SignatureInput[] | null {
  let dictionary: ReturnType<typeof parseDictionary>;
  try {
    dictionary = parseDictionary(field);
  } catch {
    return null;
  }
  const inputs: SignatureInput[] = [];
  for (const [label, member] of dictionary) {
    if (!isInnerList(member)) return null;
    const components = member[0].map(([name, params]) => ({ name: String(name), params: params as Map<string, unknown> }));
    inputs.push({ label, components, params: member[1] as Map<string, unknown> });
  }
  return inputs;
}

/** An http-message-sig Verifier for an Ed25519 public key (base64url x), on node:crypto. */
export function ed25519Verifier(x: string): Verifier {
  const key = publicKeyObject(x);
  if (key === null) throw new TypeError("not an Ed25519 key");
  return { algorithm: "ed25519", verify: (data, signature) => signature.length === 64 && ed25519Verify(null, data, key, signature) };
}
