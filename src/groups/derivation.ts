// The service's derivation of what a group challenge asks a Semaphore v4
// member to prove (docs/protocol.md, "Groups"), shared by the service that
// issues and checks challenges and by the agent that recomputes them before it
// proves (src/agent/checks.ts): an agent proves only a message it derived
// itself from the nonce, action and context it was shown.
//
// - `message` binds the challenge: its nonce, action and canonical context.
// - `scope` is one per (platform, group): the circuit's nullifier is
//   Poseidon(hash(scope), secret), so one member has one pseudonym at one
//   platform and unrelated ones at two. The platform is the origin the
//   challenge binds (its context's `@request.origin`, which every guard of
//   scheme version 2 writes): the agent checks that origin against the one it
//   is sending to and recomputes the scope from it, so a merchant cannot hand
//   it another platform's scope (issue 37). A challenge that binds no origin
//   (asked of the service directly) keeps the scope of the API key that asked
//   (v1), which only the service can compute.
//
// Both are SHA-256 of a tagged canonical JSON, cut to 248 bits: below the
// field order r and below 2^256, as Semaphore's hash() takes them.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { canonicalJson, type JsonObject } from "../identity/encoding";

const MESSAGE_TAG = "zkagent/group-message/v1";
const SCOPE_TAG = "zkagent/group-scope/v1";
const ORIGIN_SCOPE_TAG = "zkagent/group-scope/v2";
const REQUEST_MEMBER = "@request";

/** SHA-256 of the tagged canonical JSON, its first 248 bits as an integer: below r and below 2^256. Budgets (src/budgets/) derive their tagged values with it too. */
export function taggedField(tag: string, fields: Record<string, unknown>): bigint {
  const digest = createHash("sha256")
    .update(canonicalize({ tag, ...fields }) as string, "utf8")
    .digest();
  return BigInt(`0x${digest.subarray(0, 31).toString("hex")}`);
}

/** The challenge's message: nonce (hex, as issued), action, and the canonical context text ("{}" when none). */
export const groupMessage = (challenge: { nonce: string; action: string; context: string | null }): bigint =>
  taggedField(MESSAGE_TAG, { nonce: challenge.nonce, action: challenge.action, context: challenge.context ?? "{}" });

/** The scope of a challenge that binds no origin (v1): the API key that asked, and the group. Only the service can compute it. */
export const groupScope = (keyId: string, groupId: string): bigint => taggedField(SCOPE_TAG, { key_id: keyId, group_id: groupId });

/** The scope of a challenge bound to `origin` (v2): the platform's origin and the group, what the agent recomputes. */
export const originScope = (origin: string, groupId: string): bigint => taggedField(ORIGIN_SCOPE_TAG, { origin, group_id: groupId });

/** The origin a challenge's context binds (`@request.origin`, scheme version 2), or null when it binds none. */
export function boundOrigin(context: JsonObject | null | undefined): string | null {
  const request = context?.[REQUEST_MEMBER];
  if (typeof request !== "object" || request === null || Array.isArray(request)) return null;
  const origin = (request as JsonObject).origin;
  return typeof origin === "string" ? origin : null;
}

/** A challenge's scope: the origin's (v2) when its context binds one, else the asking key's (v1). */
export const challengeScope = (challenge: { keyId: string; groupId: string; context: JsonObject | null | undefined }): bigint => {
  const origin = boundOrigin(challenge.context);
  return origin === null ? groupScope(challenge.keyId, challenge.groupId) : originScope(origin, challenge.groupId);
};

/** The message for a challenge whose context is given decoded (as the agent reads it off a 401): the same as the service's for its stored canonical text. */
export const groupMessageOf = (challenge: { nonce: string; action: string; context: JsonObject | undefined }): bigint =>
  groupMessage({ nonce: challenge.nonce, action: challenge.action, context: canonicalJson(challenge.context) });
