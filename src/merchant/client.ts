// A small typed client of the zkagent service's setup routes, for a merchant
// or platform that runs only Node (or Bun) and no CLI: register agents and
// read or revoke them, set their mandates, create groups and add or remove
// members, enrol members of budgeted groups with their terms. Over fetch, no zero-knowledge code, no dependency: the same
// transport as the guard's (service.ts). An answer other than the route's
// success is a ZkagentApiError carrying the service's status, `error` text
// (stable: docs/api.md, "Errors"), message and request id.
//
//   const zkagent = zkagentClient({ url: "https://zkagent.example.com", apiKey });
//   await zkagent.registerAgent({ agent_id: "shopper", identity_commitment, signing_key });
//   await zkagent.createGroup({ group_id: "household" });
//   await zkagent.addMembers("household", [commitment]);
//
// The types are written out here (the package carries no schema library);
// test/merchant/types/client.ts holds them to the service's own schemas.
import { send, type Transport } from "./service";

/** What an agent may do (docs/mandates.md): every member optional; amounts are decimal strings. */
export interface Mandate {
  actions?: string[];
  merchants?: string[];
  /** RFC 3339 date-time. */
  valid_from?: string;
  valid_until?: string;
  limits?: MandateLimit[];
}

export interface MandateLimit {
  action?: string;
  /** ISO 4217 code, e.g. "EUR". */
  currency?: string;
  max_amount?: string;
  max_total?: string;
  max_count?: number;
  period?: "day" | "week" | "month";
}

/** A mandate signed by the agent's principal (an agent registered with `principal_key` takes only this). */
export interface SignedMandate {
  mandate_jws: string;
}

/** One limit's spending in its current UTC period. */
export interface Spend {
  limit: number;
  action: string | null;
  currency: string | null;
  period: "day" | "week" | "month";
  period_start: string;
  period_end: string;
  /** Exact decimal sum; null for a count-only limit. */
  total: string | null;
  count: number;
}

/** An agent's mandate as the service holds it. */
export interface MandateRecord {
  agent_id: string;
  principal_key: string | null;
  mandate: Mandate | null;
  mandate_hash: string | null;
  mandate_jws: string | null;
  spend: Spend[];
}

/** A registered agent (POST /v1/agents, GET and DELETE /v1/agents/{id}). */
export interface Agent extends MandateRecord {
  identity_commitment: string;
  signing_key: string | null;
  status: "active" | "revoked";
  created_at: string;
  revoked_at: string | null;
}

export interface AgentRegistration {
  agent_id: string;
  /** Poseidon(secret), decimal: `zkagent identity new` or the agent SDK's createIdentity(). */
  identity_commitment: string;
  /** Ed25519 public key, base64url: lets the agent sign (receipts, Web Bot Auth). */
  signing_key?: string | null;
  principal_key?: string | null;
  mandate?: Mandate | SignedMandate | null;
}

/** A group's tree as a change to its members answers it. */
export interface GroupTree {
  group_id: string;
  size: number;
  active_members: number;
  merkle_tree_root: string;
  merkle_tree_depth: number;
  /** Set while fewer than 3 members are active (docs/privacy.md). */
  anonymity_warning: string | null;
}

/** A group (POST /v1/groups, GET /v1/groups/{id}). */
export interface Group extends GroupTree {
  mandate: Mandate | null;
  /** The key ids that may challenge the group (null: any); shown to its owner only. */
  challengers?: string[] | null;
  created_at: string;
  /** A budgeted group: its leaves come only from enrolments of members' terms. */
  budget: boolean;
}

export interface GroupCreation {
  group_id: string;
  mandate?: Mandate | null;
  challengers?: string[] | null;
  /** Fixed at creation; default false. */
  budget?: boolean;
}

/** What a budgeted group's owner enrols a member with: its identity commitment and its terms, as an AP2 mandate or the project's mandate JSON (exactly one). */
export interface EnrolmentRequest {
  /** The member's identity commitment H1(s), decimal. */
  identity_commitment: string;
  /** An AP2 v0.2 open payment mandate: compact SD-JWT with every disclosure and the agent's key-binding JWT; with principal_keys. */
  ap2_mandate?: string;
  /** The principal's public keys (JWK) the AP2 mandate must be signed by. */
  principal_keys?: { kty: string }[];
  mandate?: Mandate;
}

/** The terms as enrolled: amounts in minor units, decimal strings. */
export interface BudgetTerms {
  currency: string;
  min_amount: string;
  max_amount: string;
  /** Per period (or the mandate's life); 18446744073709551615 when unbounded. */
  budget: string;
  period: "day" | "week" | "month" | null;
  one_time: boolean;
  /** Allowed payee origins; null: any. */
  payees: string[] | null;
  expires_at: string;
}

/** An enrolment (POST /v1/groups/{id}/enrolments): what the owner hands the member (its leaf, salt and terms) to spend with. */
export interface Enrolment {
  group_id: string;
  identity_commitment: string;
  leaf: string;
  leaf_index: number;
  /** Hides the terms in the public leaf: give it to the member, with the terms. */
  salt: string;
  terms: BudgetTerms;
  /** The terms as the spend circuit takes them. */
  statement: { ta: string; tm: string; payees: string[]; mandate: string };
  merkle_tree_root: string;
  size: number;
}

export interface ClientOptions {
  /** The zkagent service, e.g. https://zkagent.example.com. */
  url: string;
  /** The API key the agents and groups belong to. Sent only to `url`. */
  apiKey: string;
  /** For tests and custom transports: the global fetch by default. */
  fetch?: (input: Request) => Response | Promise<Response>;
  /** How long one call may take, ms. Default 10 000. */
  timeoutMs?: number;
}

/** The service answered other than the route's success: its status and its own words. */
export class ZkagentApiError extends Error {
  override readonly name = "ZkagentApiError";
  constructor(
    /** The HTTP status (0: no answer, the network or the timeout). */
    readonly status: number,
    /** The service's `error` text (e.g. "Agent already registered"), stable across versions. */
    readonly error: string,
    /** The service's `message` when it gave one: what to do. */
    readonly detail: string | undefined,
    /** The service's request id, to find its log lines. */
    readonly requestId: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(`${status === 0 ? "no answer" : status} ${error}${detail ? `: ${detail}` : ""}`, options);
  }
}

export interface ZkagentClient {
  registerAgent(agent: AgentRegistration): Promise<Agent>;
  getAgent(agentId: string): Promise<Agent>;
  /** Revokes the agent (its proofs fail with agent_revoked); already revoked: its record. */
  revokeAgent(agentId: string): Promise<Agent>;
  setMandate(agentId: string, mandate: Mandate | SignedMandate): Promise<MandateRecord>;
  removeMandate(agentId: string): Promise<MandateRecord>;
  createGroup(group: GroupCreation): Promise<Group>;
  getGroup(groupId: string): Promise<Group>;
  /** Which keys may challenge the group (null: any). */
  setChallengers(groupId: string, challengers: string[] | null): Promise<Group>;
  /** Adds identity commitments (1–10,000 a call, all or nothing). */
  addMembers(groupId: string, commitments: string[]): Promise<GroupTree>;
  /** Removes a member: its leaf becomes 0; the commitment can never be added back. */
  removeMember(groupId: string, commitment: string): Promise<GroupTree>;
  setGroupMandate(groupId: string, mandate: Mandate): Promise<Group>;
  removeGroupMandate(groupId: string): Promise<Group>;
  /** Enrols a member of a budgeted group with its terms (owner only); the answer is what the member needs to spend. */
  enrol(groupId: string, enrolment: EnrolmentRequest): Promise<Enrolment>;
}

const path = (...segments: string[]) => segments.map((segment, i) => (i % 2 === 0 ? segment : encodeURIComponent(segment))).join("/");

export function zkagentClient(options: ClientOptions): ZkagentClient {
  if (typeof options?.url !== "string" || !URL.canParse(options.url) || !/^https?:$/.test(new URL(options.url).protocol))
    throw new TypeError("url must be the zkagent service's http(s) URL (e.g. https://zkagent.example.com)");
  if (typeof options.apiKey !== "string" || !/^[\x21-\x7e]+$/.test(options.apiKey))
    throw new TypeError("apiKey must be the API key for the zkagent service (a string without spaces)");
  const transport: Transport = options;

  async function call<T>(method: string, route: string, expected: number, body?: unknown): Promise<T> {
    let answered: Awaited<ReturnType<typeof send>>;
    try {
      answered = await send(transport, method, route, body);
    } catch (error) {
      const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
      throw new ZkagentApiError(0, timedOut ? `no answer within ${options.timeoutMs ?? 10_000} ms` : "the service could not be reached", undefined, undefined, {
        cause: error,
      });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(answered.text);
    } catch {
      parsed = null;
    }
    const said = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
    if (answered.status === expected && said !== null) return said as T;
    const text = (name: string) => (typeof said?.[name] === "string" ? (said[name] as string) : undefined);
    const requestId = text("request_id") ?? answered.headers.get("x-request-id") ?? undefined;
    throw new ZkagentApiError(
      answered.status,
      text("error") ?? (said === null ? `an answer that is not JSON (${method} ${route})` : `unexpected status (${method} ${route})`),
      text("message"),
      requestId,
    );
  }

  return {
    registerAgent: (agent) => call("POST", "/v1/agents", 201, agent),
    getAgent: (agentId) => call("GET", path("/v1/agents", agentId), 200),
    revokeAgent: (agentId) => call("DELETE", path("/v1/agents", agentId), 200),
    setMandate: (agentId, mandate) => call("PUT", `${path("/v1/agents", agentId)}/mandate`, 200, mandate),
    removeMandate: (agentId) => call("DELETE", `${path("/v1/agents", agentId)}/mandate`, 200),
    createGroup: (group) => call("POST", "/v1/groups", 201, group),
    getGroup: (groupId) => call("GET", path("/v1/groups", groupId), 200),
    setChallengers: (groupId, challengers) => call("PATCH", path("/v1/groups", groupId), 200, { challengers }),
    addMembers: (groupId, commitments) => call("POST", `${path("/v1/groups", groupId)}/members`, 201, { identity_commitments: commitments }),
    removeMember: (groupId, commitment) => call("DELETE", path("/v1/groups", groupId, "members", commitment), 200),
    setGroupMandate: (groupId, mandate) => call("PUT", `${path("/v1/groups", groupId)}/mandate`, 200, mandate),
    removeGroupMandate: (groupId) => call("DELETE", `${path("/v1/groups", groupId)}/mandate`, 200),
    enrol: (groupId, enrolment) => call("POST", `${path("/v1/groups", groupId)}/enrolments`, 201, enrolment),
  };
}
