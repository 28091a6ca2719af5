// How strings and JSON become the circuit's public inputs — encoding v1.
// docs/protocol.md is the prose version of this file; test/identity holds the
// vectors. Changing anything here is a new encoding version: old proofs stop
// verifying.
//
//   nonce         31 random bytes, sent as 62 lowercase hex digits; the field
//                 element is their big-endian value (< 2^248 < r, canonical).
//   action_hash   SHA-256("zkagent/v1/action" ‖ 0x00 ‖ UTF-8(action)) mod r
//   context_hash  SHA-256("zkagent/v1/context" ‖ 0x00 ‖ UTF-8(JCS(context))) mod r
//                 JCS is RFC 8785 canonical JSON; an absent context is {}.
//
// SHA-256 output is reduced mod r; the bias (r ≈ 2^253.6, so values below
// 2^256 − 4r are hit five times, the rest four) does not matter for binding:
// what the circuit needs is collision resistance, which the reduction keeps.
import { createHash, randomBytes } from "node:crypto";
import canonicalize from "canonicalize";
import { FIELD_ORDER_R, bytesToBigInt } from "./field";

export const ENCODING_VERSION = "v1";
export const NONCE_BYTES = 31;
const NONCE_PATTERN = new RegExp(`^[0-9a-f]{${NONCE_BYTES * 2}}$`);

export type JsonObject = { [key: string]: unknown };

export function newNonce(): string {
  return randomBytes(NONCE_BYTES).toString("hex");
}

/** The field element of a nonce, or null when the text is not a v1 nonce. */
export function nonceToField(nonce: string): bigint | null {
  return typeof nonce === "string" && NONCE_PATTERN.test(nonce) ? BigInt(`0x${nonce}`) : null;
}

function taggedHash(tag: string, payload: string): bigint {
  const digest = createHash("sha256").update(`zkagent/${ENCODING_VERSION}/${tag}\0`, "utf8").update(payload, "utf8").digest();
  return bytesToBigInt(digest) % FIELD_ORDER_R;
}

export function canonicalJson(value: JsonObject | undefined): string {
  return canonicalize(value ?? {}) as string;
}

export const actionHash = (action: string): bigint => taggedHash("action", action);
export const contextHash = (context: JsonObject | undefined): bigint => canonicalContextHash(canonicalJson(context));
/** context_hash of a context already in canonical form (as the store keeps it). */
export const canonicalContextHash = (canonical: string): bigint => taggedHash("context", canonical);

export interface Statement {
  identityCommitment: bigint;
  nonce: string;
  action: string;
  context?: JsonObject;
}

/**
 * The public inputs in the circuit's order: identity_commitment, nonce,
 * action_hash, context_hash. The server rebuilds these from what it stored;
 * the caller never supplies them.
 */
export function publicSignals(statement: Statement): string[] {
  return statementSignals({ ...statement, contextHash: contextHash(statement.context) });
}

/** The same, from a context hash already computed (the server hashes the stored canonical form). */
export function statementSignals(statement: Omit<Statement, "context"> & { contextHash: bigint }): string[] {
  const nonce = nonceToField(statement.nonce);
  if (nonce === null) throw new Error("nonce is not a v1 nonce (62 lowercase hex digits)");
  return [statement.identityCommitment, nonce, actionHash(statement.action), statement.contextHash].map(String);
}
