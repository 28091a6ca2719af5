// What the webhook tests share: an in-process service with a delivery
// worker, a verifier double that decides by the proof text (these tests are
// about what happens after a decision, not about Groth16: the verifier's own
// suites cover that against snarkjs), and the three kinds of decision.
import { expect } from "bun:test";
import type { Clock } from "../../src/clock";
import { silentLogger } from "../../src/log";
import type { Receipts } from "../../src/receipts/service";
import { ReceiptSigner } from "../../src/receipts/signer";
import type { Store } from "../../src/store/interface";
import type { Verifier } from "../../src/verifier/types";
import type { BackoffSchedule } from "../../src/webhooks/backoff";
import { DeliveryWorker } from "../../src/webhooks/worker";
import type { Receiver } from "./receiver";
import { createHarness, type Harness } from "../support/harness";
import { identity } from "../support/proofs";

export const VALID = "valid-proof";
export const WRONG = "wrong-proof";

/** Accepts exactly VALID: a decision double, so 200 decisions take milliseconds, not 200 proofs. */
export const decidingVerifier: Verifier = { verify: (proof) => (proof === VALID ? { ok: true } : { ok: false, reason: "proof_rejected" }) };

export interface Service {
  h: Harness;
  worker: DeliveryWorker;
  receipts: Receipts;
}

export async function startService(
  store: Store,
  clock: Clock,
  options: { timeoutMs?: number; pollMs?: number; schedule?: BackoffSchedule; allowPrivate?: boolean } = {},
): Promise<Service> {
  const receipts: Receipts = { signer: new ReceiptSigner(store), issuer: "http://localhost" };
  const allowPrivate = options.allowPrivate ?? true;
  const h = await createHarness(store, { verifier: decidingVerifier, clock, receipts, webhooks: { allowPrivate } });
  const worker = new DeliveryWorker({
    store,
    clock,
    logger: silentLogger,
    receipts,
    allowPrivate,
    timeoutMs: options.timeoutMs ?? 2000,
    pollMs: options.pollMs ?? 100,
    schedule: options.schedule,
  });
  worker.start();
  return { h, worker, receipts };
}

export async function registerEndpoint(h: Harness, key: string, url: string, events = ["session.verified", "session.failed"]) {
  const created = await h.call("POST", "/v1/webhooks", { key, body: { url, events } });
  expect(created.status).toBe(201);
  return created.body as { id: string; secret: string };
}

/** Two agents under the key: "free" (no mandate) and "capped" (purchases up to 10.00 EUR). */
export async function registerAgents(h: Harness, key: string) {
  const agent = await identity("webhooks");
  for (const [agentId, mandate] of [
    ["free", undefined],
    ["capped", { limits: [{ action: "purchase", currency: "EUR", max_amount: "10.00" }] }],
  ] as const) {
    const body: Record<string, unknown> = { agent_id: agentId, identity_commitment: agent.identity_commitment };
    if (mandate) body.mandate = mandate;
    expect((await h.call("POST", "/v1/agents", { key, body })).status).toBe(201);
  }
}

/**
 * A new key with an endpoint at the receiver (its secret handed to the
 * receiver, which checks every signature) and the two agents of
 * registerAgents: what a delivery test starts from.
 */
export async function keyWithEndpoint(h: Harness, name: string, receiver: Receiver): Promise<string> {
  const key = await h.newKey(name);
  receiver.secrets.push((await registerEndpoint(h, key, receiver.url)).secret);
  await registerAgents(h, key);
  return key;
}

export type Kind = "verified" | "failed" | "refused";

export interface Answer {
  sessionId: string;
  kind: Kind;
  status: number;
  receipt: string | null;
  /** Date.now() when the proof answer arrived. */
  at: number;
}

/** One challenge decided the way `kind` says: verified, failed (a wrong proof), or refused by the mandate (20 EUR over a 10 EUR cap). */
export async function decideOne(h: Harness, key: string, kind: Kind): Promise<Answer> {
  const agentId = kind === "refused" ? "capped" : "free";
  const challenge = await h.call("POST", "/v1/verify/challenge", {
    key,
    body: { agent_id: agentId, action: "purchase", context: { amount: 20, currency: "EUR", merchant: "shop-a" } },
  });
  expect(challenge.status).toBe(200);
  const sessionId = challenge.body.challenge_id as string;
  const answer = await h.call("POST", "/v1/verify/proof", { key, body: { challenge_id: sessionId, proof: kind === "failed" ? WRONG : VALID } });
  return { sessionId, kind, status: answer.status, receipt: answer.body.receipt ?? null, at: Date.now() };
}

export const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};
