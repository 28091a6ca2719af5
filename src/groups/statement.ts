// What a group challenge asks a Semaphore v4 member to prove, and how the
// service reads the answer (docs/protocol.md, "Groups").
//
// - `message` binds the challenge: its nonce, action and canonical context.
// - `scope` is one per (platform's API key, group): the circuit's nullifier
//   is Poseidon(hash(scope), secret), so one member has one pseudonym at one
//   platform and unrelated ones at two.
// - The proof is the stock Semaphore v4 proof object; its Groth16 public
//   signals are [root, nullifier, hash(message), hash(scope)], with hash =
//   keccak-256 of the 32-byte big-endian value, shifted right by 8 bits
//   (Semaphore's own hash, so the result is below r).
//
// The statement itself, computed off the circuit: what its four public signals must be for a given tree root,
// secret, message and scope. The agent SDK compares its prover's signals with
// this before it returns a proof; the service side checks a submitted proof
// against the same four values.
//
// Semaphore v4's circuit (semaphore.circom) takes message and scope already
// hashed, and its snarkjs public signals are, in this order:
//
//   [merkleTreeRoot, nullifier, hash(message), hash(scope)]
//   nullifier = Poseidon(hash(scope), secretScalar)      (circomlib's Poseidon, 2 inputs)
//   hash(x)   = keccak-256(x as 32 big-endian bytes) >> 8 (fits in F_r: 248 bits)
//
// hash() is @semaphore-protocol/utils' hash (keccak256(toBeHex(x, 32)) >> 8)
// written over @noble/hashes so the agent SDK does not pull in ethers; the
// Poseidon is poseidon-lite's, the one Semaphore's identity and group use
// (circomlibjs's buildPoseidon costs ≈ 1.4 s at first use, this nothing).
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import type { SnarkjsProof } from "../verifier/types";
import { bytesToBigInt } from "../identity/field";
import { keccak_256 } from "@noble/hashes/sha3";
import { poseidon2 } from "poseidon-lite/poseidon2";

/** A message or scope is a 256-bit unsigned integer: hash() encodes it in 32 bytes, as Semaphore's toBeHex(x, 32) does. */
export const MAX_SEMAPHORE_VALUE = (1n << 256n) - 1n;

/** The decimal text of a message or scope, canonical (no sign, no leading zeros) and below 2^256; null otherwise. */
export function parseSemaphoreValue(text: unknown): bigint | null {
  if (typeof text !== "string" || !/^(0|[1-9][0-9]{0,77})$/.test(text)) return null;
  const value = BigInt(text);
  return value <= MAX_SEMAPHORE_VALUE ? value : null;
}

/** Semaphore's hash of a message or scope: keccak-256 of its 32-byte big-endian encoding, shifted right by 8 bits. */
export function semaphoreHash(value: bigint): bigint {
  if (value < 0n || value > MAX_SEMAPHORE_VALUE) throw new RangeError("a Semaphore message or scope is an integer in [0, 2^256)");
  const bytes = new Uint8Array(32);
  let rest = value;
  for (let i = 31; i >= 0; i--) {
    bytes[i] = Number(rest & 0xffn);
    rest >>= 8n;
  }
  return bytesToBigInt(keccak_256(bytes)) >> 8n;
}

/** The member's nullifier for a scope: Poseidon(hash(scope), secretScalar), as the circuit computes it. */
export const semaphoreNullifier = (scope: bigint, secretScalar: bigint): bigint => poseidon2([semaphoreHash(scope), secretScalar]);

export interface SemaphoreStatement {
  merkleTreeRoot: bigint;
  nullifier: bigint;
  message: bigint;
  scope: bigint;
}

/** The circuit's public signals (decimal) for a statement, in snarkjs order. */
export const semaphorePublicSignals = (s: SemaphoreStatement): string[] =>
  [s.merkleTreeRoot, s.nullifier, semaphoreHash(s.message), semaphoreHash(s.scope)].map(String);

const MESSAGE_TAG = "zkagent/group-message/v1";
const SCOPE_TAG = "zkagent/group-scope/v1";

/** SHA-256 of the tagged canonical JSON, its first 248 bits as an integer: below r and below 2^256. */
function taggedField(tag: string, fields: Record<string, unknown>): bigint {
  const digest = createHash("sha256")
    .update(canonicalize({ tag, ...fields }) as string, "utf8")
    .digest();
  return BigInt(`0x${digest.subarray(0, 31).toString("hex")}`);
}

/** The challenge's message: nonce (hex, as issued), action, and the canonical context text ("{}" when none). */
export const groupMessage = (challenge: { nonce: string; action: string; context: string | null }): bigint =>
  taggedField(MESSAGE_TAG, { nonce: challenge.nonce, action: challenge.action, context: challenge.context ?? "{}" });

/** The pseudonym's scope: the platform (API key id) and the group. */
export const groupScope = (keyId: string, groupId: string): bigint => taggedField(SCOPE_TAG, { key_id: keyId, group_id: groupId });

/** A Semaphore v4 proof object, fields as decimal texts. */
export interface SemaphoreProof {
  merkleTreeDepth: number;
  merkleTreeRoot: string;
  nullifier: string;
  message: string;
  scope: string;
  points: string[];
}

const DECIMAL = /^(0|[1-9][0-9]{0,77})$/;
const decimalOf = (value: unknown): string | null => {
  if (typeof value === "bigint") return value >= 0n ? value.toString() : null;
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? String(value) : null;
  return typeof value === "string" && DECIMAL.test(value) ? value : null;
};

/**
 * The proof object from a request (the object, or its JSON text), its
 * numbers as canonical decimal texts; null when it is not one. Numeric
 * fields may be JSON numbers or decimal strings, as clients serialise them.
 */
export function parseSemaphoreProof(input: unknown): SemaphoreProof | null {
  let value = input;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const o = value as Record<string, unknown>;
  const depth = o.merkleTreeDepth;
  if (typeof depth !== "number" || !Number.isInteger(depth) || depth < 1 || depth > 32) return null;
  const fields = ["merkleTreeRoot", "nullifier", "message", "scope"].map((name) => decimalOf(o[name]));
  if (fields.some((f) => f === null)) return null;
  if (parseSemaphoreValue(fields[2]) === null || parseSemaphoreValue(fields[3]) === null) return null; // hash() takes 256 bits
  if (!Array.isArray(o.points) || o.points.length !== 8) return null;
  const points = o.points.map(decimalOf);
  if (points.some((p) => p === null)) return null;
  const [merkleTreeRoot, nullifier, message, scope] = fields as string[];
  return { merkleTreeDepth: depth, merkleTreeRoot: merkleTreeRoot!, nullifier: nullifier!, message: message!, scope: scope!, points: points as string[] };
}

/** The packed points as snarkjs's proof JSON (Semaphore packs B's coordinates imaginary part first, as Solidity verifiers read them). */
export function unpackPoints(points: readonly string[]): SnarkjsProof {
  const [a0, a1, b01, b00, b11, b10, c0, c1] = points as [string, string, string, string, string, string, string, string];
  return {
    pi_a: [a0, a1, "1"],
    pi_b: [
      [b00, b01],
      [b10, b11],
      ["1", "0"],
    ],
    pi_c: [c0, c1, "1"],
    protocol: "groth16",
    curve: "bn128",
  };
}

/** The circuit's public signals for a proof object. */
export const publicSignals = (proof: SemaphoreProof): bigint[] =>
  semaphorePublicSignals({
    merkleTreeRoot: BigInt(proof.merkleTreeRoot),
    nullifier: BigInt(proof.nullifier),
    message: BigInt(proof.message),
    scope: BigInt(proof.scope),
  }).map(BigInt);
