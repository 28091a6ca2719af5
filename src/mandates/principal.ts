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
import { compactVerify, decodeProtectedHeader, errors } from "jose";
import { publicKeyObject } from "../identity/signature";
import { type Mandate, type Parsed, parseMandate } from "./schema";

export const MANDATE_JWS_TYPE = "zkagent-mandate+jwt";
export const MANDATE_JWS_ALG = "EdDSA";
/** A signed mandate is a few hundred bytes; this only bounds abuse. */
export const MANDATE_JWS_MAX_LENGTH = 32 * 1024;

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
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    return { ok: false, error: "is not a compact JWS" };
  }
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
  let payload: unknown;
  try {
    payload = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(payloadBytes));
  } catch {
    return { ok: false, error: "payload is not JSON" };
  }
  if (!Value.Check(mandatePayloadSchema, payload)) {
    return { ok: false, error: "payload must be exactly {key_id, agent_id, identity_commitment, mandate, iat} with iat in integer seconds" };
  }
  if (payload.key_id !== registration.keyId) return { ok: false, error: "is for another API key (key_id)" };
  if (payload.agent_id !== registration.agentId) return { ok: false, error: "is for another agent_id" };
  if (payload.identity_commitment !== registration.identityCommitment) return { ok: false, error: "is for another identity_commitment" };
  const mandate = parseMandate(payload.mandate);
  if (!mandate.ok) return { ok: false, error: `mandate ${mandate.error}` };
  return { ok: true, value: { mandate: mandate.value, iat: payload.iat } };
}
