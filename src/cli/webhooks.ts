// `zkagent webhooks list|deliveries|redeliver`: the operator's view of every
// key's webhook endpoints and deliveries, in the store every node shares
// (docs/webhooks.md). Secrets are never printed.
import type { Config } from "../config";
import { openStore } from "../store";
import type { WebhookDeliveryState } from "../store/webhooks/records";
import { eventsOf } from "../webhooks/events";
import { nonNegativeInteger, parse, printJson, say, shown, UsageError } from "./args";

export const webhooksHelp = `zkagent webhooks — webhook endpoints and deliveries (uses DATABASE_URL, also while the server runs)

  zkagent webhooks list [--key ID] [--json]
      Every endpoint (of one key with --key): id, key, URL, events. Never the secret.
  zkagent webhooks deliveries [--key ID] [--state pending|delivered|failed] [--event MSG_ID] [--limit N] [--json]
      Deliveries, newest first (default limit 100): event, endpoint, state, attempts, last error.
  zkagent webhooks redeliver MSG_ID [--json]
      Sends the event again to every current endpoint of its key: pending, due now, a new
      round of retries, the same webhook-id. Exit 1 when nothing was rescheduled.`;

const STATES = ["pending", "delivered", "failed"];
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function webhooksCommand(argv: string[], config: Config): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { json: { type: "boolean" }, key: { type: "string" }, state: { type: "string" }, event: { type: "string" }, limit: { type: "string" } },
    true,
  );
  const [sub, eventId] = positionals;
  if (values.help || !sub) {
    say(webhooksHelp);
    return values.help ? 0 : 2;
  }
  if (sub !== "list" && sub !== "deliveries" && sub !== "redeliver") throw new UsageError(`unknown webhooks command "${shown(sub)}"`);
  if (sub === "redeliver" && !eventId) throw new UsageError("webhooks redeliver needs the event id (msg_…)");
  if (values.state !== undefined && !STATES.includes(values.state)) throw new UsageError(`--state must be one of ${STATES.join(", ")}`);
  const limit = nonNegativeInteger(values.limit, "--limit") ?? 100;
  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  try {
    switch (sub) {
      case "list": {
        const endpoints = (await store.listWebhookEndpoints(values.key ?? null)).map((e) => ({
          id: e.id,
          key_id: e.keyId,
          url: e.url,
          events: eventsOf(e.events),
          created_at: iso(e.createdAt),
          previous_secret_expires_at: e.previousUntil !== null && e.previousUntil > Date.now() ? iso(e.previousUntil) : null,
        }));
        if (values.json) printJson({ webhooks: endpoints });
        else if (endpoints.length === 0) say("No webhook endpoints.");
        else for (const e of endpoints) say(`${e.id}  key ${e.key_id}  ${e.url}  ${e.events.join(",")}`);
        return 0;
      }
      case "deliveries": {
        const rows = await store.listWebhookDeliveries({
          keyId: values.key,
          state: values.state as WebhookDeliveryState | undefined,
          eventId: values.event,
          limit: Math.max(1, limit),
        });
        const deliveries = rows.map((d) => ({
          event_id: d.eventId,
          webhook_id: d.endpointId,
          key_id: d.keyId,
          type: d.type,
          session_id: d.sessionId,
          state: d.state,
          attempts: d.attempts,
          next_attempt_at: d.state === "pending" ? iso(d.nextAt) : null,
          last_status: d.lastStatus,
          last_error: d.lastError,
          created_at: iso(d.createdAt),
          finished_at: iso(d.finishedAt),
        }));
        if (values.json) printJson({ deliveries });
        else if (deliveries.length === 0) say("No deliveries.");
        else
          for (const d of deliveries)
            say(
              `${d.event_id}  ${d.webhook_id}  ${d.type}  ${d.state.padEnd(9)}  attempts ${d.attempts}${d.last_error ? `  last: ${shown(d.last_error)}` : ""}`,
            );
        return 0;
      }
      case "redeliver": {
        const count = await store.redeliverWebhook(eventId!, null, Date.now());
        if (values.json) printJson({ event_id: eventId, redelivered: count });
        else
          say(
            count > 0
              ? `${shown(eventId!)}: ${count} deliveries pending again.`
              : `${shown(eventId!)}: no delivery to a current endpoint (or one is in flight).`,
          );
        return count > 0 ? 0 : 1;
      }
    }
  } finally {
    await store.close();
  }
}
