// fetch for agents: behaves as fetch, and answers a ZKAgent challenge
// (docs/http-auth.md) by itself. On a 401 with `WWW-Authenticate: ZKAgent`:
//
//   no challenge yet (realm only)  → repeat with the claim, agent="<id>"
//   a challenge (challenge_id …)   → prove for its nonce, action and exact
//                                    context, sign if the identity can, and
//                                    repeat once with the credentials
//
// Before it proves, it checks that the challenge binds exactly the request it
// is sending (checks.ts): method, origin, target, the declared body fields,
// the action it means, a group challenge's message, its own maximum amount.
// A challenge that fails a check is refused with a ChallengeError naming the
// field: nothing is proved, nothing is sent. Anything else (another status,
// another scheme, a second challenge after the proof) is returned as it came.
// The request's body is buffered so it can be sent again unchanged, and every
// request has a timeout.
import { SHIPPED_CIRCUIT_ID } from "../circuits/version";
import { formatAuth, fromBase64url, parseAuth, toBase64url } from "../http-auth/scheme";
import type { JsonObject } from "../identity/encoding";
import { ChallengeError, checkChallenge, checkGroupMessage, type MaxAmount, outgoingRequest, parseMaxAmount } from "./checks";
import { CircuitSourceError, type LoadedCircuit, loadCircuit } from "./circuit";
import { boundOrigin } from "../groups/derivation";
import { checkGroupScope } from "./group/challenge";
import { parseGroupChallenge, proveGroupChallenge } from "./group/index";
import { prove, sign } from "./index";
import { type RequestSigner, requestSigner } from "../web-bot-auth/sign";
import type { BudgetChallenge } from "./budget/challenge";
import { parseBudgetChallenge } from "./budget/challenge";
import { BudgetSpendError } from "./budget/error";
import { defaultBudgetDir, heldGroups, loadMembership } from "./budget/membership";
import { type BudgetSpendOptions, type BudgetSpendProof, type SpendOutcome, spendBudget } from "./budget/spend";

/**
 * What the agent proves with: the JSON `zkagent identity new --json` prints
 * with agent_id added, or, for private verification, the JSON of
 * `zkagent identity new --semaphore --json` with group_id added.
 */
export interface FetchIdentity {
  agent_id?: string;
  /** For private verification (a group claim). */
  group_id?: string;
  /**
   * For a budget spend (a budget claim): the budgeted group's id. The
   * membership (secret, salt, terms) is the one `zkagent budget join` kept
   * for the challenge's service and this group (src/agent/budget/).
   */
  budget_group?: string;
  /** The agent identity's secret (an agent claim). */
  secret?: string;
  /** The Semaphore identity's private key (a group claim), as Identity.export() writes it. */
  private_key?: string;
  identity_commitment?: string;
  signing_key?: string;
  signing_secret?: string;
}

/** A ZKAgent challenge as the 401 carries it, parameters decoded. */
export interface ZkAgentChallenge {
  challenge_id: string;
  nonce: string;
  action: string;
  context: JsonObject;
  circuit_id?: string;
  /** The circuit's URL at the zkagent service. */
  circuit?: string;
  /** Every parameter as sent (a group challenge's merkle_tree_root, scope, message, … among them). */
  params: Record<string, string>;
}

export interface AgentFetchOptions {
  identity: FetchIdentity;
  /**
   * The circuit for a challenge. Default: the development circuit built in
   * when the challenge names it; else the challenge's circuit URL, only when
   * its origin is one of `trustedServices` (a merchant must not choose the
   * code the agent runs: the witness wasm).
   */
  circuit?: (challenge: ZkAgentChallenge) => Promise<LoadedCircuit>;
  /** Origins of zkagent services whose circuits the default `circuit` loads. */
  trustedServices?: string[];
  /** Accept trusted services over http:// on a loopback host (a local service, tests); https only otherwise. */
  allowInsecureLoopback?: boolean;
  /** Where the default `circuit` caches downloads (loadCircuit's cacheDir). */
  cacheDir?: string;
  /**
   * The proof for a group claim (private verification): given the challenge,
   * returns the `proof` text the service verifies (a Semaphore proof's JSON).
   * Default: the SDK's own (proveGroupChallenge) with the identity's
   * private_key, the members read from the challenge's zkagent service, which
   * must be one of `trustedServices`.
   */
  groupProver?: (challenge: ZkAgentChallenge, identity: FetchIdentity) => Promise<string>;
  /** Sign the challenge when the identity has a signing_secret (default true; the service then needs its signing_key). */
  sign?: boolean;
  /** Send the claim on the first request (saves one round trip; tells every URL the agent id). Default false. */
  announce?: boolean;
  /**
   * The action the agent means (e.g. "purchase"): a challenge for any other
   * action is refused (ChallengeError "request_mismatch", field "action").
   * Default: any action, shown to `approve`.
   */
  action?: string;
  /**
   * The most the agent approves: a challenge whose context's `amount` is
   * above `amount`, whose `currency` is another, or that names a currency but
   * no amount, is refused (ChallengeError "limit"). Compared as exact
   * decimals. A context with neither `amount` nor `currency` binds no payment
   * (browsing a catalog) and passes.
   */
  maxAmount?: MaxAmount;
  /**
   * Decide whether to prove for this challenge at all, after the checks above
   * passed; false returns the 401 as it is (no error: the caller decided).
   */
  approve?: (challenge: ZkAgentChallenge) => boolean | Promise<boolean>;
  /** Called with the challenge once it is proved, before the request is repeated with the credentials (to log or show what was proved). */
  onProof?: (challenge: ZkAgentChallenge) => void;
  /**
   * Milliseconds each request may take, its response body included: the
   * requests to the merchant and those to the zkagent service for circuits
   * and group members. Default 30,000. A request past it fails with
   * ChallengeError "timeout" (or, for a circuit or member list, the loader's
   * error), naming the URL.
   */
  timeoutMs?: number;
  /** prove()'s window tables (default true). */
  precompute?: boolean;
  /** Where the provers keep their tables between processes (ProveOptions.tableCache); default defaultTableCacheDir(), false for none. */
  tableCache?: string | false;
  /** Threads per proof (ProveOptions.threads, GroupProveOptions.threads); default 1 for the agent circuit, the cores (≤ 4) for a group proof. */
  threads?: number;
  /** A group claim's anonymity floor (GroupProveOptions.minAnonymity, default 3). */
  minAnonymity?: number;
  /** Where synced group trees are kept (SyncOptions.treeCache); default defaultTreeCacheDir(), false for none. */
  treeCache?: string | false;
  /** The fetch underneath (default the global one). */
  fetch?: (request: Request) => Response | Promise<Response>;
  /**
   * A budget claim's options (src/agent/budget/spend.ts): where memberships
   * and wallets are kept (default $XDG_CACHE_HOME/zkagent/budgets), how long
   * to wait for a checkpoint holding the member's last note, the notes cache.
   */
  budget?: Pick<BudgetSpendOptions, "dir" | "checkpointWaitMs" | "checkpointPollMs" | "notesCache" | "lockWaitMs" | "artifacts" | "now">;
  /**
   * Sign every request sent (each retry afresh) the Web Bot Auth way with the
   * identity's Ed25519 key, naming this origin (the operator's, whose
   * /.well-known/http-message-signatures-directory lists the key: see
   * directoryResponse). Needs signing_key and signing_secret.
   */
  signatureAgent?: string;
}

export { ChallengeError, type ChallengeErrorCode, type MaxAmount } from "./checks";

/** The default of AgentFetchOptions.timeoutMs. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** The ZKAgent challenge a 401 carries: null when it carries none, "claim" when it asks who the agent is. */
export function readChallenge(response: Response): ZkAgentChallenge | "claim" | null {
  if (response.status !== 401) return null;
  const header = response.headers.get("www-authenticate");
  const found = header === null ? null : parseAuth(header);
  const params = found?.[0];
  if (!params) return null;
  if (params.challenge_id === undefined) return "claim";
  const contextText = params.context === undefined ? "{}" : fromBase64url(params.context);
  let context: unknown;
  try {
    context = contextText === null ? null : JSON.parse(contextText);
  } catch {
    context = null;
  }
  if (typeof context !== "object" || context === null || Array.isArray(context))
    throw new ChallengeError("malformed", "the challenge's context is not base64url of a JSON object", "context");
  if (params.nonce === undefined || params.action === undefined)
    throw new ChallengeError("malformed", "the challenge lacks nonce or action", params.nonce === undefined ? "nonce" : "action");
  return {
    challenge_id: params.challenge_id,
    nonce: params.nonce,
    action: params.action,
    context: context as JsonObject,
    circuit_id: params.circuit_id,
    circuit: params.circuit,
    params,
  };
}

function claimOf(identity: FetchIdentity): Record<string, string> {
  if (identity.agent_id) return { agent: identity.agent_id };
  if (identity.group_id) return { group: identity.group_id };
  if (identity.budget_group) return { budget: identity.budget_group };
  throw new TypeError("the identity needs agent_id (or group_id, or budget_group)");
}

/** The zkagent service a budget challenge comes from: the trusted service whose origin serves its circuit. */
function budgetServiceOf(challenge: ZkAgentChallenge, options: AgentFetchOptions): string {
  const origin = trustedServiceOf(challenge, options, `the budget challenge for ${challenge.params.group_id ?? "no group"}`);
  return (options.trustedServices ?? []).find((service) => new URL(service).origin === origin) ?? origin;
}

/**
 * The budget challenge a 401 carries: its parameters, and the `budget`
 * object from the 401's JSON body (`challenge.budget`, as the guard sends
 * the service's answer) or, failing that, a `budget` parameter holding
 * base64url JSON of it.
 */
function budgetChallengeOf(challenge: ZkAgentChallenge, body: unknown): BudgetChallenge {
  const { params } = challenge;
  let budget: unknown = (body as { challenge?: { budget?: unknown } } | null)?.challenge?.budget;
  if (budget === undefined && params.budget !== undefined) {
    const text = fromBase64url(params.budget);
    try {
      budget = text === null ? undefined : JSON.parse(text);
    } catch {
      budget = undefined;
    }
  }
  const number = (value: string | undefined) => (value === undefined ? undefined : Number(value));
  return parseBudgetChallenge({
    challenge_id: challenge.challenge_id,
    nonce: challenge.nonce,
    action: challenge.action,
    context: challenge.context,
    group_id: params.group_id,
    circuit_id: challenge.circuit_id,
    expires_in: number(params.expires_in),
    timestamp: number(params.timestamp),
    budget,
  });
}

/** The budget spend for a challenge: the membership kept for its service and group, checked, proved, recorded; `send` resolves it. */
async function budgetSpend(
  challenge: ZkAgentChallenge,
  body: unknown,
  options: AgentFetchOptions,
  send?: (proof: BudgetSpendProof) => Promise<SpendOutcome>,
): Promise<BudgetSpendProof> {
  const groupId = options.identity.budget_group;
  const service = budgetServiceOf(challenge, options);
  const parsed = budgetChallengeOf(challenge, body);
  if (groupId !== undefined && parsed.group_id !== groupId)
    throw new ChallengeError("identity", `the challenge is for group ${parsed.group_id}, the identity claims ${groupId}`, "budget_group");
  const dir = options.budget?.dir ?? defaultBudgetDir();
  const membership = loadMembership(dir, service, parsed.group_id);
  if (!membership)
    throw new BudgetSpendError("no_membership", `no membership of budgeted group ${parsed.group_id} at ${service} is kept in ${dir} (zkagent budget join)`);
  const origin = boundOrigin(challenge.context);
  if (origin === null) throw new ChallengeError("request_mismatch", "a budget challenge must bind the origin it pays (@request.origin)", "context");
  return spendBudget(
    { membership, challenge: parsed, service, origin, send },
    {
      ...options.budget,
      dir,
      fetch:
        options.fetch === undefined
          ? undefined
          : (((input: string | URL | Request, init?: RequestInit) => options.fetch!(new Request(input, init))) as typeof fetch),
      allowInsecureLoopback: options.allowInsecureLoopback,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      treeCache: options.treeCache,
      tableCache: options.tableCache,
      threads: options.threads,
      precompute: options.precompute,
    },
  );
}

/** The budget group a claim 401 offers (`budget="<id>"`) when the identity names no claim and a membership of it is kept; else null. */
function budgetOffer(response: Response, options: AgentFetchOptions): string | null {
  const { identity } = options;
  if (identity.agent_id || identity.group_id || identity.budget_group) return null;
  const header = response.headers.get("www-authenticate");
  // One challenge per offered group (`ZKAgent realm="…", budget="a", ZKAgent realm="…", budget="b"`): the first held is taken.
  const offered = ((header === null ? null : parseAuth(header)) ?? []).map((params) => params.budget).filter((id): id is string => id !== undefined);
  if (offered.length === 0) return null;
  const held = heldGroups(options.budget?.dir ?? defaultBudgetDir());
  return offered.find((id) => held.has(id)) ?? null;
}

/** What a merchant's answer to budget credentials says of the spend (the notes feed is asked first, spend.ts). */
async function outcomeOf(response: Response): Promise<SpendOutcome> {
  if (response.ok) return "accepted";
  if (response.status >= 500) return "unknown";
  const header = response.headers.get("www-authenticate");
  const error = (header === null ? null : parseAuth(header))?.[0]?.error;
  let reason: unknown;
  try {
    reason = ((await response.clone().json()) as { reason?: unknown } | null)?.reason;
  } catch {
    reason = undefined;
  }
  return error === "already_spent" || reason === "already_spent" ? "already_spent" : "refused";
}

async function defaultCircuit(challenge: ZkAgentChallenge, options: AgentFetchOptions): Promise<LoadedCircuit> {
  if (challenge.circuit_id === undefined || challenge.circuit_id === SHIPPED_CIRCUIT_ID) return loadCircuit();
  trustedServiceOf(challenge, options, `the challenge names circuit ${challenge.circuit_id}`);
  const url = challenge.circuit!;
  const circuit = await loadCircuit(url, {
    cacheDir: options.cacheDir,
    allowInsecureLoopback: options.allowInsecureLoopback,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  if (circuit.id !== challenge.circuit_id) throw new CircuitSourceError(`${url} is circuit ${circuit.id}, not ${challenge.circuit_id}`);
  return circuit;
}

/** The zkagent service a challenge comes from (the origin of its circuit URL), only when it is one the agent trusts. */
function trustedServiceOf(challenge: ZkAgentChallenge, options: AgentFetchOptions, what: string): string {
  const url = challenge.circuit;
  const origin = url && URL.canParse(url) ? new URL(url).origin : null;
  const trusted = (options.trustedServices ?? []).map((service) => new URL(service).origin);
  if (!origin || !trusted.includes(origin))
    throw new ChallengeError("untrusted", `${what} at ${url ?? "no URL"}, not from a trusted zkagent service`, "circuit");
  return origin;
}

/**
 * A group challenge answered by the SDK's own Semaphore prover: the members
 * are read from the challenge's (trusted) zkagent service, the tree is
 * rebuilt here, and the proof is made only for the root the agent rebuilt.
 */
async function defaultGroupProver(challenge: ZkAgentChallenge, options: AgentFetchOptions): Promise<string> {
  const { identity } = options;
  if (identity.private_key === undefined) throw new ChallengeError("identity", "a group claim needs the identity's Semaphore private_key", "private_key");
  const service = trustedServiceOf(challenge, options, `the group challenge for ${challenge.params.group_id ?? "no group"}`);
  const { params } = challenge;
  const groupChallenge = parseGroupChallenge({
    challenge_id: challenge.challenge_id,
    nonce: challenge.nonce,
    action: challenge.action,
    context: challenge.context,
    group_id: params.group_id,
    merkle_tree_root: params.merkle_tree_root,
    merkle_tree_depth: Number(params.merkle_tree_depth),
    message: params.message,
    scope: params.scope,
    circuit_id: challenge.circuit_id,
    ...(params.size === undefined ? {} : { size: Number(params.size) }),
  });
  if (identity.group_id !== undefined && groupChallenge.group_id !== identity.group_id) {
    throw new ChallengeError("identity", `the challenge is for group ${groupChallenge.group_id}, the identity claims ${identity.group_id}`, "group_id");
  }
  // The origin the challenge binds is the one the request goes to (zkagentFetch checked it: checkChallenge); the scope is derived from it.
  const origin = boundOrigin(challenge.context) ?? undefined;
  const proof = await proveGroupChallenge(
    { privateKey: identity.private_key, challenge: groupChallenge, service, action: challenge.action, context: challenge.context, origin },
    {
      precompute: options.precompute,
      tableCache: options.tableCache,
      threads: options.threads,
      allowInsecureLoopback: options.allowInsecureLoopback,
      minAnonymity: options.minAnonymity,
      treeCache: options.treeCache,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    },
  );
  return JSON.stringify(proof);
}

/**
 * The credentials for a challenge: `ZKAgent agent=…, challenge_id=…,
 * proof=…[, signature=…]`. It does not know the request the challenge is for,
 * so it does not check it (zkagentFetch does, before it calls this); a group
 * challenge's message is checked here too, as it needs no request.
 */
export async function answerChallenge(challenge: ZkAgentChallenge, options: AgentFetchOptions, body?: unknown): Promise<string> {
  const { identity } = options;
  const claim = claimOf(identity);
  let proof: string;
  if (claim.budget !== undefined) {
    // Without the request to send it with, the spend is recorded as sent; the next spend resolves it from the notes feed.
    proof = JSON.stringify(await budgetSpend(challenge, body, options));
  } else if (claim.group !== undefined) {
    checkGroupMessage({ ...challenge, message: challenge.params.message });
    // The scope too, before any prover (the SDK's or one passed in) sees the challenge: the bound origin's, or none is proved.
    checkGroupScope(challenge.params.group_id ?? "", challenge.params.scope ?? "", challenge.context, boundOrigin(challenge.context) ?? undefined);
    proof = await (options.groupProver ?? ((c: ZkAgentChallenge) => defaultGroupProver(c, options)))(challenge, identity);
  } else {
    if (identity.secret === undefined) throw new ChallengeError("identity", "an agent claim needs the identity's secret", "secret");
    const circuit = await (options.circuit ?? ((c: ZkAgentChallenge) => defaultCircuit(c, options)))(challenge);
    proof = await prove(
      { secret: identity.secret, nonce: challenge.nonce, action: challenge.action, context: challenge.context, circuit },
      { precompute: options.precompute, tableCache: options.tableCache, threads: options.threads },
    );
  }
  const credentials: Record<string, string> = { ...claim, challenge_id: challenge.challenge_id, proof: toBase64url(proof) };
  if (claim.agent !== undefined && identity.signing_secret && options.sign !== false) {
    credentials.signature = sign({
      signingSecret: identity.signing_secret,
      challengeId: challenge.challenge_id,
      nonce: challenge.nonce,
      action: challenge.action,
      context: challenge.context,
    });
  }
  return formatAuth(credentials);
}

/**
 * A fetch that answers ZKAgent challenges with `options.identity`, only for
 * the request it sends (see the file header): a refused challenge throws
 * ChallengeError, `approve` returning false returns the 401.
 */
export function zkagentFetch(options: AgentFetchOptions) {
  const send = options.fetch ?? ((request: Request) => fetch(request));
  let signer: Promise<RequestSigner> | undefined;
  const signatureAgent = options.signatureAgent;
  const signed = async (request: Request): Promise<Request> =>
    signatureAgent === undefined ? request : (await (signer ??= requestSigner(options.identity, signatureAgent))).sign(request);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(timeoutMs > 0)) throw new TypeError("timeoutMs must be a positive number of milliseconds");
  if (options.maxAmount) parseMaxAmount(options.maxAmount); // a malformed limit fails here, not at the first challenge
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const original = new Request(input, init);
    // Buffered once: the same bytes go out on every attempt.
    const body = original.body === null ? null : await original.arrayBuffer();
    const attempt = async (authorization?: string): Promise<Response> => {
      const headers = new Headers(original.headers);
      if (authorization !== undefined) headers.set("authorization", authorization);
      const timer = AbortSignal.timeout(timeoutMs);
      try {
        // Signed afresh on every attempt (a new nonce): a verifier accepts a nonce once.
        return await send(await signed(new Request(original, { headers, body, signal: AbortSignal.any([original.signal, timer]) })));
      } catch (error) {
        if (!timer.aborted) throw error;
        throw new ChallengeError("timeout", `${original.method} ${original.url}: no answer within ${timeoutMs / 1000} s`, undefined, original.url);
      }
    };
    let active = options;
    let response = await attempt(options.announce ? formatAuth(claimOf(active.identity)) : undefined);
    let challenge = readChallenge(response);
    if (challenge === "claim") {
      if (options.announce) return response; // it was claimed already
      // An identity that names no claim takes a budget claim the 401 offers, for a group it holds a membership of.
      const offered = budgetOffer(response, options);
      if (offered !== null) active = { ...options, identity: { ...options.identity, budget_group: offered } };
      await response.body?.cancel();
      response = await attempt(formatAuth(claimOf(active.identity)));
      challenge = readChallenge(response);
    }
    if (challenge === null || challenge === "claim") return response;
    // The challenge is compared with the request as sent (the URL given, not
    // one a redirect reached): a proof for any other request is never made.
    const group = claimOf(active.identity).group !== undefined;
    try {
      const request = outgoingRequest(original.method, original.url, original.headers.get("content-type"), body);
      checkChallenge({ ...challenge, message: challenge.params.message, group }, request, { action: options.action, maxAmount: options.maxAmount });
    } catch (error) {
      await response.body?.cancel();
      throw error;
    }
    if (options.approve && !(await options.approve(challenge))) return response;
    if (claimOf(active.identity).budget !== undefined) {
      // A budget spend is sent by the spend itself, so that the wallet records it before it leaves and reads the answer.
      const body = await response.json().catch(() => null);
      let answered: Response | undefined;
      const proof = await budgetSpend(challenge, body, active, async (made) => {
        const authorization = formatAuth({
          budget: active.identity.budget_group!,
          challenge_id: challenge.challenge_id,
          proof: toBase64url(JSON.stringify(made)),
        });
        options.onProof?.(challenge);
        answered = await attempt(authorization);
        return outcomeOf(answered);
      });
      if (answered === undefined) throw new TypeError(`the budget spend ${proof.nullifier} was made but not sent`);
      return answered;
    }
    const authorization = await answerChallenge(challenge, active);
    await response.body?.cancel();
    options.onProof?.(challenge);
    return attempt(authorization);
  };
}
