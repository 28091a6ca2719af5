// Rows (snake_case columns, as both dialects return them) to records.
import type { ClaimedWebhookDelivery, WebhookDeliveryRecord, WebhookDeliveryState, WebhookEndpointRecord } from "./records";
import { int, intOrNull } from "../connection/columns";

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
