// The agent registry: which identity commitment (and signing key) an agent_id
// stands for, under one API key. Revoking keeps the record so that a later
// proof for the agent fails with `agent_revoked` rather than `unknown_agent`.
import type { Clock } from "../../clock";
import { ApiError } from "../../errors";
import { previousWeight, retryAfterSeconds, windowStart } from "../../sliding-window";
import type { AgentRecord, AgentsStore } from "../../store/agents/records";
import type { ApiKeyRecord } from "../../store/keys/records";
import { keyIdOf } from "../../web-bot-auth/keys";
import { mandateForRegistration, mandateViewOf, spendForView, type ViewSpend } from "../mandates/service";
import type { AgentRequest } from "./model";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The agent as the API shows it, with its mandate and the current period's spend as read (see spendForView). */
const agentViewOf = (agent: AgentRecord, spend: ViewSpend, now: number) => ({
  agent_id: agent.agentId,
  identity_commitment: agent.identityCommitment,
  signing_key: agent.signingKey,
  status: agent.revokedAt === null ? ("active" as const) : ("revoked" as const),
  created_at: iso(agent.createdAt)!,
  revoked_at: iso(agent.revokedAt),
  ...mandateViewOf(agent, spend, now),
});

/** The agent as the API shows it, with its mandate and the current period's spend (for reads). */
export const agentView = async (store: AgentsStore, agent: AgentRecord, now: number) =>
  agentViewOf(agent, await spendForView(store, agent.keyId, agent.agentId, agent.mandate, now), now);

/** Write quotas on registration (issue 11): every row a key can make the service write is bounded. */
export interface AgentLimits {
  /** Registrations per minute for keys without their own setting; 0 = unlimited. */
  defaultAgentRateLimit: number;
  /** Agents (active or revoked) one key may hold; 0 = no cap. */
  maxAgentsPerKey: number;
}

export const DEFAULT_AGENT_RATE_LIMIT = 1_000;
export const DEFAULT_MAX_AGENTS_PER_KEY = 100_000;

type Deps = { store: AgentsStore; clock: Clock; limits?: Partial<AgentLimits> };

export async function registerAgent({ store, clock, limits }: Deps, key: ApiKeyRecord, input: AgentRequest) {
  const now = clock.now();
  const principalKey = input.principal_key ?? null;
  // A revoked agent that had a principal is registered again only under that
  // principal, with a mandate it signed after the last one: otherwise revoke
  // and re-register would drop the principal's limits, or put back an older,
  // wider mandate.
  const previous = await store.getAgent(key.id, input.agent_id);
  if (previous?.revokedAt !== null && previous?.principalKey) {
    if (principalKey !== previous.principalKey) throw new ApiError("mandate_signature_required");
  }
  const mandate = await mandateForRegistration(input.mandate, {
    keyId: key.id,
    agentId: input.agent_id,
    identityCommitment: input.identity_commitment,
    principalKey,
    now,
  });
  if (previous?.revokedAt !== null && previous?.mandateIat != null && (mandate?.mandateIat ?? 0) <= previous.mandateIat) {
    throw new ApiError("mandate_superseded");
  }
  const record: AgentRecord = {
    keyId: key.id,
    agentId: input.agent_id,
    identityCommitment: input.identity_commitment,
    signingKey: input.signing_key ?? null,
    signingKeyId: input.signing_key ? await keyIdOf(input.signing_key) : null,
    createdAt: now,
    revokedAt: null,
    principalKey,
    mandate: mandate?.mandate ?? null,
    mandateJws: mandate?.mandateJws ?? null,
    mandateIat: mandate?.mandateIat ?? null,
  };
  const limit = key.agentRateLimit ?? limits?.defaultAgentRateLimit ?? DEFAULT_AGENT_RATE_LIMIT;
  const maxAgents = limits?.maxAgentsPerKey ?? DEFAULT_MAX_AGENTS_PER_KEY;
  // The spend the answer shows is read before the write (registration changes
  // none), so a failing read can never answer 5xx for an agent that was stored.
  const spend = await spendForView(store, key.id, input.agent_id, record.mandate, now);
  // A sliding minute (src/sliding-window.ts): the limit's burst at the end of one minute is not followed by another at the start of the next.
  const outcome = await store.registerAgent(record, { windowStart: windowStart(now), limit, maxAgents, previousWeight: previousWeight(now) });
  if (outcome === "exists") throw new ApiError("agent_exists");
  if (typeof outcome === "object") {
    const reset = retryAfterSeconds(outcome.previous, outcome.current, limit, now);
    throw new ApiError("rate_limited", { message: `This key may register ${limit} agents in any minute; retry in ${reset} s.` }, { retryAfterSeconds: reset });
  }
  if (outcome === "too_many_agents")
    throw new ApiError("too_many_agents", { message: `This key holds ${maxAgents} agents (revoked ones included), the most one key may hold.` });
  return agentViewOf(record, spend, now);
}

/** `agentId` is null when the path segment did not percent-decode: it names no agent. */
export async function getAgent({ store, clock }: Deps, key: ApiKeyRecord, agentId: string | null) {
  const agent = agentId === null ? null : await store.getAgent(key.id, agentId);
  if (!agent) throw new ApiError("agent_not_found");
  return agentView(store, agent, clock.now());
}

const KEY_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * The calling key's agent whose signing key has this RFC 7638 thumbprint
 * (the keyid of a Web Bot Auth signature), revoked ones included (the view
 * says so). None, or a signing key several of the key's agents share (it
 * names no one agent): agent_not_found.
 */
export async function getAgentByKeyId({ store, clock }: Deps, key: ApiKeyRecord, keyId: string | null) {
  const found = keyId !== null && KEY_ID.test(keyId) ? await store.agentsBySigningKeyId(key.id, keyId, 2) : [];
  if (found.length > 1) throw new ApiError("agent_not_found", { message: "Several of this key's agents share this signing key: it names no one agent." });
  if (found.length === 0) throw new ApiError("agent_not_found");
  return agentView(store, found[0]!, clock.now());
}

/** Fills the thumbprint of agents registered before it was stored (a no-op once done): what GET /v1/signing-keys reads. */
export async function fillSigningKeyIds(store: AgentsStore): Promise<number> {
  let filled = 0;
  for (;;) {
    const batch = await store.agentsMissingSigningKeyId(500);
    let changed = 0;
    for (const agent of batch) if (await store.setSigningKeyId(agent.keyId, agent.agentId, agent.signingKey!, await keyIdOf(agent.signingKey!))) changed++;
    filled += changed;
    // Rows re-registered meanwhile carry their own thumbprint; a batch that changed nothing cannot loop.
    if (batch.length < 500 || changed === 0) return filled;
  }
}

export async function revokeAgent({ store, clock }: Deps, key: ApiKeyRecord, agentId: string | null) {
  const current = agentId === null ? null : await store.getAgent(key.id, agentId);
  if (!current) throw new ApiError("agent_not_found");
  // Read before the write, as for registration: revoking changes no spend.
  const now = clock.now();
  const spend = await spendForView(store, key.id, current.agentId, current.mandate, now);
  // Already revoked: revoking twice is not an error, it reports the state just read (no write, no second read).
  if (current.revokedAt !== null) return agentViewOf(current, spend, now);
  const revoked = await store.revokeAgent(key.id, current.agentId, now);
  // A mandate replaced in between (a concurrent PUT) needs its own spend: read after all, in that race only.
  if (revoked) return revoked.mandate === current.mandate ? agentViewOf(revoked, spend, now) : agentView(store, revoked, now);
  // Revoked (or deleted) by a concurrent request since the read: report the state now.
  return getAgent({ store, clock }, key, agentId);
}
