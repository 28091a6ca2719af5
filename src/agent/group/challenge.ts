// A group challenge as the agent reads it, and what it checks before it
// proves: everything here is public (the challenge, the caller's intent, the
// origin it sends to), nothing depends on which member is proving.
//
// - `message` must be the one the nonce, the action and the context the
//   caller means give (src/groups/derivation.ts): the caller says what it
//   means to prove (`action`, `context`) and the challenge is held to it.
// - `scope` must be the one the agent derives itself: from the origin the
//   challenge binds (`@request.origin`), which must be the origin the caller
//   is sending to. A merchant that hands over another platform's scope gets
//   no proof, so it never sees the member's pseudonym there. A challenge that
//   binds no origin (asked of the service directly) carries its asking key's
//   scope, which only the service can compute: proved only when the caller
//   names no origin (it asked the service for the challenge itself).
// - `merkle_tree_root` and `size` are advisory: the root proved against is
//   the group's current root as the agent's own sync shows it (proof.ts).
import canonicalize from "canonicalize";
import { boundOrigin, originScope } from "../../groups/derivation";
import { parseSemaphoreValue } from "../../groups/statement";
import { originOf } from "../../http-auth/statement";
import type { JsonObject } from "../../identity/encoding";
import { parseFieldElement } from "../../identity/field";
import { ChallengeError, checkGroupMessage } from "../checks";
import { isSemaphoreDepth } from "./artifacts";
import { GroupProofError } from "./error";

/** A challenge for a group, as POST /v1/verify/challenge returns it with `group_id` (a 401 adds action and context). */
export interface GroupChallenge {
  challenge_id: string;
  nonce: string;
  action?: string;
  context?: JsonObject;
  group_id: string;
  /** The group's root when the challenge was made (decimal). Advisory: the proof is for the root the agent synced. */
  merkle_tree_root: string;
  /** The tree depth of the circuit to prove with (1–32). */
  merkle_tree_depth: number;
  /** Decimal: it binds the nonce, the action and the context (checked before anything is proved). */
  message: string;
  /** Decimal: the pseudonym's domain, one per platform and group (checked against the bound origin). */
  scope: string;
  circuit_id: string;
  /** The group's size (leaves) when the challenge was made. Advisory, never used to choose what is proved. */
  size?: number;
}

const string = (value: unknown): value is string => typeof value === "string" && value !== "";

/** `value` checked as a group challenge; GroupProofError("challenge") naming the first field that is wrong. */
export function parseGroupChallenge(value: unknown): GroupChallenge {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new GroupProofError("challenge", "a group challenge is a JSON object");
  const c = value as Record<string, unknown>;
  const wrong = (field: string, what: string) => new GroupProofError("challenge", `the challenge's ${field} must be ${what}`);
  if (!string(c.group_id)) throw wrong("group_id", "a non-empty string (this is an agent challenge, not a group one?)");
  if (parseFieldElement(c.merkle_tree_root as string) === null) throw wrong("merkle_tree_root", "a decimal field element");
  if (!isSemaphoreDepth(c.merkle_tree_depth)) throw wrong("merkle_tree_depth", "an integer from 1 to 32");
  if (parseSemaphoreValue(c.message) === null) throw wrong("message", "a decimal integer below 2^256");
  if (parseSemaphoreValue(c.scope) === null) throw wrong("scope", "a decimal integer below 2^256");
  if (c.size !== undefined && !(Number.isSafeInteger(c.size) && (c.size as number) >= 1)) throw wrong("size", "a whole number of leaves (at least 1)");
  if (c.action !== undefined && typeof c.action !== "string") throw wrong("action", "a string");
  if (c.context !== undefined && (typeof c.context !== "object" || c.context === null || Array.isArray(c.context))) throw wrong("context", "a JSON object");
  return c as unknown as GroupChallenge;
}

/** What the caller means to prove: the action and context it asked for, and the origin it is sending to. */
export interface GroupIntent {
  /** The action the challenge must be for; default the challenge's own (a 401 carries it). One of the two is required. */
  action?: string;
  /** The context the challenge must bind; default the challenge's own, else the empty one. */
  context?: JsonObject;
  /**
   * The origin the proof is for (scheme://host[:port], or a URL on it): the
   * platform the agent is sending to. Required for a challenge that binds an
   * origin; the scope is then derived from it.
   */
  origin?: string;
}

/**
 * The challenge held to what the caller means (ChallengeError otherwise,
 * naming the field): the action and context, the message they give, and the
 * scope of the origin the challenge binds. Returns the action and context proved.
 */
export function checkGroupIntent(challenge: GroupChallenge, intent: GroupIntent = {}): { action: string; context: JsonObject } {
  const action = intent.action ?? challenge.action;
  if (typeof action !== "string")
    throw new ChallengeError(
      "malformed",
      "the challenge names no action and none is given (action, --action): the message it binds cannot be checked",
      "action",
    );
  if (challenge.action !== undefined && challenge.action !== action)
    throw new ChallengeError("request_mismatch", `the challenge says action "${challenge.action}", the caller means "${action}": refused`, "action");
  const context = intent.context ?? challenge.context ?? {};
  if (challenge.context !== undefined && canonicalize(challenge.context) !== canonicalize(context))
    throw new ChallengeError("request_mismatch", "the challenge's context is not the one the caller means: refused", "context");
  if (!string(challenge.nonce)) throw new ChallengeError("malformed", 'the challenge has no "nonce"', "nonce");
  checkGroupMessage({ nonce: challenge.nonce, action, context, message: challenge.message });
  checkGroupScope(challenge.group_id, challenge.scope, context, intent.origin);
  return { action, context };
}

/**
 * ChallengeError unless `scope` is the one the agent derives: from the origin
 * the context binds, which must be `origin` (the one the caller sends to).
 * A context that binds no origin is accepted only when no origin is named.
 */
export function checkGroupScope(groupId: string, scope: string, context: JsonObject, origin: string | undefined): void {
  const bound = boundOrigin(context);
  const mine = origin === undefined ? undefined : originOf(origin);
  if (mine === null) throw new TypeError(`origin must be an http(s) origin or URL, not ${JSON.stringify(origin)}`);
  if (bound === null) {
    if (mine === undefined) return;
    throw new ChallengeError(
      "scope_mismatch",
      `the challenge binds no origin, so its scope is not one the agent can derive for ${mine}: a proof would reveal the member's pseudonym in a scope it cannot check; refused`,
      "scope",
    );
  }
  if (mine === undefined)
    throw new ChallengeError(
      "request_mismatch",
      `the challenge is bound to origin ${bound}: name the origin the proof is for (origin, --origin) so that its scope can be checked`,
      "origin",
    );
  if (bound !== mine) throw new ChallengeError("request_mismatch", `the challenge is for origin ${bound}, the proof is for ${mine}: refused`, "origin");
  const derived = originScope(bound, groupId).toString();
  if (scope !== derived)
    throw new ChallengeError(
      "scope_mismatch",
      `the challenge's scope ${scope} is not the scope of ${bound} for group ${groupId} (${derived}): a proof would reveal the member's pseudonym in another platform's scope; refused`,
      "scope",
    );
}
