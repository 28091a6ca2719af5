// Row ↔ record mapping shared by the SQL stores (snake_case columns).
import type { Spend } from "../mandates/evaluate";
import type {
  AgentRecord,
  ApiKeyRecord,
  AuditEntry,
  ChallengeRecord,
  CircuitRecord,
  CircuitState,
  DecisionEvidence,
  GroupRecord,
  IdempotencyState,
  SetMandateResult,
  SigningKeyRecord,
  SigningKeyState,
  StoredStatus,
  Usage,
  WebhookDeliveryRecord,
  WebhookDeliveryState,
  WebhookEndpointRecord,
  ClaimedWebhookDelivery,
} from "./interface";

const int = (value: unknown): number => Number(value);
const intOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

export const toKey = (row: any): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  hash: row.hash,
  rateLimit: int(row.rate_limit),
  // Absent rather than null when unset, so records built without it compare equal.
  ...(row.agent_rate_limit === null || row.agent_rate_limit === undefined ? {} : { agentRateLimit: int(row.agent_rate_limit) }),
  createdAt: int(row.created_at),
  revokedAt: intOrNull(row.revoked_at),
});

export const toUsage = (row: any): Usage => ({
  challenges: int(row.challenges),
  verified: int(row.verified),
  failed: int(row.failed),
});

export const toAgent = (row: any): AgentRecord => ({
  keyId: row.key_id,
  agentId: row.agent_id,
  identityCommitment: row.identity_commitment,
  signingKey: row.signing_key ?? null,
  signingKeyId: row.signing_key_id ?? null,
  createdAt: int(row.created_at),
  revokedAt: intOrNull(row.revoked_at),
  principalKey: row.principal_key ?? null,
  mandate: row.mandate ?? null,
  mandateJws: row.mandate_jws ?? null,
  mandateIat: intOrNull(row.mandate_iat),
});

export const toSpend = (row: any): Spend => ({ total: row.total, count: int(row.count) });

/** Why a conditional setMandate matched no row, judged from the agent as it now is. */
export function setMandateRefusal(agent: AgentRecord | null, mandate: { mandateJws: string | null } | null): SetMandateResult {
  if (!agent) return { outcome: "not_found", agent: null };
  if (agent.revokedAt !== null) return { outcome: "revoked", agent };
  if (agent.principalKey && (mandate === null || mandate.mandateJws === null)) return { outcome: "signature_required", agent };
  return { outcome: "superseded", agent };
}

export const toChallenge = (row: any): ChallengeRecord => ({
  id: row.id,
  keyId: row.key_id,
  agentId: row.agent_id,
  action: row.action,
  context: row.context ?? null,
  nonce: row.nonce,
  createdAt: int(row.created_at),
  expiresAt: int(row.expires_at),
  status: row.status as StoredStatus,
  decidedAt: intOrNull(row.decided_at),
  confidence: row.confidence === null || row.confidence === undefined ? null : Number(row.confidence),
  reason: row.reason ?? null,
  evidence: row.evidence ? (JSON.parse(row.evidence) as DecisionEvidence) : null,
  receipt: row.receipt ?? null,
  // Absent rather than null when unset, so records built without it compare equal.
  ...(row.circuit_id ? { circuitId: row.circuit_id as string } : {}),
  ...(row.group_id ? { groupId: row.group_id as string, groupRoot: row.group_root as string, groupDepth: int(row.group_depth) } : {}),
});

export const toGroup = (row: any): GroupRecord => ({
  groupId: row.group_id,
  keyId: row.key_id,
  createdAt: int(row.created_at),
  version: int(row.version),
  size: int(row.size),
  activeMembers: int(row.active_members),
  depth: int(row.depth),
  root: row.root,
  removedVersion: int(row.removed_version),
  mandate: row.mandate ?? null,
  challengers: row.challengers ? (JSON.parse(row.challengers) as string[]) : null,
});

export const toCircuit = (row: any): CircuitRecord => ({
  id: row.id,
  state: row.state as CircuitState,
  vk: row.vk,
  vkHash: row.vk_hash,
  zkeySha256: row.zkey_sha256,
  wasmSha256: row.wasm_sha256,
  transcript: row.transcript,
  transcriptSha256: row.transcript_sha256 ?? null,
  ceremony: row.ceremony ? JSON.parse(row.ceremony) : null,
  refused: row.transcript_refused ?? null,
  createdAt: int(row.created_at),
  activatedAt: intOrNull(row.activated_at),
  retiredAt: intOrNull(row.retired_at),
});

/** The evidence column's text: JSON, or NULL when the decision carries none. */
export const evidenceText = (evidence: DecisionEvidence | null | undefined): string | null => (evidence ? JSON.stringify(evidence) : null);

export const toSigningKey = (row: any): SigningKeyRecord => ({
  kid: row.kid,
  publicJwk: row.public_jwk,
  privateKey: row.private_key,
  state: row.state as SigningKeyState,
  createdAt: int(row.created_at),
  retiredAt: intOrNull(row.retired_at),
});

export const toAudit = (row: any): AuditEntry => ({
  seq: int(row.seq),
  at: int(row.at),
  keyId: row.key_id,
  event: row.event,
  sessionId: row.session_id,
  agentId: row.agent_id,
  action: row.action,
  result: row.result,
  reason: row.reason ?? null,
  requestId: row.request_id ?? null,
  groupId: row.group_id ?? null,
  commitment: row.commitment ?? null,
});

/** The state of an idempotency row another request already holds. */
export function heldIdempotency(row: any, fingerprint: string): IdempotencyState {
  if (row.fingerprint !== fingerprint) return { state: "mismatch" };
  if (row.status === null || row.status === undefined) return { state: "in_progress" };
  return { state: "done", status: int(row.status), body: row.body };
}

export const toWebhookEndpoint = (row: any): WebhookEndpointRecord => ({
  id: row.id,
  keyId: row.key_id,
  url: row.url,
  events: row.events,
  secret: row.secret,
  previousSecret: row.previous_secret ?? null,
  previousUntil: intOrNull(row.previous_until),
  createdAt: int(row.created_at),
  deletedAt: intOrNull(row.deleted_at),
});

export const toWebhookDelivery = (row: any): WebhookDeliveryRecord => ({
  eventId: row.event_id,
  endpointId: row.endpoint_id,
  keyId: row.key_id,
  type: row.type,
  sessionId: row.session_id,
  state: row.state as WebhookDeliveryState,
  attempts: int(row.attempts),
  nextAt: int(row.next_at),
  lastStatus: intOrNull(row.last_status),
  lastError: row.last_error ?? null,
  createdAt: int(row.created_at),
  finishedAt: intOrNull(row.finished_at),
});

/** A claimed delivery read with its event and endpoint (columns prefixed ep_ for the endpoint's). */
export const toClaimedWebhookDelivery = (row: any): ClaimedWebhookDelivery => ({
  ...toWebhookDelivery(row),
  leaseToken: row.lease_token,
  payload: row.payload ?? null,
  endpoint: toWebhookEndpoint({
    id: row.endpoint_id,
    key_id: row.key_id,
    url: row.ep_url,
    events: row.ep_events,
    secret: row.ep_secret,
    previous_secret: row.ep_previous_secret,
    previous_until: row.ep_previous_until,
    created_at: row.ep_created_at,
    deleted_at: row.ep_deleted_at,
  }),
});
