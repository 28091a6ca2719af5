// A Semaphore v4 proof object as it travels (the stock generateProof's
// output, as JSON): how the service reads one from a request, and how its
// packed points and public signals map onto the Groth16 verifier's inputs.
import type { SnarkjsProof } from "../verifier/types";
import { parseSemaphoreValue, semaphorePublicSignals } from "./statement";

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
