// The scalar field of BN254: every Groth16 public input is an element of F_r.
export const FIELD_ORDER_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

const DECIMAL = /^(0|[1-9][0-9]{0,76})$/;

/** Parses a canonical decimal field element (no sign, no leading zeros, below r), or null. */
export function parseFieldElement(text: string): bigint | null {
  if (typeof text !== "string" || !DECIMAL.test(text)) return null;
  const value = BigInt(text);
  return value < FIELD_ORDER_R ? value : null;
}

export function bytesToBigInt(bytes: Uint8Array): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}
