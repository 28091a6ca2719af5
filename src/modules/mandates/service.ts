// Mandates on agents: set, replace, remove, and read with the current
// period's spend. The mandate object or the principal's JWS is checked here
// (src/mandates/ is the domain); the store applies it in one conditional
// update (see AgentsStore.setMandate) and enforces it at verification.
import type { Clock } from "../../clock";
import { ApiError, invalidField } from "../../errors";
import { type StoredMandate, mandateHash, storedMandate } from "../../mandates/enforce";
import { limitSpendKey, type Spend, type SpendKey } from "../../mandates/evaluate";
import { periodEnd } from "../../mandates/period";
import { MANDATE_JWS_MAX_LENGTH, verifyMandateJws } from "../../mandates/principal";
import { type Mandate, type MandateLimit, parseMandate } from "../../mandates/schema";
import type { AgentRecord, AgentsStore, SetMandateResult } from "../../store/agents/records";
import type { ApiKeyRecord } from "../../store/keys/records";

type Deps = { store: AgentsStore; clock: Clock };

/** What an agent's registration binds a signed mandate to. */
export interface MandateRegistration {
  /** The public id of the API key the agent is registered under. */
  keyId: string;
  agentId: string;
  identityCommitment: string;
  principalKey: string | null;
  /** Now (Unix ms): a signed mandate's iat may not lie further ahead than MANDATE_IAT_MAX_SKEW_S. */
  now: number;
}

const SIGNED_FORM = 'the principal\'s signed mandate as {"mandate_jws": "<compact JWS>"}';

const isSignedForm = (value: unknown): value is Record<string, unknown> & { mandate_jws: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.hasOwn(value, "mandate_jws");

/**
 * What is wrong with a request's mandate value on its own, before the agent's
 * registration is known, or null: the mandate schema and its rules, or the
 * shape of {"mandate_jws": …}. The reason the API gives for `mandate`.
 */
export function mandateShapeProblem(value: unknown): string | null {
  if (!isSignedForm(value)) {
    const parsed = parseMandate(value);
    return parsed.ok ? null : parsed.error;
  }
  const extra = Object.keys(value).filter((member) => member !== "mandate_jws");
  if (extra.length > 0) return `unknown members ${extra.join(", ")} beside mandate_jws`;
  const jws = value.mandate_jws;
  if (typeof jws !== "string" || jws.length === 0 || jws.length > MANDATE_JWS_MAX_LENGTH)
    return `mandate_jws must be a compact JWS of at most ${MANDATE_JWS_MAX_LENGTH} characters`;
  return null;
}

/**
 * The mandate to store for a request's `mandate` value (a mandate object, or
 * {"mandate_jws": …} for an agent with a principal), or a 400 naming the problem.
 */
export async function resolveMandate(value: unknown, registration: MandateRegistration): Promise<StoredMandate> {
  const problem = mandateShapeProblem(value);
  if (problem) throw invalidField("mandate", problem);
  if (!registration.principalKey) {
    if (isSignedForm(value)) throw invalidField("mandate_jws", "only an agent registered with a principal_key takes a signed mandate");
    return storedMandate(value as Mandate);
  }
  if (!isSignedForm(value)) throw invalidField("mandate", `this agent has a principal_key: send ${SIGNED_FORM}`);
  const jws = value.mandate_jws;
  const verified = await verifyMandateJws(jws, {
    keyId: registration.keyId,
    agentId: registration.agentId,
    identityCommitment: registration.identityCommitment,
    principalKey: registration.principalKey,
    now: registration.now,
  });
  if (!verified.ok) throw invalidField("mandate_jws", verified.error);
  return storedMandate(verified.value.mandate, { jws: jws as string, iat: verified.value.iat });
}

/** The mandate for a new registration: required with a principal_key, optional otherwise. */
export async function mandateForRegistration(value: unknown, registration: MandateRegistration): Promise<StoredMandate | null> {
  if (value === undefined || value === null) {
    if (registration.principalKey) throw invalidField("mandate", `is required with principal_key: ${SIGNED_FORM}`);
    return null;
  }
  return resolveMandate(value, registration);
}

/**
 * The spend a view of this mandate shows: each limit with a period, and its
 * total and count in the current period. Read BEFORE a write whose answer
 * shows it (registration, revocation, a new mandate), so that a failing read
 * never turns a committed write into an error answer (issue 18: PostgreSQL
 * failed the read-back after the write had committed). None of those writes
 * changes spend; a decision committed in between is simply not shown yet.
 */
export interface ViewSpend {
  limits: { index: number; limit: MandateLimit; key: SpendKey }[];
  spend: Spend[];
}

export const NO_VIEW_SPEND: ViewSpend = { limits: [], spend: [] };

export async function spendForView(
  store: AgentsStore,
  keyId: string,
  agentId: string,
  mandateText: string | null | undefined,
  now: number,
): Promise<ViewSpend> {
  const mandate = mandateText ? (JSON.parse(mandateText) as Mandate) : null;
  const limits = (mandate?.limits ?? []).flatMap((limit, index) => {
    const key = limitSpendKey(limit, now);
    return key ? [{ index, limit, key }] : [];
  });
  if (limits.length === 0) return NO_VIEW_SPEND;
  return {
    limits,
    spend: await store.readSpend(
      keyId,
      agentId,
      limits.map(({ key }) => key),
    ),
  };
}

/** The agent's mandate as the API shows it, with the spend read by spendForView (no store access here). */
export function mandateViewOf(agent: AgentRecord, { limits, spend }: ViewSpend, now: number) {
  return {
    principal_key: agent.principalKey ?? null,
    mandate: agent.mandate ? (JSON.parse(agent.mandate) as Mandate) : null,
    mandate_hash: agent.mandate ? mandateHash({ mandate: agent.mandate, mandateJws: agent.mandateJws ?? null }) : null,
    mandate_jws: agent.mandateJws ?? null,
    spend: limits.map(({ index, limit, key }, i) => ({
      limit: index,
      action: limit.action ?? null,
      currency: limit.currency ?? null,
      period: key.period,
      period_start: new Date(key.periodStart).toISOString(),
      period_end: new Date(periodEnd(key.period, now)).toISOString(),
      // A count-only limit adds no amounts: its total means nothing.
      total: limit.currency === undefined ? null : spend[i]!.total,
      count: spend[i]!.count,
    })),
  };
}

/** The agent's mandate as the API shows it, with each limit's spend in the current period (for reads, where nothing was written). */
export async function mandateView(store: AgentsStore, agent: AgentRecord, now: number) {
  return mandateViewOf(agent, await spendForView(store, agent.keyId, agent.agentId, agent.mandate, now), now);
}

function refused(result: Exclude<SetMandateResult, { outcome: "set" }>): never {
  switch (result.outcome) {
    case "not_found":
      throw new ApiError("agent_not_found");
    case "revoked":
      throw new ApiError("agent_revoked");
    case "signature_required":
      throw new ApiError("mandate_signature_required");
    case "superseded":
      throw new ApiError("mandate_superseded");
  }
}

/** PUT /v1/agents/{agent_id}/mandate. `agentId` is null when the path segment did not percent-decode. */
export async function putMandate({ store, clock }: Deps, key: ApiKeyRecord, agentId: string | null, body: unknown) {
  const agent = agentId === null ? null : await store.getAgent(key.id, agentId);
  if (!agent) throw new ApiError("agent_not_found");
  if (agent.revokedAt !== null) throw new ApiError("agent_revoked");
  // A well-formed mandate the platform wrote itself, for an agent whose mandates its principal signs:
  // the body is fine, the agent's state refuses it, the same answer as removing the mandate (docs/api.md).
  if (agent.principalKey && !isSignedForm(body) && mandateShapeProblem(body) === null) throw new ApiError("mandate_signature_required");
  // One instant for the iat bound, the spend's period and the answer.
  const now = clock.now();
  const mandate = await resolveMandate(body, {
    keyId: key.id,
    agentId: agent.agentId,
    identityCommitment: agent.identityCommitment,
    principalKey: agent.principalKey ?? null,
    now,
  });
  // Read before the write: an answer that says "failed" never follows a committed write.
  const spend = await spendForView(store, key.id, agent.agentId, mandate.mandate, now);
  const result = await store.setMandate(key.id, agent.agentId, mandate);
  if (result.outcome !== "set") refused(result);
  return { agent_id: agent.agentId, ...mandateViewOf(result.agent, spend, now) };
}

/** DELETE /v1/agents/{agent_id}/mandate: the agent is unconstrained again (never one with a principal). */
export async function deleteMandate({ store, clock }: Deps, key: ApiKeyRecord, agentId: string | null) {
  if (agentId === null) throw new ApiError("agent_not_found");
  const result = await store.setMandate(key.id, agentId, null);
  if (result.outcome !== "set") refused(result);
  // No mandate now: nothing to read back after the write.
  return { agent_id: agentId, ...mandateViewOf(result.agent, NO_VIEW_SPEND, clock.now()) };
}
