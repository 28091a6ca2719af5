// The agent registry: which identity commitment (and signing key) an agent_id
// stands for, under one API key. Revoking keeps the record so that a later
// proof for the agent fails with `agent_revoked` rather than `unknown_agent`.
import type { Clock } from "../../clock";
import { ApiError } from "../../errors";
import type { AgentRecord, ApiKeyRecord, Store } from "../../store/interface";
import { mandateForRegistration, mandateView } from "../mandates/service";
import type { AgentRequest } from "./model";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

type Deps = { store: Store; clock: Clock };

/** The agent as the API shows it, with its mandate and the current period's spend. */
export const agentView = async (store: Store, agent: AgentRecord, now: number) => ({
  agent_id: agent.agentId,
  identity_commitment: agent.identityCommitment,
  signing_key: agent.signingKey,
  status: agent.revokedAt === null ? ("active" as const) : ("revoked" as const),
  created_at: iso(agent.createdAt)!,
  revoked_at: iso(agent.revokedAt),
  ...(await mandateView(store, agent, now)),
});

export async function registerAgent({ store, clock }: Deps, key: ApiKeyRecord, input: AgentRequest) {
  const principalKey = input.principal_key ?? null;
  const mandate = await mandateForRegistration(input.mandate, { agentId: input.agent_id, identityCommitment: input.identity_commitment, principalKey });
  const record: AgentRecord = {
    keyId: key.id,
    agentId: input.agent_id,
    identityCommitment: input.identity_commitment,
    signingKey: input.signing_key ?? null,
    createdAt: clock.now(),
    revokedAt: null,
    principalKey,
    mandate: mandate?.mandate ?? null,
    mandateJws: mandate?.mandateJws ?? null,
    mandateIat: mandate?.mandateIat ?? null,
  };
  if ((await store.registerAgent(record)) === "exists") throw new ApiError("agent_exists");
  return agentView(store, record, clock.now());
}

/** `agentId` is null when the path segment did not percent-decode: it names no agent. */
export async function getAgent({ store, clock }: Deps, key: ApiKeyRecord, agentId: string | null) {
  const agent = agentId === null ? null : await store.getAgent(key.id, agentId);
  if (!agent) throw new ApiError("agent_not_found");
  return agentView(store, agent, clock.now());
}

export async function revokeAgent({ store, clock }: Deps, key: ApiKeyRecord, agentId: string | null) {
  const revoked = agentId === null ? null : await store.revokeAgent(key.id, agentId, clock.now());
  if (revoked) return agentView(store, revoked, clock.now());
  // Unknown, or already revoked: revoking twice is not an error, it reports the state.
  return getAgent({ store, clock }, key, agentId);
}
