import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { readJsonObject } from "../../http/body";
import { describe, JSON_BODY_ERRORS } from "../../http/docs";
import { pathParam } from "../../http/params";
import { validate } from "../../http/validate";
import {
  redeliverResponse,
  webhookCreated,
  webhookDeliveries,
  webhookEndpoint,
  webhookExplanations,
  webhookList,
  webhookRequest,
  webhookRotated,
} from "./model";
import { createWebhook, deleteWebhook, getWebhook, listDeliveries, listWebhooks, redeliver, rotateWebhookSecret } from "./service";

const ID = { id: "The webhook endpoint's id (whep_…)" };

export const webhooks = (deps: AppDeps) =>
  new Elysia({ name: "webhooks" })
    .use(authentication(deps))
    .post(
      "/v1/webhooks",
      async ({ key, request, set }) => {
        const created = await createWebhook(deps, key, validate(webhookRequest, await readJsonObject(request), {}, webhookExplanations));
        set.status = 201;
        return created;
      },
      {
        auth: true,
        parse: "none",
        detail: describe({
          operationId: "createWebhook",
          tag: "Webhooks",
          summary: "Register a webhook endpoint",
          description:
            "Decisions of this key's sessions are POSTed to the URL, signed as Standard Webhooks specifies (docs/webhooks.md). The URL must be https and resolve to public addresses only (unless the operator set WEBHOOKS_ALLOW_PRIVATE=true). The signing secret is in this answer only.",
          body: webhookRequest,
          ok: { status: 201, schema: webhookCreated, description: "Registered; keep the secret" },
          errors: [...JSON_BODY_ERRORS],
        }),
      },
    )
    .get("/v1/webhooks", ({ key }) => listWebhooks(deps, key), {
      auth: true,
      detail: describe({
        operationId: "listWebhooks",
        tag: "Webhooks",
        summary: "The calling key's webhook endpoints",
        ok: { status: 200, schema: webhookList, description: "The endpoints, oldest first (secrets are never shown again)" },
        errors: [],
      }),
    })
    .get("/v1/webhook-deliveries", ({ key, query }) => listDeliveries(deps, key, query as { state?: string; limit?: string }), {
      auth: true,
      detail: describe({
        operationId: "listWebhookDeliveries",
        tag: "Webhooks",
        summary: "The calling key's webhook deliveries",
        description:
          "Newest first. A delivery is `failed` once its retries ran out (after more than 24 hours) or its endpoint was deleted; redeliver it with POST /v1/webhook-deliveries/{eventId}/redeliver.",
        query: {
          state: { description: "Only deliveries in this state", schema: { type: "string", enum: ["pending", "delivered", "failed"] } },
          limit: { description: "At most this many (default 100)", schema: { type: "integer", minimum: 1, maximum: 1000 } },
        },
        ok: { status: 200, schema: webhookDeliveries, description: "The deliveries" },
        errors: ["invalid_request"],
      }),
    })
    .post("/v1/webhook-deliveries/:eventId/redeliver", ({ key, params }) => redeliver(deps, key, pathParam(params.eventId)), {
      auth: true,
      parse: "none",
      detail: describe({
        operationId: "redeliverWebhookEvent",
        tag: "Webhooks",
        summary: "Send an event again",
        description:
          "Makes the event's deliveries to this key's current endpoints pending again, due now, with a new round of retries; the webhook-id stays the event's id.",
        params: { eventId: "The event's id (msg_…), the webhook-id its deliveries carried" },
        ok: { status: 200, schema: redeliverResponse, description: "Scheduled" },
        errors: ["webhook_event_not_found"],
      }),
    })
    .get("/v1/webhooks/:id", ({ key, params }) => getWebhook(deps, key, pathParam(params.id)), {
      auth: true,
      detail: describe({
        operationId: "getWebhook",
        tag: "Webhooks",
        summary: "Read a webhook endpoint",
        params: ID,
        ok: { status: 200, schema: webhookEndpoint, description: "The endpoint" },
        errors: ["webhook_not_found"],
      }),
    })
    .delete("/v1/webhooks/:id", ({ key, params }) => deleteWebhook(deps, key, pathParam(params.id)), {
      auth: true,
      parse: "none",
      detail: describe({
        operationId: "deleteWebhook",
        tag: "Webhooks",
        summary: "Delete a webhook endpoint",
        description: "Nothing more is sent to it; its pending deliveries become failed.",
        params: ID,
        ok: { status: 200, schema: webhookEndpoint, description: "The deleted endpoint" },
        errors: ["webhook_not_found"],
      }),
    })
    .post("/v1/webhooks/:id/rotate-secret", ({ key, params }) => rotateWebhookSecret(deps, key, pathParam(params.id)), {
      auth: true,
      parse: "none",
      detail: describe({
        operationId: "rotateWebhookSecret",
        tag: "Webhooks",
        summary: "Rotate a webhook endpoint's signing secret",
        description:
          "A new secret, shown once. For 24 hours every delivery carries two signatures, by the new and by the previous secret, so receivers can switch at any time in that window.",
        params: ID,
        ok: { status: 200, schema: webhookRotated, description: "The new secret" },
        errors: ["webhook_not_found"],
      }),
    });
