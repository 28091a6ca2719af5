// The scalar field of BN254: every Groth16 public input is an element of F_r.
// The verifier's encoding owns the constant and the canonical parser; the
// identity layer uses them rather than stating them again.
import { R, parsePublicInput } from "../verifier/encoding";

export const FIELD_ORDER_R = R;

/** Parses a canonical decimal field element (no sign, no leading zeros, below r), or null. */
export function parseFieldElement(text: string): bigint | null {
  return typeof text === "string" ? (parsePublicInput(text) ?? null) : null;
}

export function bytesToBigInt(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}
