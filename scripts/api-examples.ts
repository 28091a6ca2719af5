// Generates src/http/openapi-examples.json: the examples of the OpenAPI
// document are real answers, recorded here by driving every operation to
// every status it declares against an in-process app (app.handle, no port):
// `bun scripts/api-examples.ts`. Ids, nonces, proofs and receipts differ from
// run to run, so the test (test/contract/) does not compare the file with a
// new run; it checks that every /v1/ response has an example and that each
// one validates against its schema, and it runs recordExamples() itself
// under the contract check.
import { createIdentity, createPrincipal, prove, signMandate } from "../src/agent";
import { createApp } from "../src/app";
import { GroupTrees } from "../src/groups/cache";
import { SHIPPED_CIRCUIT_ID, shippedCircuitRecord } from "../src/circuits/registry";
import { ManualClock } from "../src/clock";
import type { AppDeps } from "../src/deps";
import { silentLogger } from "../src/log";
import { createKey } from "../src/modules/keys/service";
import { StoreUnavailableError } from "../src/store/interface";
import type { Store } from "../src/store/interface";
import { openSqlite } from "../src/store/sqlite";
import { serviceVerifier } from "../src/verifier/service";
import { keyIdOf } from "../src/web-bot-auth/keys";
import type { Examples } from "../src/http/openapi";

export const EXAMPLES_PATH = new URL("../src/http/openapi-examples.json", import.meta.url).pathname;

type App = { handle: (request: Request) => Promise<Response> };

/** A store whose every method fails with `error`: what a lost database (503) or a bug (500) looks like from the routes. */
function failing(store: Store, error: () => Error): Store {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      return typeof value === "function" && name !== "close"
        ? () => {
            throw error();
          }
        : value;
    },
  });
}

/** An error answer is named by its text (the field errors by their kind, a failed verification by its reason), so a name always says what the body is. */
function exampleName(name: string, body: unknown): string {
  const { error, reason } = (typeof body === "object" && body !== null ? body : {}) as { error?: unknown; reason?: unknown };
  if (typeof error !== "string") return name;
  if (error.startsWith("Invalid field")) return "Invalid field";
  if (error.startsWith("Missing required fields")) return "Missing required fields";
  return typeof reason === "string" ? `${error}: ${reason}` : error;
}

/**
 * Drives every operation to every status it declares and returns the
 * answers as examples: operationId → status → name → body. `wrap` sees every
 * app first (the conformance test passes its contract check).
 */
export async function recordExamples(wrap: <T extends App>(app: T) => T = (app) => app): Promise<Examples> {
  const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
  const store = openSqlite(":memory:");
  // Webhook URLs resolve through a fixed answer (a documentation address), so recording needs no DNS.
  const webhooks = { allowPrivate: false, resolve: async () => [{ address: "93.184.216.34", family: 4 }] };
  const deps: AppDeps = { store, clock, verifier: await serviceVerifier(), logger: silentLogger, webhooks };
  // The shipped circuit, as main.ts seeds it on a first start.
  const shippedRecord = await shippedCircuitRecord(clock.now());
  await store.addCircuit(shippedRecord);
  // A circuit stored before transcripts were checked whose transcript failed the re-check on start (src/circuits/registry.ts rebuildCircuitListings).
  const notServed = "/v1/circuits/agent_identity-0000000000000bad";
  await store.addCircuit({
    ...shippedRecord,
    id: "agent_identity-0000000000000bad",
    transcriptSha256: null,
    ceremony: null,
    refused: 'transcript.json: step 2 has the unknown label "review"',
  });
  const app = wrap(createApp(deps));
  const examples: Examples = {};

  const key = (await createKey(store, clock, "examples", 0)).key;
  const limited = (await createKey(store, clock, "limited", 1)).key;
  const keyId = key.split("_")[1]!;

  async function call(
    operationId: string,
    name: string,
    method: string,
    path: string,
    options: { key?: string | null; body?: unknown; headers?: Record<string, string>; app?: App } = {},
  ) {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== null) headers["x-api-key"] = options.key ?? key;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await (options.app ?? app).handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const type = response.headers.get("content-type") ?? "";
    const text = await response.text();
    const value = type.startsWith("application/json") ? JSON.parse(text) : text;
    // JSON and text answers only: a binary one (an artifact download) makes no example to read.
    if (type.startsWith("application/json") || type.startsWith("text/")) {
      const byStatus = (examples[operationId] ??= {});
      (byStatus[String(response.status)] ??= {})[exampleName(name, value)] = value;
    }
    return { status: response.status, body: value };
  }

  // Apps whose store fails: 503 (unavailable) and 500 (a bug); one whose idempotency reservations are all taken.
  const unavailable = wrap(createApp({ ...deps, store: failing(store, () => new StoreUnavailableError("database unreachable")) }));
  const broken = wrap(createApp({ ...deps, store: failing(store, () => new Error("a bug")) }));
  const busy = wrap(
    createApp({
      ...deps,
      store: new Proxy(store, { get: (t, n, r) => (n === "reserveIdempotency" ? async () => ({ state: "in_progress" }) : Reflect.get(t, n, r)) }),
    }),
  );
  const capped = wrap(createApp({ ...deps, limits: { maxPendingPerKey: 1, maxAgentsPerKey: 1, defaultAgentRateLimit: 1 } }));
  const tooLarge = JSON.stringify({ padding: "x".repeat(70 * 1024) });

  /** The failures every authenticated route shares. */
  async function authFailures(operationId: string, method: string, path: string, body?: unknown) {
    await call(operationId, "Missing API key", method, path, { key: null, body });
    await call(operationId, "Invalid API key", method, path, { key: "zka_0000000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", body });
    await call(operationId, "Service unavailable", method, path, { body, app: unavailable });
    await call(operationId, "Internal server error", method, path, { body, app: broken });
  }
  async function bodyFailures(operationId: string, method: string, path: string, required = true, large = tooLarge) {
    await call(operationId, "Malformed JSON body", method, path, { body: "{not json" });
    // A mandate has no required member: {} is a mandate that allows everything.
    if (required) await call(operationId, "Missing required fields", method, path, { body: {} });
    await call(operationId, "Payload too large", method, path, { body: large });
    await call(operationId, "Unsupported Media Type", method, path, { body: "{}", headers: { "content-type": "text/plain" } });
  }

  // Agents, with a mandate that allows purchases only.
  const agent = await createIdentity();
  const mandate = { actions: ["purchase"], limits: [{ action: "purchase", currency: "EUR", max_amount: "50.00", max_total: "100.00", period: "day" }] };
  const registration = { agent_id: "shopper-1", identity_commitment: agent.identity_commitment, signing_key: agent.signing_key, mandate };
  await call("registerAgent", "Registered, with a mandate", "POST", "/v1/agents", { body: registration });
  await call("registerAgent", "Agent already registered", "POST", "/v1/agents", { body: registration });
  await call("registerAgent", "Invalid field", "POST", "/v1/agents", { body: { ...registration, agent_id: "other", identity_commitment: "012" } });
  await bodyFailures("registerAgent", "POST", "/v1/agents");
  await authFailures("registerAgent", "POST", "/v1/agents", registration);
  const second = await createIdentity();
  for (const name of ["Registered", "Rate limit exceeded"]) {
    await call("registerAgent", name, "POST", "/v1/agents", {
      key: limited,
      app: capped,
      body: { agent_id: `a-${name}`, identity_commitment: second.identity_commitment },
    });
  }
  const third = (await createKey(store, clock, "full", 0)).key;
  await call("registerAgent", "Registered", "POST", "/v1/agents", {
    key: third,
    app: capped,
    body: { agent_id: "a", identity_commitment: second.identity_commitment },
  });
  clock.advance(60_000);
  await call("registerAgent", "Too many agents", "POST", "/v1/agents", {
    key: third,
    app: capped,
    body: { agent_id: "b", identity_commitment: second.identity_commitment },
  });

  // A principal's agent: revoked, it registers again only with its principal, and a mandate signed later.
  const principal = createPrincipal();
  const delegate = await createIdentity();
  const signed = (iat: number, body = mandate) =>
    signMandate({
      principalSecret: principal.principal_secret,
      keyId,
      agentId: "delegate",
      identityCommitment: delegate.identity_commitment,
      mandate: body,
      iat,
    });
  const delegation = { agent_id: "delegate", identity_commitment: delegate.identity_commitment, principal_key: principal.principal_key };
  await call("registerAgent", "Registered with a principal", "POST", "/v1/agents", { body: { ...delegation, mandate: { mandate_jws: await signed(100) } } });
  await call("revokeAgent", "Revoked", "DELETE", "/v1/agents/delegate");
  await call("registerAgent", "Signed mandate required", "POST", "/v1/agents", {
    body: { agent_id: "delegate", identity_commitment: delegate.identity_commitment },
  });
  await call("registerAgent", "Mandate superseded", "POST", "/v1/agents", { body: { ...delegation, mandate: { mandate_jws: await signed(50) } } });
  await call("registerAgent", "Registered again", "POST", "/v1/agents", { body: { ...delegation, mandate: { mandate_jws: await signed(200) } } });

  // Reading, revoking, mandates.
  await call("getAgent", "The agent", "GET", "/v1/agents/shopper-1");
  await call("getAgent", "Agent not found", "GET", "/v1/agents/nobody");
  await authFailures("getAgent", "GET", "/v1/agents/shopper-1");
  const shopperKeyId = await keyIdOf(agent.signing_key);
  await call("getAgentByKeyId", "The agent", "GET", `/v1/signing-keys/${shopperKeyId}`);
  await call("getAgentByKeyId", "Agent not found", "GET", `/v1/signing-keys/${"A".repeat(43)}`);
  await authFailures("getAgentByKeyId", "GET", `/v1/signing-keys/${shopperKeyId}`);
  await call("setMandate", "Set", "PUT", "/v1/agents/shopper-1/mandate", { body: mandate });
  await call("setMandate", "Invalid field", "PUT", "/v1/agents/shopper-1/mandate", { body: { max_totl: "1" } });
  await call("setMandate", "Agent not found", "PUT", "/v1/agents/nobody/mandate", { body: mandate });
  await call("setMandate", "Signed mandate required", "PUT", "/v1/agents/delegate/mandate", { body: mandate });
  await call("setMandate", "Mandate superseded", "PUT", "/v1/agents/delegate/mandate", { body: { mandate_jws: await signed(150) } });
  await call("setMandate", "Signed by the principal", "PUT", "/v1/agents/delegate/mandate", { body: { mandate_jws: await signed(300) } });
  await bodyFailures("setMandate", "PUT", "/v1/agents/shopper-1/mandate", false);
  await authFailures("setMandate", "PUT", "/v1/agents/shopper-1/mandate", mandate);
  await call("removeMandate", "Signed mandate required", "DELETE", "/v1/agents/delegate/mandate");
  await call("removeMandate", "Agent not found", "DELETE", "/v1/agents/nobody/mandate");
  await authFailures("removeMandate", "DELETE", "/v1/agents/shopper-1/mandate");
  const spare = await createIdentity();
  await call("registerAgent", "Registered, without a mandate", "POST", "/v1/agents", {
    body: { agent_id: "spare", identity_commitment: spare.identity_commitment },
  });
  await call("setMandate", "Set", "PUT", "/v1/agents/spare/mandate", { body: { actions: ["refund"] } });
  await call("removeMandate", "Removed", "DELETE", "/v1/agents/spare/mandate");
  await call("revokeAgent", "Revoked", "DELETE", "/v1/agents/spare");
  await call("revokeAgent", "Agent not found", "DELETE", "/v1/agents/nobody");
  await authFailures("revokeAgent", "DELETE", "/v1/agents/spare");
  await call("setMandate", "Agent revoked", "PUT", "/v1/agents/spare/mandate", { body: mandate });
  await call("removeMandate", "Agent revoked", "DELETE", "/v1/agents/spare/mandate");

  // Webhooks, registered before the flow below so that its decisions write events (no worker runs here: they stay pending).
  const hookBody = { url: "https://hooks.example/zkagent", events: ["session.verified", "session.failed"] };
  const hook = (await call("createWebhook", "Registered", "POST", "/v1/webhooks", { body: hookBody })).body as { id: string };
  await call("createWebhook", "Invalid field", "POST", "/v1/webhooks", { body: { url: "https://127.0.0.1/hooks", events: ["session.verified"] } });
  await bodyFailures("createWebhook", "POST", "/v1/webhooks");
  await authFailures("createWebhook", "POST", "/v1/webhooks", hookBody);
  await call("listWebhooks", "The endpoints", "GET", "/v1/webhooks");
  await authFailures("listWebhooks", "GET", "/v1/webhooks");
  const unknownHook = "/v1/webhooks/whep_00000000000000000000000000000000";
  await call("getWebhook", "The endpoint", "GET", `/v1/webhooks/${hook.id}`);
  await call("getWebhook", "Webhook not found", "GET", unknownHook);
  await authFailures("getWebhook", "GET", `/v1/webhooks/${hook.id}`);
  await call("rotateWebhookSecret", "Rotated", "POST", `/v1/webhooks/${hook.id}/rotate-secret`);
  await call("rotateWebhookSecret", "Webhook not found", "POST", `${unknownHook}/rotate-secret`);
  await authFailures("rotateWebhookSecret", "POST", `/v1/webhooks/${hook.id}/rotate-secret`);

  // The flow: challenge, proof, status.
  const context = { amount: 20, currency: "EUR", merchant: "shop-a" };
  const challenge = (
    await call("requestChallenge", "The challenge", "POST", "/v1/verify/challenge", { body: { agent_id: "shopper-1", action: "purchase", context } })
  ).body as { challenge_id: string; nonce: string };
  await call("requestChallenge", "Invalid field", "POST", "/v1/verify/challenge", { body: { agent_id: "", action: "purchase" } });
  await bodyFailures("requestChallenge", "POST", "/v1/verify/challenge");
  await authFailures("requestChallenge", "POST", "/v1/verify/challenge", { agent_id: "shopper-1", action: "purchase" });
  await call("requestChallenge", "Idempotent request in progress", "POST", "/v1/verify/challenge", {
    app: busy,
    body: { agent_id: "shopper-1", action: "purchase" },
    headers: { "idempotency-key": "order-17" },
  });
  await call("requestChallenge", "The challenge", "POST", "/v1/verify/challenge", {
    body: { agent_id: "shopper-1", action: "purchase" },
    headers: { "idempotency-key": "order-18" },
  });
  await call("requestChallenge", "Idempotency key reused", "POST", "/v1/verify/challenge", {
    body: { agent_id: "shopper-1", action: "refund" },
    headers: { "idempotency-key": "order-18" },
  });
  await call("requestChallenge", "The challenge", "POST", "/v1/verify/challenge", { key: limited, body: { agent_id: "shopper-1", action: "purchase" } });
  await call("requestChallenge", "Rate limit exceeded", "POST", "/v1/verify/challenge", { key: limited, body: { agent_id: "shopper-1", action: "purchase" } });
  await call("requestChallenge", "The challenge", "POST", "/v1/verify/challenge", { app: capped, body: { agent_id: "shopper-1", action: "purchase" } });
  await call("requestChallenge", "Too many pending challenges", "POST", "/v1/verify/challenge", {
    app: capped,
    body: { agent_id: "shopper-1", action: "purchase" },
  });

  const proof = await prove({ secret: agent.secret, nonce: challenge.nonce, action: "purchase", context });
  const submission = { challenge_id: challenge.challenge_id, proof };
  await call("readSession", "Pending", "GET", `/v1/verify/status/${challenge.challenge_id}`);
  await call("submitProof", "Verified", "POST", "/v1/verify/proof", { body: submission, headers: { "idempotency-key": "proof-1" } });
  await call("submitProof", "Verified (replayed)", "POST", "/v1/verify/proof", { body: submission, headers: { "idempotency-key": "proof-1" } });
  await call("submitProof", "Challenge already used", "POST", "/v1/verify/proof", { body: submission });
  await call("readSession", "Verified", "GET", `/v1/verify/status/${challenge.challenge_id}`);
  await call("submitProof", "Unauthorized access to session", "POST", "/v1/verify/proof", { key: limited, body: submission });
  await call("readSession", "Unauthorized access to session", "GET", `/v1/verify/status/${challenge.challenge_id}`, { key: limited });
  await call("submitProof", "Challenge not found", "POST", "/v1/verify/proof", { body: { challenge_id: "ch_unknown", proof } });
  await call("readSession", "Session not found", "GET", "/v1/verify/status/ch_unknown");
  await call("submitProof", "Idempotency key reused", "POST", "/v1/verify/proof", {
    body: { ...submission, proof: "x" },
    headers: { "idempotency-key": "proof-1" },
  });
  await call("submitProof", "Idempotent request in progress", "POST", "/v1/verify/proof", {
    app: busy,
    body: submission,
    headers: { "idempotency-key": "proof-2" },
  });
  await call("submitProof", "Invalid field", "POST", "/v1/verify/proof", { body: { challenge_id: challenge.challenge_id, proof: 5 } });
  await bodyFailures("submitProof", "POST", "/v1/verify/proof");
  await authFailures("submitProof", "POST", "/v1/verify/proof", submission);
  await authFailures("readSession", "GET", `/v1/verify/status/${challenge.challenge_id}`);

  // Failed verifications: a malformed proof, and a refund the mandate does not allow.
  const garbage = (await call("requestChallenge", "The challenge", "POST", "/v1/verify/challenge", { body: { agent_id: "shopper-1", action: "purchase" } }))
    .body as {
    challenge_id: string;
  };
  await call("submitProof", "Proof verification failed", "POST", "/v1/verify/proof", { body: { challenge_id: garbage.challenge_id, proof: "not a proof" } });
  await call("readSession", "Failed", "GET", `/v1/verify/status/${garbage.challenge_id}`);
  const refund = (await call("requestChallenge", "The challenge", "POST", "/v1/verify/challenge", { body: { agent_id: "shopper-1", action: "refund" } }))
    .body as {
    challenge_id: string;
    nonce: string;
  };
  const refundProof = await prove({ secret: agent.secret, nonce: refund.nonce, action: "refund" });
  await call("submitProof", "Mandate violation", "POST", "/v1/verify/proof", { body: { challenge_id: refund.challenge_id, proof: refundProof } });
  const late = (await call("requestChallenge", "The challenge", "POST", "/v1/verify/challenge", { body: { agent_id: "shopper-1", action: "purchase" } }))
    .body as {
    challenge_id: string;
  };
  clock.advance(301_000);
  await call("readSession", "Expired", "GET", `/v1/verify/status/${late.challenge_id}`);
  await call("submitProof", "Challenge expired", "POST", "/v1/verify/proof", { body: { challenge_id: late.challenge_id, proof } });

  // Groups (docs/api.md, Groups): one owned by the examples key, changed by it, read by anyone.
  const members = ["1349877265092830911234567890123456789", "2711432098761234567890123456789012345", "4100000000000000000000000000000000001"];
  await call("createGroup", "Created", "POST", "/v1/groups", { body: { group_id: "household", mandate } });
  await call("createGroup", "Group already exists", "POST", "/v1/groups", { key: limited, body: { group_id: "household" } });
  await call("createGroup", "Invalid field", "POST", "/v1/groups", { body: { group_id: ".." } });
  await bodyFailures("createGroup", "POST", "/v1/groups");
  await authFailures("createGroup", "POST", "/v1/groups", { group_id: "other" });
  await call("addGroupMembers", "Added", "POST", "/v1/groups/household/members", { body: { identity_commitments: members } });
  await call("addGroupMembers", "Invalid field", "POST", "/v1/groups/household/members", { body: { identity_commitments: [members[0]] } });
  await call("addGroupMembers", "Group not found", "POST", "/v1/groups/nobody/members", { body: { identity_commitments: ["7"] } });
  await call("addGroupMembers", "Group owned by another key", "POST", "/v1/groups/household/members", { key: limited, body: { identity_commitments: ["7"] } });
  // This route takes up to 1 MiB (a batch of 10,000 commitments).
  await bodyFailures("addGroupMembers", "POST", "/v1/groups/household/members", true, JSON.stringify({ padding: "x".repeat(1100 * 1024) }));
  await authFailures("addGroupMembers", "POST", "/v1/groups/household/members", { identity_commitments: ["7"] });
  await call("getGroup", "The group", "GET", "/v1/groups/household");
  await call("getGroup", "Group not found", "GET", "/v1/groups/nobody");
  await authFailures("getGroup", "GET", "/v1/groups/household");
  await call("listGroupMembers", "A page", "GET", "/v1/groups/household/members?limit=2", { key: null });
  await call("listGroupMembers", "Changes since a version", "GET", "/v1/groups/household/members?since=0", { key: null });
  const readLimited = wrap(createApp({ ...deps, limits: { membersReadsPerMinute: 1 } }));
  await call("listGroupMembers", "A page", "GET", "/v1/groups/household/members?limit=2", { key: null, app: readLimited });
  await call("listGroupMembers", "Too many reads of group members", "GET", "/v1/groups/household/members?limit=2", { key: null, app: readLimited });
  await call("listGroupMembers", "Invalid field", "GET", "/v1/groups/household/members?limit=0", { key: null });
  await call("listGroupMembers", "Group not found", "GET", "/v1/groups/nobody/members", { key: null });
  await call("listGroupMembers", "Service unavailable", "GET", "/v1/groups/household/members", { key: null, app: unavailable });
  await call("listGroupMembers", "Internal server error", "GET", "/v1/groups/household/members", { key: null, app: broken });
  await call("requestChallenge", "A group challenge", "POST", "/v1/verify/challenge", { body: { group_id: "household", action: "purchase", context } });
  await call("requestChallenge", "Group not found", "POST", "/v1/verify/challenge", { body: { group_id: "nobody", action: "purchase" } });
  // Groups: the owner's allow-list of challengers, and the bounds (issues 32, 34).
  await call("updateGroup", "Challengers set", "PATCH", "/v1/groups/household", { body: { challengers: [keyId] } });
  await call("requestChallenge", "Key may not challenge this group", "POST", "/v1/verify/challenge", {
    key: limited,
    body: { group_id: "household", action: "purchase" },
  });
  await call("updateGroup", "Any key may challenge", "PATCH", "/v1/groups/household", { body: { challengers: null } });
  await call("updateGroup", "Invalid field", "PATCH", "/v1/groups/household", { body: { challengers: "all" } });
  await call("updateGroup", "Group not found", "PATCH", "/v1/groups/nobody", { body: { challengers: null } });
  await call("updateGroup", "Group owned by another key", "PATCH", "/v1/groups/household", { key: limited, body: { challengers: null } });
  await bodyFailures("updateGroup", "PATCH", "/v1/groups/household");
  await authFailures("updateGroup", "PATCH", "/v1/groups/household", { challengers: null });
  const groupCapped = wrap(createApp({ ...deps, limits: { groupMaxPerKey: 1, groupMaxMembers: members.length } }));
  await call("createGroup", "Too many groups", "POST", "/v1/groups", { body: { group_id: "one-too-many" }, app: groupCapped });
  await call("addGroupMembers", "Group full", "POST", "/v1/groups/household/members", { body: { identity_commitments: ["7"] }, app: groupCapped });
  // One addition held in flight (its tree work waits), the next is refused.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const slowTrees = new GroupTrees();
  const plan = slowTrees.plan.bind(slowTrees);
  slowTrees.plan = async (...args) => (await held, plan(...args));
  const stalled = wrap(createApp({ ...deps, groups: slowTrees, limits: { groupAdditionsInFlight: 1 } }));
  const inFlight = call("addGroupMembers", "Added", "POST", "/v1/groups/household/members", { body: { identity_commitments: ["8"] }, app: stalled });
  await Bun.sleep(20);
  await call("addGroupMembers", "Too many additions in flight", "POST", "/v1/groups/household/members", {
    body: { identity_commitments: ["9"] },
    app: stalled,
  });
  release();
  await inFlight;
  await call("createGroup", "Created, without a mandate", "POST", "/v1/groups", { body: { group_id: "empty" } });
  await call("requestChallenge", "Group has no members", "POST", "/v1/verify/challenge", { body: { group_id: "empty", action: "purchase" } });
  await call("removeGroupMember", "Removed", "DELETE", `/v1/groups/household/members/${members[2]}`);
  await call("removeGroupMember", "Member not found", "DELETE", `/v1/groups/household/members/${members[2]}`);
  await call("addGroupMembers", "Commitment removed before", "POST", "/v1/groups/household/members", { body: { identity_commitments: [members[2]] } });
  await call("removeGroupMember", "Group not found", "DELETE", "/v1/groups/nobody/members/7");
  await call("removeGroupMember", "Group owned by another key", "DELETE", `/v1/groups/household/members/${members[1]}`, { key: limited });
  await authFailures("removeGroupMember", "DELETE", `/v1/groups/household/members/${members[1]}`);
  // Budgeted groups (issue 40): enrolment with terms; the service computes the leaf.
  const terms = { limits: [{ currency: "EUR", max_amount: "30.00", max_total: "100.00", period: "day" }], valid_until: "2027-12-31T00:00:00Z" };
  const enrolment = { identity_commitment: members[0], mandate: terms };
  await call("createGroup", "A budgeted group", "POST", "/v1/groups", { body: { group_id: "budgeted", budget: true } });
  await call("enrolBudgetMember", "Enrolled with zkagent mandate JSON", "POST", "/v1/groups/budgeted/enrolments", { body: enrolment });
  await call("enrolBudgetMember", "Identity enrolled before", "POST", "/v1/groups/budgeted/enrolments", { body: enrolment });
  await call("enrolBudgetMember", "Invalid field", "POST", "/v1/groups/budgeted/enrolments", {
    body: { identity_commitment: members[1], mandate: { limits: [{ currency: "EUR", max_amount: "30.00" }] } },
  });
  await call("enrolBudgetMember", "Group not budgeted", "POST", "/v1/groups/household/enrolments", { body: enrolment });
  await call("enrolBudgetMember", "Group not found", "POST", "/v1/groups/nobody/enrolments", { body: enrolment });
  await call("enrolBudgetMember", "Group owned by another key", "POST", "/v1/groups/budgeted/enrolments", { key: limited, body: enrolment });
  await call("addGroupMembers", "Budgeted group", "POST", "/v1/groups/budgeted/members", { body: { identity_commitments: ["7"] } });
  await bodyFailures("enrolBudgetMember", "POST", "/v1/groups/budgeted/enrolments");
  await authFailures("enrolBudgetMember", "POST", "/v1/groups/budgeted/enrolments", enrolment);
  // Budget spends (issue 40): a merchant key paid at a registered origin asks the budgeted group for a spend.
  const merchant = await createKey(store, clock, "shop-a", 0);
  await store.setOrigins(merchant.record.id, ["https://shop-a.example"]);
  const spend = (origin: string) => ({
    group_id: "budgeted",
    action: "purchase",
    context: { amount: "20.00", currency: "EUR", "@request": { origin, method: "POST", path: "/checkout" } },
  });
  await call("requestChallenge", "A budget challenge", "POST", "/v1/verify/challenge", { key: merchant.key, body: spend("https://shop-a.example") });
  await call("requestChallenge", "Origin not registered for this key", "POST", "/v1/verify/challenge", {
    key: merchant.key,
    body: spend("https://shop-b.example"),
  });
  await call("requestChallenge", "Key has no registered origin", "POST", "/v1/verify/challenge", { body: spend("https://shop-a.example") });
  const notes = await call("listBudgetNotes", "Notes and checkpoints", "GET", "/v1/groups/budgeted/notes", { key: null });
  await call("listBudgetNotes", "Not modified", "GET", "/v1/groups/budgeted/notes", {
    key: null,
    headers: { "if-none-match": `"${notes.body.size}-${notes.body.checkpoints.at(-1).sequence}"` },
  });
  await call("listBudgetNotes", "Invalid field", "GET", "/v1/groups/budgeted/notes?offset=0", { key: null });
  await call("listBudgetNotes", "Group not found", "GET", "/v1/groups/nobody/notes", { key: null });
  await call("listBudgetNotes", "Group not budgeted", "GET", "/v1/groups/household/notes", { key: null });
  const notesLimited = wrap(createApp({ ...deps, limits: { membersReadsPerMinute: 1 } }));
  await call("listBudgetNotes", "Notes and checkpoints", "GET", "/v1/groups/budgeted/notes", { key: null, app: notesLimited });
  await call("listBudgetNotes", "Too many reads of group members", "GET", "/v1/groups/budgeted/notes", { key: null, app: notesLimited });
  await call("listBudgetNotes", "Service unavailable", "GET", "/v1/groups/budgeted/notes", { key: null, app: unavailable });
  await call("listBudgetNotes", "Internal server error", "GET", "/v1/groups/budgeted/notes", { key: null, app: broken });
  await call("setGroupMandate", "Set", "PUT", "/v1/groups/household/mandate", { body: { actions: ["purchase"] } });
  await call("setGroupMandate", "Invalid field", "PUT", "/v1/groups/household/mandate", { body: { max_totl: "1" } });
  await call("setGroupMandate", "Group not found", "PUT", "/v1/groups/nobody/mandate", { body: mandate });
  await call("setGroupMandate", "Group owned by another key", "PUT", "/v1/groups/household/mandate", { key: limited, body: mandate });
  await bodyFailures("setGroupMandate", "PUT", "/v1/groups/household/mandate", false);
  await authFailures("setGroupMandate", "PUT", "/v1/groups/household/mandate", mandate);
  await call("removeGroupMandate", "Removed", "DELETE", "/v1/groups/household/mandate");
  await call("removeGroupMandate", "Group not found", "DELETE", "/v1/groups/nobody/mandate");
  await call("removeGroupMandate", "Group owned by another key", "DELETE", "/v1/groups/household/mandate", { key: limited });
  await authFailures("removeGroupMandate", "DELETE", "/v1/groups/household/mandate");

  // Circuits: public, and their artifacts immutable (If-None-Match → 304, which has no body to record).
  const circuitPath = `/v1/circuits/${SHIPPED_CIRCUIT_ID}`;
  await call("listCircuits", "The circuits", "GET", "/v1/circuits", { key: null });
  await call("listCircuits", "Service unavailable", "GET", "/v1/circuits", { key: null, app: unavailable });
  await call("listCircuits", "Internal server error", "GET", "/v1/circuits", { key: null, app: broken });
  await call("getCircuit", "The shipped circuit", "GET", circuitPath, { key: null });
  const artifacts = {
    vk: ["getCircuitVerificationKey", "The verification key"],
    zkey: ["getCircuitZkey", "The zkey"],
    wasm: ["getCircuitWasm", "The wasm"],
    transcript: ["getCircuitTranscript", "The ceremony's transcript"],
  } as const;
  const unknownCircuit = "/v1/circuits/agent_identity-0000000000000000";
  for (const [operationId, path] of [["getCircuit", ""], ...Object.entries(artifacts).map(([kind, [id]]) => [id, `/${kind}`])] as const) {
    await call(operationId, "Circuit not found", "GET", `${unknownCircuit}${path}`, { key: null });
    await call(operationId, "Circuit not served", "GET", `${notServed}${path}`, { key: null });
    await call(operationId, "Service unavailable", "GET", `${circuitPath}${path}`, { key: null, app: unavailable });
    await call(operationId, "Internal server error", "GET", `${circuitPath}${path}`, { key: null, app: broken });
  }
  for (const [kind, [operationId, name]] of Object.entries(artifacts)) {
    const response = await app.handle(new Request(`http://localhost${circuitPath}/${kind}`));
    await call(operationId, name, "GET", `${circuitPath}/${kind}`, { key: null });
    await call(operationId, "Not modified", "GET", `${circuitPath}/${kind}`, { key: null, headers: { "if-none-match": response.headers.get("etag")! } });
  }

  // The flow's webhook deliveries, and the endpoint's deletion.
  const deliveries = (await call("listWebhookDeliveries", "Deliveries", "GET", "/v1/webhook-deliveries?limit=2")).body as {
    deliveries: { event_id: string }[];
  };
  await call("listWebhookDeliveries", "Invalid field", "GET", "/v1/webhook-deliveries?state=lost");
  await authFailures("listWebhookDeliveries", "GET", "/v1/webhook-deliveries");
  const eventPath = `/v1/webhook-deliveries/${deliveries.deliveries[0]!.event_id}/redeliver`;
  await call("redeliverWebhookEvent", "Scheduled", "POST", eventPath);
  await call("redeliverWebhookEvent", "Webhook event not found", "POST", "/v1/webhook-deliveries/msg_00000000000000000000000000000000/redeliver");
  await authFailures("redeliverWebhookEvent", "POST", eventPath);
  await authFailures("deleteWebhook", "DELETE", `/v1/webhooks/${hook.id}`);
  await call("deleteWebhook", "Deleted", "DELETE", `/v1/webhooks/${hook.id}`);
  await call("deleteWebhook", "Webhook not found", "DELETE", `/v1/webhooks/${hook.id}`);

  // The key, the key set, operations.
  await call("readUsage", "Usage", "GET", "/v1/usage");
  await authFailures("readUsage", "GET", "/v1/usage");
  await call("getReceiptKeys", "The key set", "GET", "/.well-known/jwks.json", { key: null });
  await call("getReceiptKeys", "Service unavailable", "GET", "/.well-known/jwks.json", { key: null, app: unavailable });
  await call("getReceiptKeys", "Internal server error", "GET", "/.well-known/jwks.json", { key: null, app: broken });
  await call("health", "Alive", "GET", "/health", { key: null });
  await call("ready", "Ready", "GET", "/ready", { key: null });
  await call("ready", "Not ready", "GET", "/ready", { key: null, app: unavailable });
  const guarded = wrap(createApp({ ...deps, metricsToken: "a-metrics-token-of-16+" }));
  await call("metrics", "Metrics token required", "GET", "/metrics", { key: null, app: guarded });
  await call("metrics", "Metrics", "GET", "/metrics", { key: null, app: guarded, headers: { authorization: "Bearer a-metrics-token-of-16+" } });
  await call("metrics", "Service unavailable", "GET", "/metrics", { key: null, app: unavailable });
  await call("metrics", "Internal server error", "GET", "/metrics", { key: null, app: broken });
  await store.close();
  return examples;
}

if (import.meta.main) {
  const examples = await recordExamples();
  // The Prometheus text is long and says nothing the description does not: one example line is enough.
  const metrics = examples.metrics?.["200"];
  if (metrics) for (const name of Object.keys(metrics)) metrics[name] = String(metrics[name]).split("\n").slice(0, 3).join("\n");
  await Bun.write(EXAMPLES_PATH, `${JSON.stringify({ $comment: "Generated by scripts/api-examples.ts; do not edit.", ...examples }, null, 2)}\n`);
  console.log(`wrote ${EXAMPLES_PATH}`);
}
