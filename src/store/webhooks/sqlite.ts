// Webhook endpoints and deliveries on SQLite (the decision writes the events: src/store/decisions/).
import { outboxWritten } from "../../webhooks/wake";
import type { SqliteDb } from "../connection/sqlite";
import { toClaimedWebhookDelivery, toWebhookDelivery, toWebhookEndpoint } from "./rows";
import type {
  ClaimedWebhookDelivery,
  WebhookAttemptOutcome,
  WebhookClaim,
  WebhookDeliveryQuery,
  WebhookDeliveryRecord,
  WebhookEndpointRecord,
  WebhooksStore,
} from "./records";

export function sqliteWebhooks({ db, immediate }: SqliteDb): WebhooksStore {
  const q = {
    insertEndpoint: db.query(
      `INSERT INTO webhook_endpoints (id, key_id, url, events, secret, previous_secret, previous_until, created_at, deleted_at)
       VALUES ($id, $keyId, $url, $events, $secret, $previousSecret, $previousUntil, $createdAt, NULL)`,
    ),
    listEndpoints: db.query("SELECT * FROM webhook_endpoints WHERE deleted_at IS NULL AND ($keyId IS NULL OR key_id = $keyId) ORDER BY created_at, id"),
    getEndpoint: db.query("SELECT * FROM webhook_endpoints WHERE id = ? AND key_id = ? AND deleted_at IS NULL"),
    deleteEndpoint: db.query("UPDATE webhook_endpoints SET deleted_at = ? WHERE id = ? AND key_id = ? AND deleted_at IS NULL"),
    failEndpointDeliveries: db.query(
      "UPDATE webhook_deliveries SET state = 'failed', last_error = 'endpoint deleted', finished_at = ?, lease_token = NULL, lease_until = NULL WHERE endpoint_id = ? AND state = 'pending'",
    ),
    rotateSecret: db.query(
      `UPDATE webhook_endpoints SET previous_secret = secret, previous_until = $previousUntil, secret = $secret
       WHERE id = $id AND key_id = $keyId AND deleted_at IS NULL RETURNING *`,
    ),
    claimDeliveries: db.query(
      `WITH due AS (
         SELECT event_id, endpoint_id, next_at, row_number() OVER (PARTITION BY endpoint_id ORDER BY next_at, event_id) AS place
         FROM webhook_deliveries
         WHERE state = 'pending' AND next_at <= $now AND (lease_until IS NULL OR lease_until < $now)
           AND endpoint_id NOT IN (SELECT value FROM json_each($skip)))
       UPDATE webhook_deliveries SET lease_token = $token, lease_until = $until
       WHERE (event_id, endpoint_id) IN (SELECT event_id, endpoint_id FROM due WHERE place <= $perEndpoint ORDER BY next_at LIMIT $limit)
         AND state = 'pending' AND (lease_until IS NULL OR lease_until < $now)`,
    ),
    claimed: db.query(
      `SELECT d.*, ev.type, ev.session_id, ev.payload, e.url AS ep_url, e.events AS ep_events, e.secret AS ep_secret,
              e.previous_secret AS ep_previous_secret, e.previous_until AS ep_previous_until, e.created_at AS ep_created_at, e.deleted_at AS ep_deleted_at
       FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id JOIN webhook_endpoints e ON e.id = d.endpoint_id
       WHERE d.lease_token = ? AND d.state = 'pending'`,
    ),
    setPayload: db.query("UPDATE webhook_events SET payload = ? WHERE id = ? AND payload IS NULL"),
    finishDelivery: db.query(
      `UPDATE webhook_deliveries SET state = $state, attempts = $attempts, next_at = $nextAt, last_status = $status, last_error = $error,
         finished_at = CASE WHEN $state = 'pending' THEN NULL ELSE $at END, lease_token = NULL, lease_until = NULL
       WHERE event_id = $eventId AND endpoint_id = $endpointId AND lease_token = $token AND state = 'pending'`,
    ),
    listDeliveries: db.query(
      `SELECT d.*, ev.type, ev.session_id FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
       WHERE ($keyId IS NULL OR d.key_id = $keyId) AND ($state IS NULL OR d.state = $state) AND ($eventId IS NULL OR d.event_id = $eventId)
       ORDER BY d.created_at DESC, d.event_id LIMIT $limit`,
    ),
    redeliver: db.query(
      `UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_at = $now, created_at = $now, finished_at = NULL, lease_token = NULL, lease_until = NULL
       WHERE event_id = $eventId AND ($keyId IS NULL OR key_id = $keyId)
         AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE deleted_at IS NULL)
         AND NOT (state = 'pending' AND lease_until IS NOT NULL AND lease_until >= $now)`,
    ),
    oldestPending: db.query("SELECT min(created_at) AS at FROM webhook_deliveries WHERE state = 'pending'"),
    purgeDeliveries: db.query("DELETE FROM webhook_deliveries WHERE state <> 'pending' AND finished_at < ?"),
    purgeEvents: db.query("DELETE FROM webhook_events WHERE created_at < ? AND id NOT IN (SELECT event_id FROM webhook_deliveries)"),
  };

  return {
    async createWebhookEndpoint(endpoint: WebhookEndpointRecord): Promise<void> {
      const { id, keyId, url, events, secret, previousSecret, previousUntil, createdAt } = endpoint;
      await immediate("create webhook endpoint", () => q.insertEndpoint.run({ id, keyId, url, events, secret, previousSecret, previousUntil, createdAt }));
    },

    async listWebhookEndpoints(keyId: string | null): Promise<WebhookEndpointRecord[]> {
      return q.listEndpoints.all({ keyId }).map(toWebhookEndpoint);
    },

    async getWebhookEndpoint(keyId: string, id: string): Promise<WebhookEndpointRecord | null> {
      const row = q.getEndpoint.get(id, keyId);
      return row ? toWebhookEndpoint(row) : null;
    },

    async deleteWebhookEndpoint(keyId: string, id: string, at: number): Promise<boolean> {
      return immediate("delete webhook endpoint", () => {
        if (q.deleteEndpoint.run(at, id, keyId).changes !== 1) return false;
        q.failEndpointDeliveries.run(at, id);
        return true;
      });
    },

    async rotateWebhookSecret(keyId: string, id: string, secret: string, previousUntil: number): Promise<WebhookEndpointRecord | null> {
      const row = await immediate("rotate webhook secret", () => q.rotateSecret.get({ id, keyId, secret, previousUntil }));
      return row ? toWebhookEndpoint(row) : null;
    },

    async claimWebhookDeliveries(claim: WebhookClaim): Promise<ClaimedWebhookDelivery[]> {
      const { token, now, until, limit, perEndpoint } = claim;
      return immediate("claim webhook deliveries", () => {
        q.claimDeliveries.run({ token, now, until, limit, perEndpoint, skip: JSON.stringify(claim.skipEndpoints) });
        return q.claimed.all(token).map(toClaimedWebhookDelivery);
      });
    },

    async finishWebhookDelivery(eventId: string, endpointId: string, token: string, outcome: WebhookAttemptOutcome): Promise<boolean> {
      const { payload, ...fields } = outcome;
      return immediate("record webhook attempt", () => {
        if (q.finishDelivery.run({ eventId, endpointId, token, ...fields }).changes !== 1) return false;
        if (payload !== undefined) q.setPayload.run(payload, eventId);
        return true;
      });
    },

    async listWebhookDeliveries(query: WebhookDeliveryQuery): Promise<WebhookDeliveryRecord[]> {
      const { keyId = null, state = null, eventId = null, limit } = query;
      return q.listDeliveries.all({ keyId, state, eventId, limit }).map(toWebhookDelivery);
    },

    async redeliverWebhook(eventId: string, keyId: string | null, now: number): Promise<number> {
      const changed = await immediate("redeliver webhook", () => q.redeliver.run({ eventId, keyId, now }).changes);
      if (changed > 0) outboxWritten();
      return changed;
    },

    async purgeWebhooks(before: number): Promise<number> {
      return immediate("purge webhooks", () => {
        const removed = q.purgeDeliveries.run(before).changes;
        q.purgeEvents.run(before);
        return removed;
      });
    },

    async oldestPendingWebhook(): Promise<number | null> {
      const row = q.oldestPending.get() as { at: number | null };
      return row.at === null ? null : Number(row.at);
    },
  };
}
