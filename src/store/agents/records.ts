// Agents: registration under the key's agent quota, signing key ids, the mandate in force and its period totals.
// The types the domain sees and what it asks of this aggregate; sqlite.ts and
// postgres.ts beside this file answer it. Times are Unix milliseconds.
import type { StoredMandate } from "../../mandates/enforce";
import type { Spend, SpendKey } from "../../mandates/evaluate";

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

export interface AgentsStore {
  /**
   * Registers the agent, or re-registers a revoked one. An active agent is
   * left as it is ("exists", counted nowhere). Otherwise the attempt is
   * counted in the key's agent window — refused attempts too, as for
   * challenges — and refused past `quota.limit`; a new row is refused when
   * the key already holds `quota.maxAgents`. One transaction.
   */
  registerAgent(agent: AgentRecord, quota?: AgentQuota): Promise<RegisterAgentResult>;

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
}
