// Webhook endpoints and deliveries of the calling key (issue 27). A key sees
// and changes only its own: another key's endpoint id answers as unknown.
// The URL is checked here in full (its form, then what its host resolves
// to), and again by the worker at every delivery.
import type { Clock } from "../../clock";
import { ApiError, invalidField } from "../../errors";
import type { ApiKeyRecord } from "../../store/keys/records";
import type { WebhookDeliveryRecord, WebhookDeliveryState, WebhookEndpointRecord, WebhooksStore } from "../../store/webhooks/records";
import { type EventType, eventsColumn, eventsOf } from "../../webhooks/events";
import { checkTarget, type Resolver } from "../../webhooks/policy";
import { newSecret } from "../../webhooks/signing";
import type { WebhookRequest } from "./model";

export interface WebhookDeps {
  store: WebhooksStore;
  clock: Clock;
  /** WEBHOOKS_ALLOW_PRIVATE and the resolver (tests pass their own). */
  webhooks?: { allowPrivate?: boolean; resolve?: Resolver };
}

/** How long the secret before a rotation keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;
const MAX_ENDPOINTS_PER_KEY = 20;

const iso = (ms: number) => new Date(ms).toISOString();

export const endpointView = (endpoint: WebhookEndpointRecord, now: number) => ({
  id: endpoint.id,
  url: endpoint.url,
  events: eventsOf(endpoint.events),
  created_at: iso(endpoint.createdAt),
  previous_secret_expires_at: endpoint.previousUntil !== null && endpoint.previousUntil > now ? iso(endpoint.previousUntil) : null,
});

export const deliveryView = (delivery: WebhookDeliveryRecord) => ({
  event_id: delivery.eventId,
  webhook_id: delivery.endpointId,
  type: delivery.type as EventType,
  session_id: delivery.sessionId,
  state: delivery.state,
  attempts: delivery.attempts,
  next_attempt_at: delivery.state === "pending" ? iso(delivery.nextAt) : null,
  last_status: delivery.lastStatus,
  last_error: delivery.lastError,
  created_at: iso(delivery.createdAt),
  finished_at: delivery.finishedAt === null ? null : iso(delivery.finishedAt),
});

export async function createWebhook(deps: WebhookDeps, key: ApiKeyRecord, input: WebhookRequest) {
  const checked = await checkTarget(input.url, deps.webhooks?.allowPrivate ?? false, deps.webhooks?.resolve);
  if (!checked.ok) throw invalidField("url", checked.problem);
  const existing = await deps.store.listWebhookEndpoints(key.id);
  if (existing.length >= MAX_ENDPOINTS_PER_KEY)
    throw invalidField("url", `a key may have at most ${MAX_ENDPOINTS_PER_KEY} webhook endpoints; delete one first`);
  const now = deps.clock.now();
  const endpoint: WebhookEndpointRecord = {
    id: `whep_${crypto.randomUUID().replaceAll("-", "")}`,
    keyId: key.id,
    url: input.url,
    events: eventsColumn(input.events as EventType[]),
    secret: newSecret(),
    previousSecret: null,
    previousUntil: null,
    createdAt: now,
    deletedAt: null,
  };
  await deps.store.createWebhookEndpoint(endpoint);
  return { ...endpointView(endpoint, now), secret: endpoint.secret };
}

export async function listWebhooks(deps: WebhookDeps, key: ApiKeyRecord) {
  const now = deps.clock.now();
  return { webhooks: (await deps.store.listWebhookEndpoints(key.id)).map((e) => endpointView(e, now)) };
}

async function ownEndpoint(deps: WebhookDeps, key: ApiKeyRecord, id: string | null): Promise<WebhookEndpointRecord> {
  const endpoint = id === null ? null : await deps.store.getWebhookEndpoint(key.id, id);
  if (!endpoint) throw new ApiError("webhook_not_found");
  return endpoint;
}

export async function getWebhook(deps: WebhookDeps, key: ApiKeyRecord, id: string | null) {
  return endpointView(await ownEndpoint(deps, key, id), deps.clock.now());
}

export async function deleteWebhook(deps: WebhookDeps, key: ApiKeyRecord, id: string | null) {
  const endpoint = await ownEndpoint(deps, key, id);
  if (!(await deps.store.deleteWebhookEndpoint(key.id, endpoint.id, deps.clock.now()))) throw new ApiError("webhook_not_found");
  return endpointView(endpoint, deps.clock.now());
}

export async function rotateWebhookSecret(deps: WebhookDeps, key: ApiKeyRecord, id: string | null) {
  const endpoint = await ownEndpoint(deps, key, id);
  const until = deps.clock.now() + ROTATION_OVERLAP_MS;
  const rotated = await deps.store.rotateWebhookSecret(key.id, endpoint.id, newSecret(), until);
  if (!rotated) throw new ApiError("webhook_not_found");
  return { id: rotated.id, secret: rotated.secret, previous_secret_expires_at: iso(until) };
}

const STATES: readonly string[] = ["pending", "delivered", "failed"];

export async function listDeliveries(deps: WebhookDeps, key: ApiKeyRecord, query: { state?: string; limit?: string }) {
  if (query.state !== undefined && !STATES.includes(query.state)) throw invalidField("state", `must be one of ${STATES.join(", ")}`);
  const limit = query.limit === undefined ? 100 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalidField("limit", "must be an integer from 1 to 1000");
  const rows = await deps.store.listWebhookDeliveries({ keyId: key.id, state: query.state as WebhookDeliveryState | undefined, limit });
  return { deliveries: rows.map(deliveryView) };
}

export async function redeliver(deps: WebhookDeps, key: ApiKeyRecord, eventId: string | null) {
  const count = eventId === null ? 0 : await deps.store.redeliverWebhook(eventId, key.id, deps.clock.now());
  if (count === 0) throw new ApiError("webhook_event_not_found");
  return { event_id: eventId!, redelivered: count };
}
