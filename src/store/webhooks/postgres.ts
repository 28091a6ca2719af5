// Webhook endpoints and deliveries on PostgreSQL (the decision writes the events: src/store/decisions/).
import type { SQL } from "bun";
import { outboxWritten } from "../../webhooks/wake";
import { hasNul, mapUnreachable } from "../connection/postgres";
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

export function postgresWebhooks(sql: SQL): WebhooksStore {
  const store: WebhooksStore = {
    async createWebhookEndpoint(endpoint: WebhookEndpointRecord): Promise<void> {
      const { id, keyId, url, events, secret, previousSecret, previousUntil, createdAt } = endpoint;
      await sql`
      INSERT INTO webhook_endpoints (id, key_id, url, events, secret, previous_secret, previous_until, created_at, deleted_at)
      VALUES (${id}, ${keyId}, ${url}, ${events}, ${secret}, ${previousSecret}, ${previousUntil}, ${createdAt}, NULL)`;
    },

    async listWebhookEndpoints(keyId: string | null): Promise<WebhookEndpointRecord[]> {
      if (keyId !== null && hasNul(keyId)) return [];
      const rows =
        keyId === null
          ? await sql`SELECT * FROM webhook_endpoints WHERE deleted_at IS NULL ORDER BY created_at, id`
          : await sql`SELECT * FROM webhook_endpoints WHERE deleted_at IS NULL AND key_id = ${keyId} ORDER BY created_at, id`;
      return rows.map(toWebhookEndpoint);
    },

    async getWebhookEndpoint(keyId: string, id: string): Promise<WebhookEndpointRecord | null> {
      if (hasNul(keyId, id)) return null;
      const [row] = await sql`SELECT * FROM webhook_endpoints WHERE id = ${id} AND key_id = ${keyId} AND deleted_at IS NULL`;
      return row ? toWebhookEndpoint(row) : null;
    },

    async deleteWebhookEndpoint(keyId: string, id: string, at: number): Promise<boolean> {
      if (hasNul(keyId, id)) return false;
      return sql.begin(async (tx) => {
        const deleted = await tx`UPDATE webhook_endpoints SET deleted_at = ${at} WHERE id = ${id} AND key_id = ${keyId} AND deleted_at IS NULL RETURNING id`;
        if (deleted.length === 0) return false;
        await tx`
        UPDATE webhook_deliveries SET state = 'failed', last_error = 'endpoint deleted', finished_at = ${at}, lease_token = NULL, lease_until = NULL
        WHERE endpoint_id = ${id} AND state = 'pending'`;
        return true;
      });
    },

    async rotateWebhookSecret(keyId: string, id: string, secret: string, previousUntil: number): Promise<WebhookEndpointRecord | null> {
      if (hasNul(keyId, id)) return null;
      const [row] = await sql`
      UPDATE webhook_endpoints SET previous_secret = secret, previous_until = ${previousUntil}, secret = ${secret}
      WHERE id = ${id} AND key_id = ${keyId} AND deleted_at IS NULL RETURNING *`;
      return row ? toWebhookEndpoint(row) : null;
    },

    async claimWebhookDeliveries(claim: WebhookClaim): Promise<ClaimedWebhookDelivery[]> {
      const { token, now, until, limit, perEndpoint } = claim;
      // Endpoint ids are whep_<hex>: a comma never occurs in one.
      const skip = claim.skipEndpoints.join(",");
      // A conditional UPDATE: nodes claiming at once may pick the same rows, but
      // the second waits for the first's row lock and re-checks the lease
      // condition against the committed row, so each row goes to one claimant.
      await sql`
      WITH due AS (
        SELECT event_id, endpoint_id, next_at, row_number() OVER (PARTITION BY endpoint_id ORDER BY next_at, event_id) AS place
        FROM webhook_deliveries
        WHERE state = 'pending' AND next_at <= ${now} AND (lease_until IS NULL OR lease_until < ${now})
          AND NOT (endpoint_id = ANY (string_to_array(${skip}::text, ','))))
      UPDATE webhook_deliveries SET lease_token = ${token}, lease_until = ${until}
      WHERE (event_id, endpoint_id) IN (SELECT event_id, endpoint_id FROM due WHERE place <= ${perEndpoint} ORDER BY next_at LIMIT ${limit})
        AND state = 'pending' AND (lease_until IS NULL OR lease_until < ${now})`;
      const rows = await sql`
      SELECT d.*, ev.type, ev.session_id, ev.payload, e.url AS ep_url, e.events AS ep_events, e.secret AS ep_secret,
             e.previous_secret AS ep_previous_secret, e.previous_until AS ep_previous_until, e.created_at AS ep_created_at, e.deleted_at AS ep_deleted_at
      FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.lease_token = ${token} AND d.state = 'pending'`;
      return rows.map(toClaimedWebhookDelivery);
    },

    async finishWebhookDelivery(eventId: string, endpointId: string, token: string, outcome: WebhookAttemptOutcome): Promise<boolean> {
      const { state, attempts, nextAt, status, error, at } = outcome;
      const finishedAt = state === "pending" ? null : at;
      const payload = outcome.payload ?? null;
      // One statement: the attempt, and the body when the event has none yet.
      const rows = await sql`
      WITH finished AS (
        UPDATE webhook_deliveries SET state = ${state}, attempts = ${attempts}, next_at = ${nextAt}, last_status = ${status}, last_error = ${error},
          finished_at = ${finishedAt}, lease_token = NULL, lease_until = NULL
        WHERE event_id = ${eventId} AND endpoint_id = ${endpointId} AND lease_token = ${token} AND state = 'pending' RETURNING event_id),
      fixed AS (
        UPDATE webhook_events SET payload = ${payload}
        WHERE id IN (SELECT event_id FROM finished) AND payload IS NULL AND ${payload}::text IS NOT NULL)
      SELECT event_id FROM finished`;
      return rows.length === 1;
    },

    async listWebhookDeliveries(query: WebhookDeliveryQuery): Promise<WebhookDeliveryRecord[]> {
      const { keyId = null, state = null, eventId = null, limit } = query;
      if (hasNul(keyId ?? "", state ?? "", eventId ?? "")) return [];
      const rows = await sql`
      SELECT d.*, ev.type, ev.session_id FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
      WHERE (${keyId}::text IS NULL OR d.key_id = ${keyId}) AND (${state}::text IS NULL OR d.state = ${state}) AND (${eventId}::text IS NULL OR d.event_id = ${eventId})
      ORDER BY d.created_at DESC, d.event_id LIMIT ${limit}`;
      return rows.map(toWebhookDelivery);
    },

    async redeliverWebhook(eventId: string, keyId: string | null, now: number): Promise<number> {
      if (hasNul(eventId, keyId ?? "")) return 0;
      const rows = await sql`
      UPDATE webhook_deliveries SET state = 'pending', attempts = 0, next_at = ${now}, created_at = ${now}, finished_at = NULL, lease_token = NULL, lease_until = NULL
      WHERE event_id = ${eventId} AND (${keyId}::text IS NULL OR key_id = ${keyId})
        AND endpoint_id IN (SELECT id FROM webhook_endpoints WHERE deleted_at IS NULL)
        AND NOT (state = 'pending' AND lease_until IS NOT NULL AND lease_until >= ${now})
      RETURNING event_id`;
      if (rows.length > 0) outboxWritten();
      return rows.length;
    },

    async oldestPendingWebhook(): Promise<number | null> {
      const [row] = await sql`SELECT min(created_at) AS at FROM webhook_deliveries WHERE state = 'pending'`;
      return row.at === null ? null : Number(row.at);
    },

    async purgeWebhooks(before: number): Promise<number> {
      return sql.begin(async (tx) => {
        const removed = (await tx`DELETE FROM webhook_deliveries WHERE state <> 'pending' AND finished_at < ${before}`).count;
        await tx`DELETE FROM webhook_events e WHERE created_at < ${before} AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`;
        return removed;
      });
    },
  };
  return mapUnreachable(store);
}
