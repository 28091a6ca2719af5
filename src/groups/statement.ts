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
import { createHash } from "node:crypto";
import { keccak_256 } from "@noble/hashes/sha3";
import canonicalize from "canonicalize";
import type { SnarkjsProof } from "../verifier/types";

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

/** Semaphore v4's hash of a message or scope into the field. */
export function semaphoreHash(value: bigint): bigint {
  const bytes = Buffer.from(value.toString(16).padStart(64, "0"), "hex");
  return BigInt(`0x${Buffer.from(keccak_256(bytes)).toString("hex")}`) >> 8n;
}

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
export const publicSignals = (proof: SemaphoreProof): bigint[] => [
  BigInt(proof.merkleTreeRoot),
  BigInt(proof.nullifier),
  semaphoreHash(BigInt(proof.message)),
  semaphoreHash(BigInt(proof.scope)),
];
