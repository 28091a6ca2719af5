// The Semaphore v4 statement, computed off the circuit: what the circuit's
// four public signals must be for a given tree root, secret, message and
// scope. The agent SDK compares its prover's signals with this before it
// returns a proof; the service checks a submitted proof against the same four
// values. What the message and scope are is the service's derivation
// (derivation.ts); how a proof object is read off the wire is proof-object.ts.
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
import { keccak_256 } from "@noble/hashes/sha3";
import { poseidon2 } from "poseidon-lite/poseidon2";
import { bytesToBigInt } from "../identity/field";

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
