// The storage contract. Two implementations honour it (sqlite.ts, postgres.ts)
// and one test suite (test/store/contract.ts) runs against both. Everything
// correctness needs across processes and hosts lives behind this interface:
// one-time use, counters and rate-limit windows are atomic in the database.
//
// Times are Unix milliseconds. All methods are async so a networked store fits.
import type { MandateDecision, MandateScope, StoredMandate } from "../mandates/enforce";
import type { Spend, SpendKey } from "../mandates/evaluate";
import type { TreeCache } from "../groups/cache";
import type { Leaf } from "../groups/tree";
import type { CeremonySummary, CircuitListing } from "../circuits/listing";

export type StoredStatus = "pending" | "verified" | "failed";

/**
 * The database cannot be reached (PostgreSQL down, connection refused or
 * closed), or another process holds SQLite's write lock past the bounded
 * wait. Both stores throw this and only this for such failures, so the HTTP
 * layer can answer 503 (and a retry may succeed) instead of 500.
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** SHA-256 of the full key, hex. The key itself is never stored. */
  hash: string;
  /** Challenge creations allowed per minute; 0 means unlimited. */
  rateLimit: number;
  /** Agent registrations allowed per minute; 0 means unlimited; absent: the configured default. */
  agentRateLimit?: number;
  createdAt: number;
  revokedAt: number | null;
}

export interface Usage {
  /** Successful challenge creations: the counter the interface specifies. */
  challenges: number;
  verified: number;
  failed: number;
}

export interface AgentRecord {
  keyId: string;
  agentId: string;
  identityCommitment: string;
  signingKey: string | null;
  /** The signing key's RFC 7638 thumbprint (the keyid a Web Bot Auth signature names); null without a signing key. */
  signingKeyId?: string | null;
  createdAt: number;
  revokedAt: number | null;
  /** Ed25519 key (base64url) of the principal whose signed mandates alone bind this agent. */
  principalKey?: string | null;
  /** The mandate in force (see StoredMandate); null or absent: unconstrained. */
  mandate?: string | null;
  mandateJws?: string | null;
  mandateIat?: number | null;
}

/**
 * Why setMandate changed nothing: no such agent, a revoked one, an unsigned
 * mandate (or none) for an agent with a principal, or a signed mandate not
 * issued after the stored one.
 */
export type SetMandateResult =
  | { outcome: "set"; agent: AgentRecord }
  | { outcome: "not_found" | "revoked" | "signature_required" | "superseded"; agent: AgentRecord | null };

export interface ChallengeRecord {
  id: string;
  keyId: string;
  agentId: string;
  action: string;
  /** The context as canonical JSON (RFC 8785), or null when none was given. */
  context: string | null;
  nonce: string;
  createdAt: number;
  expiresAt: number;
  status: StoredStatus;
  decidedAt: number | null;
  confidence: number | null;
  reason: string | null;
  /** The request that created it; written to the audit trail, not read back. */
  requestId?: string | null;
  /** What the decision rested on, stored with it; null while pending. */
  evidence?: DecisionEvidence | null;
  /** The signed receipt (compact JWS) of the decision; null until signed. */
  receipt?: string | null;
  /**
   * The circuit that was active when the challenge was created: its proof is
   * verified against that circuit's key. Null or absent on rows from before
   * circuits were versioned (the shipped circuit, src/circuits/registry.ts).
   */
  circuitId?: string | null;
  /** A group challenge (issue 24): its group, the group's root when it was created, and the depth to prove at; absent for an agent challenge. */
  groupId?: string | null;
  groupRoot?: string | null;
  groupDepth?: number | null;
}

/**
 * What a decision rested on, fixed at decision time so that a receipt signed
 * later (after a crash between decision and signature) says exactly what a
 * receipt signed at once would have said.
 */
export interface DecisionEvidence {
  /** The checks that passed, in the order they ran (vocabulary: src/receipts/claims.ts). */
  checks: string[];
  /** The agent's commitment the proof was checked against; null when the agent was unknown. */
  identityCommitment: string | null;
  /** "sha256:<hex>" of the verification key used. */
  vkHash: string;
  /** The circuit version whose key that is (absent in decisions from before circuits were versioned). */
  circuitId?: string;
  /** The agent's mandate the decision was checked against, and what it consumed or which constraint it broke. */
  mandate?: MandateDecision | null;
  /** A group decision: the group, the root the proof named, and the pseudonym (the proof's nullifier) when the proof was read. Never a commitment. */
  group?: { id: string; root: string; pseudonym: string | null } | null;
}

/** A group (issue 24): a Semaphore v4 tree owned by one key. */
export interface GroupRecord {
  groupId: string;
  keyId: string;
  createdAt: number;
  /** Bumped by every change (one transaction each). */
  version: number;
  /** Leaves, removed ones included (Semaphore's size). */
  size: number;
  activeMembers: number;
  depth: number;
  /** Decimal; "0" while empty. */
  root: string;
  /** The version of the last removal (0: none): roots older than it are no longer acceptable. */
  removedVersion: number;
  /** The group mandate (canonical JSON), held by each member separately; null: none. */
  mandate: string | null;
  /** The API key ids that may challenge the group (issue 34); null: any key. */
  challengers: string[] | null;
}

/** A group as created: version 0, no leaves, root "0". */
export const newGroupRecord = (fields: Pick<GroupRecord, "groupId" | "keyId" | "createdAt" | "mandate" | "challengers">): GroupRecord => ({
  ...fields,
  version: 0,
  size: 0,
  activeMembers: 0,
  depth: 0,
  root: "0",
  removedVersion: 0,
});

/**
 * A membership change. `at` and `requestId` go to the audit trail (one entry
 * per commitment added or removed); `maxSize` bounds the leaves the group may
 * reach (GROUP_MAX_MEMBERS; absent: the depth's 2^32).
 */
export type GroupChange = ({ kind: "add"; commitments: string[]; maxSize?: number } | { kind: "remove"; commitment: string }) & {
  at: number;
  requestId?: string | null;
};

export type ChangeGroupResult =
  | { outcome: "changed"; group: GroupRecord }
  | { outcome: "not_found" | "forbidden" | "not_member" }
  /** An added commitment already a member or repeated: `index` into the batch. Nothing applied. */
  | { outcome: "invalid"; index: number; problem: string }
  /** An added commitment removed from this group before (issue 34): `index` into the batch. Nothing applied. */
  | { outcome: "removed_before"; index: number }
  /** The batch would take the group past `maxSize` leaves. Nothing applied. */
  | { outcome: "full"; size: number; maxSize: number }
  /** Other processes changed the group each time this change was planned, PLAN_ATTEMPTS times (src/store/groups.ts). Nothing applied. */
  | { outcome: "contended"; attempts: number };

/**
 * A receipt signing key. `active` signs (exactly one at a time), `published`
 * no longer signs but stays in the JWKS, `retired` is withdrawn from it.
 */
export type SigningKeyState = "active" | "published" | "retired";

export interface SigningKeyRecord {
  /** RFC 7638 thumbprint of the public key. */
  kid: string;
  /** The public key as JWK JSON text ({"crv":"Ed25519","kty":"OKP","x":…}). */
  publicJwk: string;
  /** The private key at rest (src/receipts/keys.ts: plain or AES-256-GCM sealed PKCS#8). Never logged or served. */
  privateKey: string;
  state: SigningKeyState;
  createdAt: number;
  retiredAt: number | null;
}

/**
 * A circuit version (issue 17, docs/trust.md). `active`: new challenges use
 * it (exactly one at a time once seeded); `accepted`: verifies the challenges
 * that name it, issued to none; `retired`: verifies nothing.
 */
export type CircuitState = "active" | "accepted" | "retired";

export interface CircuitRecord {
  /** `agent_identity-` + the first 16 hex digits of the vk hash: the same ceremony output has the same id everywhere. */
  id: string;
  state: CircuitState;
  /** The snarkjs verification key, JSON text. */
  vk: string;
  /** "sha256:<hex>" of its canonical JSON: what receipts name. */
  vkHash: string;
  zkeySha256: string;
  wasmSha256: string;
  /** The ceremony's transcript.json text, rebuilt from its known fields (src/circuits/listing.ts). */
  transcript: string;
  /**
   * SHA-256 of `transcript` and its summary, computed when the circuit was
   * added: what GET /v1/circuits serves. Null on a row stored before they
   * were (rebuilt once by the first start that finds it) or whose stored
   * transcript failed that rebuild's checks (`refused` says why).
   */
  transcriptSha256: string | null;
  ceremony: CeremonySummary | null;
  /** Why the rebuild refused this row's stored transcript: the circuit is then not served. Null when it was not refused. */
  refused: string | null;
  createdAt: number;
  activatedAt: number | null;
  retiredAt: number | null;
}

/** A circuit with the artifacts agents prove with, as `circuits add` stores it. */
export interface CircuitWithArtifacts extends CircuitRecord {
  zkey: Uint8Array;
  wasm: Uint8Array;
}

export type ActivateCircuitResult = "activated" | "already_active" | "retired" | "unknown";
export type RetireCircuitResult = "retired" | "already_retired" | "active" | "unknown";

export interface RateWindow {
  /** Start of the fixed one-minute window the request falls in. */
  windowStart: number;
  /** Requests allowed in the sliding minute (src/sliding-window.ts); 0 means unlimited. */
  limit: number;
  /** How much of the previous minute (windowStart − 60 s) the sliding minute still covers; absent: 0 (a fixed window). */
  previousWeight?: number;
}

/** The write quota for agent registrations: a rate per sliding minute (src/sliding-window.ts) and a cap on the rows a key holds. */
export interface AgentQuota {
  /** Start of the fixed one-minute window the request falls in. */
  windowStart: number;
  /** Registrations allowed in the sliding minute; 0 means unlimited. */
  limit: number;
  /** How much of the previous minute (windowStart − 60 s) the sliding minute still covers; absent: 0 (a fixed window). */
  previousWeight?: number;
  /** Agents (active or revoked: both are rows) the key may hold; 0 means no cap. */
  maxAgents: number;
}

/** Refused by the rate: the previous and current windows' counts (this attempt counted), for Retry-After. */
export type RegisterRateLimited = { outcome: "rate_limited"; previous: number; current: number };

export type RegisterAgentResult = "created" | "exists" | "too_many_agents" | RegisterRateLimited;

/** `used`: the requests in the sliding minute, this one included (the rate limit headers); a refusal's `previous` and `current`: the windows' counts, for Retry-After. */
export type CreateChallengeResult = { created: true; used: number } | { created: false; used: number; previous: number; current: number };

export interface Decision {
  status: "verified" | "failed";
  decidedAt: number;
  confidence: number | null;
  reason: string | null;
  /** The request that decided it, for the audit trail. */
  requestId?: string | null;
  /** Stored with the decision, in the same update, for its receipt. */
  evidence?: DecisionEvidence | null;
  /**
   * The receipt signed for this decision as proposed, stored in the same
   * update when the decision stands as proposed: when no mandate was applied
   * (an agent with a mandate changes the evidence, so the receipt is then
   * left null and signed afterwards from the stored row).
   */
  receipt?: string | null;
}

/** One row of the append-only audit trail; written by the database itself. */
export interface AuditEntry {
  seq: number;
  at: number;
  keyId: string;
  /** group.member_added / group.member_removed (issue 34): one per commitment; their session, agent and action are "". */
  event: "challenge.created" | "verification.decided" | "group.member_added" | "group.member_removed";
  sessionId: string;
  agentId: string;
  action: string;
  /** pending (created), verified or failed; added or removed for a membership change. */
  result: string;
  reason: string | null;
  requestId: string | null;
  /** A membership change's group and commitment; null for the other events. */
  groupId: string | null;
  commitment: string | null;
}

export interface AuditQuery {
  /** Entries with seq greater than this (for paging and tailing). */
  afterSeq?: number;
  keyId?: string;
  limit: number;
}

/**
 * What an Idempotency-Key names: nothing yet (`new`, now reserved for the
 * caller), a request still running, a finished one (replay its response), or
 * a different request under the same key (`mismatch`).
 */
export type IdempotencyState = { state: "new" } | { state: "in_progress" } | { state: "mismatch" } | { state: "done"; status: number; body: string };

/**
 * `decided` is true only for the one caller whose conditional update won.
 * `mandate` (present when a mandate check was asked for) is what the
 * decision was checked against: null when the agent has no mandate or the
 * proposed decision was already a failure.
 */
export type DecideResult = { decided: true; record: ChallengeRecord; mandate?: MandateDecision | null } | { decided: false; record: ChallengeRecord | null };

/**
 * A claim on a pending challenge: the right to run its one verification
 * (issue 18). `token` names the claimant; the claim lapses at `until` (Unix
 * ms), so a node that died holding it strands the challenge no longer than
 * that. Judged at `now` against the challenge's expiry, like a decision.
 */
export interface Claim {
  token: string;
  now: number;
  until: number;
}

/**
 * `claimed` only for the one caller whose conditional update took the claim;
 * otherwise the challenge as it now is (decided, expired, or pending under
 * another claimant's unexpired claim), or null when there is none.
 */
export type ClaimResult = { claimed: true } | { claimed: false; record: ChallengeRecord | null };

/** A webhook endpoint of an API key (issue 27, docs/webhooks.md). */
export interface WebhookEndpointRecord {
  id: string;
  keyId: string;
  url: string;
  /** The subscribed event types as stored: between commas (src/webhooks/events.ts eventsColumn). */
  events: string;
  /** The signing secret (`whsec_…`). */
  secret: string;
  /** The secret before the last rotation, which still signs until `previousUntil` (Unix ms). */
  previousSecret: string | null;
  previousUntil: number | null;
  createdAt: number;
  deletedAt: number | null;
}

export type WebhookDeliveryState = "pending" | "delivered" | "failed";

/** One event's delivery to one endpoint. */
export interface WebhookDeliveryRecord {
  /** The event id: the `webhook-id` header, the same on every attempt and to every endpoint. */
  eventId: string;
  endpointId: string;
  keyId: string;
  type: string;
  sessionId: string;
  state: WebhookDeliveryState;
  attempts: number;
  /** When the next attempt is due (pending), or was last due. */
  nextAt: number;
  lastStatus: number | null;
  lastError: string | null;
  /** When the current round of attempts began: the event's decision, or its last redelivery. */
  createdAt: number;
  finishedAt: number | null;
}

/** A delivery claimed by a node, with what sending it needs. */
export interface ClaimedWebhookDelivery extends WebhookDeliveryRecord {
  leaseToken: string;
  /** The body, fixed at the first attempt; null before it. */
  payload: string | null;
  endpoint: WebhookEndpointRecord;
}

/**
 * A claim on due deliveries: pending, `nextAt` reached and not leased past
 * `now`. At most `limit` rows, at most `perEndpoint` of one endpoint, none of
 * the endpoints in `skipEndpoints` (those this node is already busy with).
 */
export interface WebhookClaim {
  token: string;
  now: number;
  until: number;
  limit: number;
  perEndpoint: number;
  skipEndpoints: readonly string[];
}

/** What an attempt leaves: delivered, failed for good, or pending again at `nextAt`. */
export interface WebhookAttemptOutcome {
  state: WebhookDeliveryState;
  attempts: number;
  nextAt: number;
  status: number | null;
  error: string | null;
  at: number;
  /** The body the attempt sent, stored with the outcome when the event has none yet (its first attempt). */
  payload?: string;
}

export interface WebhookDeliveryQuery {
  keyId?: string;
  state?: WebhookDeliveryState;
  eventId?: string;
  limit: number;
}

export interface Store {
  readonly kind: "sqlite" | "postgres";

  createKey(key: ApiKeyRecord): Promise<void>;
  getKey(id: string): Promise<ApiKeyRecord | null>;
  listKeys(): Promise<ApiKeyRecord[]>;
  /** Marks the key revoked; false when no such key (or already revoked). */
  revokeKey(id: string, at: number): Promise<boolean>;
  setRateLimit(id: string, perMinute: number): Promise<boolean>;
  usage(id: string): Promise<Usage | null>;

  /**
   * Registers the agent, or re-registers a revoked one. An active agent is
   * left as it is ("exists", counted nowhere). Otherwise the attempt is
   * counted in the key's agent window — refused attempts too, as for
   * challenges — and refused past `quota.limit`; a new row is refused when
   * the key already holds `quota.maxAgents`. One transaction.
   */
  registerAgent(agent: AgentRecord, quota?: AgentQuota): Promise<RegisterAgentResult>;
  /** Sets the key's agent registrations per minute (null: back to the configured default). */
  setAgentRateLimit(id: string, perMinute: number | null): Promise<boolean>;
  getAgent(keyId: string, agentId: string): Promise<AgentRecord | null>;
  /** The key's agents (active or revoked) whose signing key has this thumbprint, at most `limit`, oldest first. */
  agentsBySigningKeyId(keyId: string, signingKeyId: string, limit: number): Promise<AgentRecord[]>;
  /** Agents with a signing key but no thumbprint stored (registered before it was): at most `limit`. */
  agentsMissingSigningKeyId(limit: number): Promise<AgentRecord[]>;
  /** Stores the thumbprint of the agent's signing key, when its signing key is still `signingKey`. */
  setSigningKeyId(keyId: string, agentId: string, signingKey: string, signingKeyId: string): Promise<boolean>;
  revokeAgent(keyId: string, agentId: string, at: number): Promise<AgentRecord | null>;
  /**
   * Replaces (or with null, removes) an active agent's mandate, in one
   * conditional update: an agent with a principal key takes only signed
   * mandates, each issued (iat) after the one it replaces, or the same JWS again.
   */
  setMandate(keyId: string, agentId: string, mandate: StoredMandate | null): Promise<SetMandateResult>;
  /** The agent's verified totals for these periods, in the same order; zero where nothing was counted. */
  readSpend(keyId: string, agentId: string, keys: readonly SpendKey[]): Promise<Spend[]>;

  /**
   * Counts the request in the key's rate window and, when within the limit,
   * stores the challenge and increments the key's usage counter — one
   * transaction. `used` is the window's count including this request.
   */
  createChallenge(challenge: ChallengeRecord, window: RateWindow): Promise<CreateChallengeResult>;
  getChallenge(id: string): Promise<ChallengeRecord | null>;
  /**
   * The challenge and its agent (the row of the challenge's key and agent id,
   * revoked or not; null when there is none), read together: the proof path
   * needs both, and on PostgreSQL a join is one round trip instead of two.
   */
  getChallengeWithAgent(id: string): Promise<{ challenge: ChallengeRecord; agent: AgentRecord | null } | null>;
  /**
   * Decides a challenge with one conditional update: only a challenge still
   * pending and not past `expiresAt` at `decision.decidedAt` changes. The
   * key's verified/failed counter moves with it.
   *
   * With `mandate`, a verified decision is first checked against the agent's
   * mandate in the same transaction, its period totals locked: a violation
   * decides `failed` with reason `mandate_violation` instead, and only a
   * verified decision that stands adds to the totals. However many decisions
   * run at once, on however many nodes, no total or count passes its limit.
   */
  decideChallenge(id: string, decision: Decision, mandate?: MandateScope): Promise<DecideResult>;
  /**
   * Claims a challenge for verification, with one conditional update: only a
   * challenge still pending, not past `expiresAt` at `claim.now`, and not
   * under another claim that lasts past `claim.now` is claimed. However many
   * submissions race on however many nodes, at most one holds the claim at a
   * time, so one key's flood costs one proof check per challenge (the others
   * wait for its decision). The claim gates no decision: decideChallenge
   * still decides any pending challenge, so a claimant slower than its lease
   * loses nothing it acknowledged.
   */
  claimChallenge(id: string, claim: Claim): Promise<ClaimResult>;
  /** Drops the claim `token` holds (its verification ended without a decision), so another submission need not wait for the lease. */
  releaseClaim(id: string, token: string): Promise<void>;
  /** Deletes challenges whose expiry is before `expiredBefore`; returns how many. */
  purgeChallenges(expiredBefore: number): Promise<number>;
  /** Challenges still pending and unexpired at `now`, for the given key or all. */
  countPending(now: number, keyId?: string): Promise<number>;

  listAudit(query: AuditQuery): Promise<AuditEntry[]>;
  /**
   * Deletes audit entries older than `before`; returns how many. The only way
   * rows leave the append-only table: the database refuses every other DELETE.
   */
  purgeAudit(before: number): Promise<number>;

  /**
   * Stores a decided challenge's receipt unless one is stored already, and
   * returns the receipt that is stored now (this one or the earlier one), or
   * null when the challenge is gone or not decided.
   */
  storeReceipt(id: string, receipt: string): Promise<string | null>;

  /**
   * Inserts `candidate` as the active signing key when there is none, and
   * returns the active key — the candidate or the one another process
   * inserted first (at most one active key, enforced by a unique index).
   */
  ensureSigningKey(candidate: SigningKeyRecord): Promise<SigningKeyRecord>;
  activeSigningKey(): Promise<SigningKeyRecord | null>;
  /** Every signing key, oldest first. */
  listSigningKeys(): Promise<SigningKeyRecord[]>;
  /**
   * Makes `next` the active key; the previously active one becomes
   * `published` (still verifiable). One transaction; returns the previous kid.
   */
  rotateSigningKey(next: SigningKeyRecord): Promise<string | null>;
  /**
   * Withdraws a `published` key from the JWKS. The active key cannot be
   * retired (rotate first).
   */
  retireSigningKey(kid: string, at: number): Promise<"retired" | "already_retired" | "active" | "unknown">;

  /**
   * Stores a circuit unless one with its id exists (then nothing changes:
   * a retired circuit stays retired). It is stored `active` when no circuit
   * is active (the first start's seed), else `accepted` (whatever
   * `circuit.state` says). One transaction; returns the stored state.
   */
  addCircuit(circuit: CircuitWithArtifacts): Promise<{ added: boolean; state: CircuitState }>;
  /**
   * Records what a row stored before listings were (transcriptSha256 null)
   * lists: its rebuilt transcript (the stored one is kept aside, never served)
   * or why it is refused. Only a row not rebuilt yet changes; false otherwise.
   */
  rebuildCircuitListing(id: string, outcome: CircuitListing | { refused: string }): Promise<boolean>;
  /** Every circuit, oldest first, without the artifact bytes. */
  listCircuits(): Promise<CircuitRecord[]>;
  getCircuit(id: string): Promise<CircuitRecord | null>;
  /** One artifact's bytes, or null when there is no such circuit. */
  circuitArtifact(id: string, artifact: "zkey" | "wasm"): Promise<Uint8Array | null>;
  /** Makes the circuit active; the active one becomes `accepted`. A retired circuit is not revived. One transaction. */
  activateCircuit(id: string, at: number): Promise<ActivateCircuitResult>;
  /** Retires an `accepted` circuit; the active one cannot be retired (activate another first). */
  retireCircuit(id: string, at: number): Promise<RetireCircuitResult>;

  /**
   * Reserves (keyId, idemKey) for a request with this fingerprint, or reports
   * what holds it. A reservation older than `staleBefore` that never completed
   * (its process died) is taken over.
   */
  reserveIdempotency(keyId: string, idemKey: string, fingerprint: string, now: number, staleBefore: number): Promise<IdempotencyState>;
  completeIdempotency(keyId: string, idemKey: string, status: number, body: string): Promise<void>;
  /** Drops an unfinished reservation so the request can be retried (after a 429 or 5xx). */
  releaseIdempotency(keyId: string, idemKey: string): Promise<void>;
  /**
   * Stores a new group (version 0, empty): "exists" when the id exists (for
   * any key), "too_many" when the key already owns `maxPerKey` groups (0: no
   * bound), decided in one transaction with the key's row held.
   */
  createGroup(group: GroupRecord, maxPerKey?: number): Promise<"created" | "exists" | "too_many">;
  getGroup(groupId: string): Promise<GroupRecord | null>;
  /**
   * Applies a change to the group its owner `keyId` asked for: `trees` (this
   * process's cache) is brought to the stored version by replaying the
   * leaves changed since and computes the new root outside any lock; one
   * transaction holding the group row then writes leaves, group row and root
   * history, if the group is still at the version the change was planned on
   * (else it is planned again). A change that does not commit leaves no
   * cache ahead of the store (src/store/groups.ts).
   */
  changeGroup(groupId: string, keyId: string, change: GroupChange, trees: TreeCache): Promise<ChangeGroupResult>;
  /** Leaves `offset…` in leaf order, at most `limit` ("0" for removed ones). */
  groupMembers(groupId: string, offset: number, limit: number): Promise<string[]>;
  /**
   * The leaves written after version `since` (added or removed since), in
   * leaf order from leaf index `from` on, at most `limit`: the members
   * route's changes, paged by key (a range read on the primary key).
   */
  groupChanges(groupId: string, since: number, from: number, limit: number): Promise<Leaf[]>;
  /** Sets (null: any key) the keys that may challenge the group, owner only. */
  setGroupChallengers(
    groupId: string,
    keyId: string,
    challengers: string[] | null,
  ): Promise<{ outcome: "set"; group: GroupRecord } | { outcome: "not_found" | "forbidden" }>;
  /** Sets (null: removes) the group's mandate, owner only. */
  setGroupMandate(
    groupId: string,
    keyId: string,
    mandate: string | null,
  ): Promise<{ outcome: "set"; group: GroupRecord } | { outcome: "not_found" | "forbidden" }>;
  /** Whether `root` is acceptable for the group now (src/groups/roots.ts): read from the database, never a cache. */
  acceptableRoot(groupId: string, root: string): Promise<boolean>;

  /** Deletes idempotency records created before `before`. */
  purgeIdempotency(before: number): Promise<number>;

  /** Webhooks (issue 27). Decisions write their events in decideChallenge; these manage endpoints and deliveries. */
  createWebhookEndpoint(endpoint: WebhookEndpointRecord): Promise<void>;
  /** The key's endpoints not deleted, oldest first; every key's with null. */
  listWebhookEndpoints(keyId: string | null): Promise<WebhookEndpointRecord[]>;
  getWebhookEndpoint(keyId: string, id: string): Promise<WebhookEndpointRecord | null>;
  /** Deletes the endpoint; its pending deliveries become failed. False when the key has no such endpoint. */
  deleteWebhookEndpoint(keyId: string, id: string, at: number): Promise<boolean>;
  /** Replaces the secret; the current one becomes the previous, signing beside it until `previousUntil`. */
  rotateWebhookSecret(keyId: string, id: string, secret: string, previousUntil: number): Promise<WebhookEndpointRecord | null>;
  /**
   * Leases due deliveries to `claim.token` with one conditional update: of
   * any number of nodes claiming at once, each delivery goes to one, and to
   * another only once the lease has run out.
   */
  claimWebhookDeliveries(claim: WebhookClaim): Promise<ClaimedWebhookDelivery[]>;
  /** Records an attempt (and its body, when the event has none yet), only while `token` still holds the lease; false otherwise. */
  finishWebhookDelivery(eventId: string, endpointId: string, token: string, outcome: WebhookAttemptOutcome): Promise<boolean>;
  /** Deliveries, newest first. */
  listWebhookDeliveries(query: WebhookDeliveryQuery): Promise<WebhookDeliveryRecord[]>;
  /** Makes an event's deliveries (of the key, when given) pending again, due now, a new round; returns how many. */
  redeliverWebhook(eventId: string, keyId: string | null, now: number): Promise<number>;
  /** When the oldest pending delivery's round began, or null when none is pending. */
  oldestPendingWebhook(): Promise<number | null>;
  /** Deletes deliveries delivered or failed before `before`, and the events left without any; returns how many deliveries. */
  purgeWebhooks(before: number): Promise<number>;

  /** Throws when the database cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
