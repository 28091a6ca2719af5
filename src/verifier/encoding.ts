// snarkjs JSON ↔ bytes for the wasm verifier.
//
// THE Fp2 ORDER DECISION LIVES HERE. snarkjs writes an Fp2 element
// c0 + c1·u as [c0, c1] (real part first); the wasm ABI and the compact
// proof form use the EIP-197 order c1 ‖ c0 (imaginary part first). Every
// conversion between the two goes through fp2ToBytes / fp2FromBytes below.
//
// Compact proof: base64url without padding of exactly 256 bytes,
//   A.x ‖ A.y ‖ B.x.c1 ‖ B.x.c0 ‖ B.y.c1 ‖ B.y.c0 ‖ C.x ‖ C.y,
// 32-byte big-endian each.
//
// Parsing is strict and total: decimal strings only ("0" or no leading zero,
// at most 78 digits, no sign, no whitespace), projective z = 1 (or the
// snarkjs encoding of infinity with z = 0, reported as an invalid curve
// point), exact array lengths, no unknown keys. Nothing here throws on
// request input; values ≥ p that still fit 32 bytes are passed on and
// rejected by the wasm verifier's canonical check (one place decides).

import type { SnarkjsProof, VerifyFailure } from "./types.ts";

// Byte layouts: the ABI table shared with assembly/ (layout.ts, generated).
import { FP_BYTES as FIELD_BYTES, G1_BYTES, G2_BYTES, PROOF_BYTES, PROOF_A, PROOF_B, PROOF_C } from "./layout.ts";
export { FIELD_BYTES, G1_BYTES, G2_BYTES, PROOF_BYTES, PROOF_A, PROOF_B, PROOF_C };

const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;
const TWO_256 = 1n << 256n;
const COMPACT_LENGTH = Math.ceil((PROOF_BYTES * 4) / 3); // 342 characters, no padding
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Parses a canonical decimal string to a bigint below 2^256, or undefined. */
export function parseDecimal(s: unknown): bigint | undefined {
  if (typeof s !== "string" || !DECIMAL.test(s)) return undefined;
  const v = BigInt(s);
  return v < TWO_256 ? v : undefined;
}

/** Big-endian 32-byte encoding of 0 ≤ x < 2^256. */
export function toBytes32(x: bigint, out: Uint8Array = new Uint8Array(FIELD_BYTES), offset = 0): Uint8Array {
  for (let i = FIELD_BYTES - 1; i >= 0; i--) {
    out[offset + i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
}
export function fromBytes32(b: Uint8Array, offset = 0): bigint {
  let x = 0n;
  for (let i = 0; i < FIELD_BYTES; i++) x = (x << 8n) | BigInt(b[offset + i]!);
  return x;
}

/** Writes the Fp2 [c0, c1] (snarkjs order) in the wire order c1 ‖ c0. */
export function fp2ToBytes(c0: bigint, c1: bigint, out: Uint8Array, offset: number): void {
  toBytes32(c1, out, offset);
  toBytes32(c0, out, offset + FIELD_BYTES);
}
/** Reads a wire-order Fp2 (c1 ‖ c0) back into the snarkjs order [c0, c1]. */
export function fp2FromBytes(b: Uint8Array, offset: number): [bigint, bigint] {
  return [fromBytes32(b, offset + FIELD_BYTES), fromBytes32(b, offset)];
}

export type ParsedProof = { ok: true; bytes: Uint8Array } | { ok: false; reason: VerifyFailure };

const FORMAT: ParsedProof = { ok: false, reason: "invalid_proof_format" };
const INFINITY: ParsedProof = { ok: false, reason: "invalid_curve_point" };
const PROOF_KEYS = new Set(["pi_a", "pi_b", "pi_c", "protocol", "curve"]);

const isArray = (v: unknown, n: number): v is unknown[] => Array.isArray(v) && v.length === n;

/** G1 [x, y, z] with z = "1": the affine pair, "infinity" for z = "0", or undefined. */
function parseG1(v: unknown): [bigint, bigint] | "infinity" | undefined {
  if (!isArray(v, 3)) return undefined;
  const x = parseDecimal(v[0]);
  const y = parseDecimal(v[1]);
  if (x === undefined || y === undefined) return undefined;
  if (v[2] === "1") return [x, y];
  if (v[2] === "0") return "infinity";
  return undefined;
}

/** G2 [[x0, x1], [y0, y1], [z0, z1]] with z = ["1", "0"] (snarkjs order). */
function parseG2(v: unknown): [bigint, bigint, bigint, bigint] | "infinity" | undefined {
  if (!isArray(v, 3) || !v.every((c) => isArray(c, 2))) return undefined;
  const [xs, ys, zs] = v as unknown[][];
  const coords = [xs![0], xs![1], ys![0], ys![1]].map(parseDecimal);
  if (coords.some((c) => c === undefined)) return undefined;
  if (zs![0] === "1" && zs![1] === "0") return coords as [bigint, bigint, bigint, bigint];
  if (zs![0] === "0" && zs![1] === "0") return "infinity";
  return undefined;
}

function parseProofObject(o: unknown): ParsedProof {
  if (typeof o !== "object" || o === null || Array.isArray(o)) return FORMAT;
  const rec = o as Record<string, unknown>;
  for (const k of Object.keys(rec)) if (!PROOF_KEYS.has(k)) return FORMAT;
  if ("protocol" in rec && rec.protocol !== "groth16") return FORMAT;
  if ("curve" in rec && rec.curve !== "bn128") return FORMAT;
  const a = parseG1(rec.pi_a);
  const b = parseG2(rec.pi_b);
  const c = parseG1(rec.pi_c);
  if (a === undefined || b === undefined || c === undefined) return FORMAT;
  if (a === "infinity" || b === "infinity" || c === "infinity") return INFINITY;
  const bytes = new Uint8Array(PROOF_BYTES);
  toBytes32(a[0], bytes, PROOF_A);
  toBytes32(a[1], bytes, PROOF_A + FIELD_BYTES);
  fp2ToBytes(b[0], b[1], bytes, PROOF_B); // x = b[0] + b[1]·u
  fp2ToBytes(b[2], b[3], bytes, PROOF_B + 2 * FIELD_BYTES); // y
  toBytes32(c[0], bytes, PROOF_C);
  toBytes32(c[1], bytes, PROOF_C + FIELD_BYTES);
  return { ok: true, bytes };
}

function base64urlDecode(s: string): Uint8Array | undefined {
  if (s.length !== COMPACT_LENGTH || !BASE64URL.test(s)) return undefined;
  const bytes = Uint8Array.from(Buffer.from(s, "base64url"));
  if (bytes.length !== PROOF_BYTES) return undefined;
  // Reject non-canonical encodings (non-zero unused bits in the last character).
  if (base64urlEncode(bytes) !== s) return undefined;
  return bytes;
}
function base64urlEncode(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64url");
}

/**
 * Parses any accepted proof form: a snarkjs proof object, its JSON text, or
 * the compact base64url form. Never throws.
 */
export function parseProof(input: unknown): ParsedProof {
  try {
    if (typeof input === "string") {
      if (input.trimStart().startsWith("{")) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(input);
        } catch {
          return FORMAT;
        }
        return parseProofObject(parsed);
      }
      const bytes = base64urlDecode(input);
      return bytes ? { ok: true, bytes } : FORMAT;
    }
    return parseProofObject(input);
  } catch {
    return FORMAT; // e.g. hostile getters or proxies
  }
}

/** The compact form of a proof (any accepted form). Throws on input that is not a proof. */
export function toCompactProof(proof: SnarkjsProof | string): string {
  const p = parseProof(proof);
  if (!p.ok) throw new Error(`not a Groth16 proof: ${p.reason}`);
  return base64urlEncode(p.bytes);
}

/** The snarkjs JSON form of a compact (or any accepted) proof. Throws on invalid input. */
export function toSnarkjsProof(proof: SnarkjsProof | string): SnarkjsProof {
  const p = parseProof(proof);
  if (!p.ok) throw new Error(`not a Groth16 proof: ${p.reason}`);
  return snarkjsProofFromBytes(p.bytes);
}

/** The wire layout's A ‖ B ‖ C (from `offset`) as snarkjs's proof JSON: decimal strings, z = 1, Fp2 as [c0, c1]. */
export function snarkjsProofFromBytes(b: Uint8Array, offset = 0): SnarkjsProof {
  const bx = fp2FromBytes(b, offset + PROOF_B);
  const by = fp2FromBytes(b, offset + PROOF_B + 2 * FIELD_BYTES);
  const s = (x: bigint) => x.toString();
  return {
    pi_a: [s(fromBytes32(b, offset + PROOF_A)), s(fromBytes32(b, offset + PROOF_A + FIELD_BYTES)), "1"],
    pi_b: [
      [s(bx[0]), s(bx[1])],
      [s(by[0]), s(by[1])],
      ["1", "0"],
    ],
    pi_c: [s(fromBytes32(b, offset + PROOF_C)), s(fromBytes32(b, offset + PROOF_C + FIELD_BYTES)), "1"],
    protocol: "groth16",
    curve: "bn128",
  };
}

/** A public input: canonical decimal string or bigint, < r. */
export const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
export function parsePublicInput(v: unknown): bigint | undefined {
  if (typeof v === "bigint") return v >= 0n && v < R ? v : undefined;
  const x = parseDecimal(v);
  return x !== undefined && x < R ? x : undefined;
}

/** G1 [x, y, "1"] → 64 bytes; for verification keys ([x, y, "0"] → all-zero = infinity). */
export function g1ToBytes(v: unknown, out: Uint8Array, offset: number): boolean {
  const p = parseG1(v);
  if (p === undefined) return false;
  if (p !== "infinity") {
    toBytes32(p[0], out, offset);
    toBytes32(p[1], out, offset + FIELD_BYTES);
  }
  return true;
}
/** G2 in snarkjs form → 128 bytes in wire order; false for malformed input or infinity. */
export function g2ToBytes(v: unknown, out: Uint8Array, offset: number): boolean {
  const p = parseG2(v);
  if (p === undefined || p === "infinity") return false;
  fp2ToBytes(p[0], p[1], out, offset);
  fp2ToBytes(p[2], p[3], out, offset + 2 * FIELD_BYTES);
  return true;
}
