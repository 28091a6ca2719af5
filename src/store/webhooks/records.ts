// Webhook endpoints and the outbox's deliveries (issue 27); the decision writes the events (src/store/decisions/).
// The types the domain sees and what it asks of this aggregate; sqlite.ts and
// postgres.ts beside this file answer it. Times are Unix milliseconds.

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

export interface WebhooksStore {
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
}
