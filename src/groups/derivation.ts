// The service's derivation of what a group challenge asks a Semaphore v4
// member to prove (docs/protocol.md, "Groups"), shared by the service that
// issues and checks challenges and by the agent that recomputes them before it
// proves (src/agent/checks.ts): an agent proves only a message it derived
// itself from the nonce, action and context it was shown.
//
// - `message` binds the challenge: its nonce, action and canonical context.
// - `scope` is one per (platform's API key, group): the circuit's nullifier
//   is Poseidon(hash(scope), secret), so one member has one pseudonym at one
//   platform and unrelated ones at two.
//
// Both are SHA-256 of a tagged canonical JSON, cut to 248 bits: below the
// field order r and below 2^256, as Semaphore's hash() takes them.
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { canonicalJson, type JsonObject } from "../identity/encoding";

const MESSAGE_TAG = "zkagent/group-message/v1";
const SCOPE_TAG = "zkagent/group-scope/v1";

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

/** The pseudonym's scope: the platform (API key id) and the group. */
export const groupScope = (keyId: string, groupId: string): bigint => taggedField(SCOPE_TAG, { key_id: keyId, group_id: groupId });

/** The message for a challenge whose context is given decoded (as the agent reads it off a 401): the same as the service's for its stored canonical text. */
export const groupMessageOf = (challenge: { nonce: string; action: string; context: JsonObject | undefined }): bigint =>
  groupMessage({ nonce: challenge.nonce, action: challenge.action, context: canonicalJson(challenge.context) });
