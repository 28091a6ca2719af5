// Mandates signed by the agent's principal (the human or organisation behind
// it). An agent registered with a `principal_key` takes a mandate only as a
// compact JWS (RFC 7515) by that key:
//
//   header  {"alg": "EdDSA", "typ": "zkagent-mandate+jwt"}
//   payload {"key_id", "agent_id", "identity_commitment", "mandate": {…}, "iat"}
//
// bound to the agent's registration under one API key (`key_id`, the key's
// public id), so the platform that stores it can neither widen the mandate
// nor move it to another agent, identity or API key: a second key of the
// same platform cannot register the agent with the same (or an older, wider)
// mandate and so get a second budget. `iat`
// (seconds) orders a principal's mandates: a stored one is only replaced by
// one issued later, so an older, wider mandate cannot be put back.
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { compactVerify, errors } from "jose";
import { parseIJson } from "../identity/ijson";
import { publicKeyObject } from "../identity/signature";
import { type Mandate, type Parsed, parseMandate } from "./schema";

export const MANDATE_JWS_TYPE = "zkagent-mandate+jwt";
export const MANDATE_JWS_ALG = "EdDSA";
/** A signed mandate is a few hundred bytes; this only bounds abuse. */
export const MANDATE_JWS_MAX_LENGTH = 32 * 1024;
/**
 * How far into the future (by this server's clock) a principal's `iat` may
 * lie: clocks differ by seconds, not by years. Without a bound one mandate
 * signed "in the year 3000" would outrank every later one (a replacement
 * must be issued later), freezing the agent's mandate for good.
 */
export const MANDATE_IAT_MAX_SKEW_S = 300;

export const mandatePayloadSchema = Type.Object(
  {
    key_id: Type.String(),
    agent_id: Type.String(),
    identity_commitment: Type.String(),
    mandate: Type.Unknown(),
    iat: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);
export type MandatePayload = Static<typeof mandatePayloadSchema>;

export interface SignedMandate {
  mandate: Mandate;
  iat: number;
}

export interface Registration {
  /** Now, Unix ms, for the iat bound; default the system clock. */
  now?: number;
  /** The public id of the API key the agent is registered under. */
  keyId: string;
  agentId: string;
  identityCommitment: string;
  principalKey: string;
}

/** The mandate inside a principal's JWS, once signature and binding are checked; otherwise why not. */
export async function verifyMandateJws(jws: unknown, registration: Registration): Promise<Parsed<SignedMandate>> {
  if (typeof jws !== "string" || jws.length === 0 || jws.length > MANDATE_JWS_MAX_LENGTH) {
    return { ok: false, error: `must be a compact JWS of at most ${MANDATE_JWS_MAX_LENGTH} characters` };
  }
  // The header and payload are read as I-JSON, as request bodies are
  // (identity/ijson.ts): with JSON.parse a duplicate member silently wins
  // ({"alg":"none","alg":"EdDSA"}, two "mandate"s), so what was checked
  // and what another JWS library reads could differ.
  const segments = jws.split(".");
  if (segments.length !== 3) return { ok: false, error: "is not a compact JWS" };
  const decodedHeader = ijsonSegment(segments[0]!);
  if (decodedHeader === null) return { ok: false, error: "is not a compact JWS" };
  if (!decodedHeader.ok) return { ok: false, error: `protected header ${decodedHeader.error}` };
  const header = decodedHeader.value as Record<string, unknown> | null;
  if (typeof header !== "object" || header === null || Array.isArray(header)) return { ok: false, error: "is not a compact JWS" };
  if (header.alg !== MANDATE_JWS_ALG) return { ok: false, error: `must be signed with alg ${MANDATE_JWS_ALG}` };
  if (header.typ !== MANDATE_JWS_TYPE) return { ok: false, error: `must carry typ ${MANDATE_JWS_TYPE}` };
  const key = publicKeyObject(registration.principalKey);
  if (!key) return { ok: false, error: "cannot be checked: the agent's principal_key is not an Ed25519 key" };
  let payloadBytes: Uint8Array;
  try {
    ({ payload: payloadBytes } = await compactVerify(jws, key, { algorithms: [MANDATE_JWS_ALG] }));
  } catch (error) {
    if (error instanceof errors.JWSSignatureVerificationFailed) return { ok: false, error: "is not signed by the agent's principal_key" };
    return { ok: false, error: "is not a valid compact JWS" };
  }
  const decodedPayload = ijsonText(payloadBytes);
  if (decodedPayload === null) return { ok: false, error: "payload is not JSON" };
  if (!decodedPayload.ok) return { ok: false, error: `payload ${decodedPayload.error}` };
  const payload = decodedPayload.value;
  if (!Value.Check(mandatePayloadSchema, payload)) {
    return { ok: false, error: "payload must be exactly {key_id, agent_id, identity_commitment, mandate, iat} with iat in integer seconds" };
  }
  // A safe integer (I-JSON already refused more than 2^53 − 1; 1e300 is an
  // "integer" to the schema), and not beyond a small skew into the future:
  // the same answer on both stores, whose integer columns differ in range.
  const latest = Math.floor((registration.now ?? Date.now()) / 1000) + MANDATE_IAT_MAX_SKEW_S;
  if (!Number.isSafeInteger(payload.iat) || payload.iat > latest) {
    return {
      ok: false,
      error: `iat must be whole Unix seconds, at most ${MANDATE_IAT_MAX_SKEW_S} s ahead of the server's clock (now + ${MANDATE_IAT_MAX_SKEW_S} = ${latest})`,
    };
  }
  if (payload.key_id !== registration.keyId) return { ok: false, error: "is for another API key (key_id)" };
  if (payload.agent_id !== registration.agentId) return { ok: false, error: "is for another agent_id" };
  if (payload.identity_commitment !== registration.identityCommitment) return { ok: false, error: "is for another identity_commitment" };
  const mandate = parseMandate(payload.mandate);
  if (!mandate.ok) return { ok: false, error: `mandate ${mandate.error}` };
  return { ok: true, value: { mandate: mandate.value, iat: payload.iat } };
}

type Decoded = { ok: true; value: unknown } | { ok: false; error: string };

/** UTF-8 bytes read as I-JSON; null when they are not UTF-8 or not JSON at all. */
function ijsonText(bytes: Uint8Array): Decoded | null {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
  const parsed = parseIJson(text);
  if (parsed.ok) return { ok: true, value: parsed.value };
  if (parsed.rule === "syntax") return null;
  return { ok: false, error: `is not I-JSON at ${parsed.path || "the top level"}: ${parsed.message}` };
}

/** A base64url JWS segment read as I-JSON; null when it is not base64url, UTF-8 or JSON. */
function ijsonSegment(segment: string): Decoded | null {
  if (!/^[A-Za-z0-9_-]*$/.test(segment)) return null;
  return ijsonText(Buffer.from(segment, "base64url"));
}
