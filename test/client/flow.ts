// An integrator's flow, written only against the client generated from the
// OpenAPI document (openapi-typescript types in ./generated/, made by
// test/contract/client.test.ts, and openapi-fetch): register an agent with a
// mandate, request a challenge, look up the circuit it names (the public
// circuits list and the circuit itself), submit its proof, read the status, change
// the mandate, see a refused proof, fetch the receipt keys and the usage.
// It must compile under tsc --strict (./tsconfig.json) with no casts, no
// `any` and no `unknown` in this file: every type comes from the document.
// The proof failure is told apart by its `error` text, as a client would.
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/api";

type Agent = components["schemas"]["Agent"];
type Session = components["schemas"]["Session"];
type Usage = components["schemas"]["Usage"];
type Jwks = components["schemas"]["Jwks"];
type Circuit = components["schemas"]["Circuit"];
type Reason = components["schemas"]["VerificationFailed"]["reason"];
type Detail = components["schemas"]["VerificationFailed"]["detail"];

export interface FlowOptions {
  baseUrl: string;
  apiKey: string;
  /** How requests travel: the test routes them to app.handle. */
  fetch: (request: Request) => Promise<Response>;
  agent: { agentId: string; identityCommitment: string; signingKey: string };
  /** The agent's side: a proof for a nonce, an action and a context. */
  prove: (nonce: string, action: string, context: { amount: number; currency: string; merchant: string }) => Promise<string>;
}

export interface FlowResult {
  registered: Agent;
  /** The circuit the challenge named (GET /v1/circuits/{id}), and whether the list (GET /v1/circuits) calls it active. */
  circuit: Circuit;
  circuitListedActive: boolean;
  verifiedConfidence: number;
  receipt: string | null;
  session: Session;
  mandateActions: string[];
  refused: { reason: Reason; detail: Detail; receipt: string | null };
  jwks: Jwks;
  usage: Usage;
}

/** The error text of a failed call, for the thrown message. */
const failure = (step: string, status: number, error: { error: string } | undefined) => new Error(`${step}: ${status} ${error?.error ?? ""}`);

export async function runFlow(options: FlowOptions): Promise<FlowResult> {
  const client = createClient<paths>({ baseUrl: options.baseUrl, fetch: options.fetch, headers: { "X-Api-Key": options.apiKey } });
  const { agentId, identityCommitment, signingKey } = options.agent;
  const context = { amount: 20, currency: "EUR", merchant: "shop-a" };

  const registration = await client.POST("/v1/agents", {
    body: {
      agent_id: agentId,
      identity_commitment: identityCommitment,
      signing_key: signingKey,
      mandate: { actions: ["purchase", "refund"], limits: [{ action: "purchase", currency: "EUR", max_amount: "50.00", max_total: "100.00", period: "day" }] },
    },
  });
  if (!registration.data) throw failure("register", registration.response.status, registration.error);

  const challenge = await client.POST("/v1/verify/challenge", {
    params: { header: { "Idempotency-Key": `flow-${agentId}` } },
    body: { agent_id: agentId, action: "purchase", context },
  });
  if (!challenge.data) throw failure("challenge", challenge.response.status, challenge.error);

  // The circuit the challenge names is the one the agent must prove with: public, no API key needed.
  const circuitId = challenge.data.circuit_id;
  const circuits = await client.GET("/v1/circuits", { headers: { "X-Api-Key": null } });
  if (!circuits.data) throw failure("circuits", circuits.response.status, circuits.error);
  const circuit = await client.GET("/v1/circuits/{id}", { params: { path: { id: circuitId } } });
  if (!circuit.data) throw failure("circuit", circuit.response.status, circuit.error);
  if (circuit.data.state === "retired") throw new Error(`circuit ${circuitId} is retired`);

  const proof = await options.prove(challenge.data.nonce, "purchase", context);
  const verified = await client.POST("/v1/verify/proof", { body: { challenge_id: challenge.data.challenge_id, proof } });
  if (!verified.data) throw failure("proof", verified.response.status, verified.error);

  const status = await client.GET("/v1/verify/status/{sessionId}", { params: { path: { sessionId: verified.data.session_id } } });
  if (!status.data) throw failure("status", status.response.status, status.error);

  // Purchases only from now on: a refund is refused by the mandate, after the proof verified.
  const narrowed = await client.PUT("/v1/agents/{agentId}/mandate", { params: { path: { agentId } }, body: { actions: ["purchase"] } });
  if (!narrowed.data) throw failure("mandate", narrowed.response.status, narrowed.error);
  const refund = await client.POST("/v1/verify/challenge", { body: { agent_id: agentId, action: "refund", context } });
  if (!refund.data) throw failure("refund challenge", refund.response.status, refund.error);
  const refundProof = await options.prove(refund.data.nonce, "refund", context);
  const refused = await client.POST("/v1/verify/proof", { body: { challenge_id: refund.data.challenge_id, proof: refundProof } });
  if (refused.data) throw new Error("refund: verified, though the mandate allows purchases only");
  // The 400 bodies carry `verified: false` except the field errors; `error` then names which one it is.
  const body = refused.error;
  if (!("verified" in body) || body.error !== "Proof verification failed") throw failure("refund", refused.response.status, body);

  const jwks = await client.GET("/.well-known/jwks.json");
  if (!jwks.data) throw failure("jwks", jwks.response.status, jwks.error);
  const usage = await client.GET("/v1/usage");
  if (!usage.data) throw failure("usage", usage.response.status, usage.error);

  return {
    registered: registration.data,
    circuit: circuit.data,
    circuitListedActive: circuits.data.active === circuitId && circuits.data.circuits.some((listed) => listed.id === circuitId),
    verifiedConfidence: verified.data.confidence,
    receipt: verified.data.receipt,
    session: status.data,
    mandateActions: narrowed.data.mandate?.actions ?? [],
    refused: { reason: body.reason, detail: body.detail, receipt: body.receipt },
    jwks: jwks.data,
    usage: usage.data,
  };
}
