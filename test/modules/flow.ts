// Steps of the verification flow over the in-process harness, so route tests
// read as the behaviour they check rather than as request plumbing.
import { expect } from "bun:test";
import type { AgentIdentity } from "../../src/agent";
import type { JsonObject } from "../../src/identity/encoding";
import type { Harness } from "../support/harness";
import { pendingChallenge } from "../../src/modules/challenges/service";
import { proofFor } from "../support/proofs";

export interface Challenge {
  challenge_id: string;
  nonce: string;
  expires_in: number;
  timestamp: number;
}

export async function registerAgent(h: Harness, key: string, agentId: string, agent: AgentIdentity, withSigningKey = false) {
  const body: Record<string, string> = { agent_id: agentId, identity_commitment: agent.identity_commitment };
  if (withSigningKey) body.signing_key = agent.signing_key;
  const response = await h.call("POST", "/v1/agents", { key, body });
  expect(response.status).toBe(201);
  return response.body;
}

export async function requestChallenge(h: Harness, key: string, agentId: string, action: string, context?: JsonObject): Promise<Challenge> {
  const body: Record<string, unknown> = { agent_id: agentId, action };
  if (context !== undefined) body.context = context;
  const response = await h.call("POST", "/v1/verify/challenge", { key, body });
  expect(response.status).toBe(200);
  return response.body as Challenge;
}

/** A real proof by `agent` for the challenge's nonce and the given action/context. */
export const proveFor = (agent: AgentIdentity, challenge: Challenge, action: string, context?: JsonObject) =>
  proofFor({ secret: agent.secret, nonce: challenge.nonce, action, context });

export const submitProof = (h: Harness, key: string | null, challengeId: string, proof: string, agentSignature?: string) =>
  h.call("POST", "/v1/verify/proof", {
    key,
    body: agentSignature === undefined ? { challenge_id: challengeId, proof } : { challenge_id: challengeId, proof, agent_signature: agentSignature },
  });

export const readStatus = (h: Harness, key: string | null, sessionId: string) => h.call("GET", `/v1/verify/status/${encodeURIComponent(sessionId)}`, { key });

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A response body must never leak internals: no stack frames, no source paths. */
export function expectNoInternals(body: unknown) {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  expect(text).not.toMatch(/\bat .+:\d+:\d+|\.ts:\d+|node_modules|Error:/);
}

/** The key id inside an API key (`zka_<16 hex id>_<secret>`). */
export const keyIdOf = (key: string): string => key.split("_")[1]!;

/**
 * Stores a pending challenge with a chosen nonce, as POST /v1/verify/challenge
 * would, so that a pooled proof of a fixed statement (support/proofs.ts SAMPLE)
 * is valid for it. Used where the test is about the proof, not the nonce.
 */
export async function seedChallenge(h: Harness, key: string, agentId: string, statement: { nonce: string; action: string; context?: JsonObject }) {
  const { canonicalJson } = await import("../../src/identity/encoding");
  const id = `ch_seed_${crypto.randomUUID()}`;
  const now = h.clock.now();
  const result = await h.store.createChallenge(
    pendingChallenge(
      {
        id,
        keyId: keyIdOf(key),
        agentId,
        action: statement.action,
        context: statement.context === undefined ? null : canonicalJson(statement.context),
        nonce: statement.nonce,
        requestId: null,
        circuitId: null,
      },
      now,
    ),
    { windowStart: now, limit: 0 },
  );
  expect(result.created).toBe(true);
  return id;
}
