// A small shop whose orders only verified agents may place (README, "Protect
// an endpoint"). POST /orders {amount, currency} is guarded by the ZKAgent
// middleware: the agent proves the action "purchase" for exactly this
// amount, currency and merchant, and the order is made from what the proof
// bound (the session's context), never from the body read again.
//
//   PORT=8080 ZKAGENT_URL=http://127.0.0.1:3000 ZKAGENT_API_KEY=zka_… bun examples/shop/server.ts
import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { BadRequest } from "zkagent/merchant";
import { zkagent } from "zkagent/merchant/hono";

const MERCHANT = "example-shop";

function env(name: string): string {
  const value = process.env[name];
  if (!value) {
    process.stderr.write(`shop: ${name} is required\n`);
    process.exit(2);
  }
  return value;
}

export function createShop(options: { zkagentUrl: string; apiKey: string }) {
  const app = new Hono();
  app.post(
    "/orders",
    zkagent({
      url: options.zkagentUrl,
      apiKey: options.apiKey,
      realm: MERCHANT,
      action: "purchase",
      context: ({ body }) => {
        const order = typeof body === "object" && body !== null ? (body as Record<string, unknown>) : {};
        const { amount, currency } = order;
        if (!(typeof amount === "number" && Number.isFinite(amount) && amount > 0) && !(typeof amount === "string" && /^\d+(\.\d+)?$/.test(amount))) {
          throw new BadRequest("amount must be a positive number or decimal string");
        }
        if (typeof currency !== "string" || !/^[A-Z]{3}$/.test(currency)) throw new BadRequest("currency must be an ISO 4217 code such as EUR");
        return { amount, currency, merchant: MERCHANT };
      },
    }),
    (c) => {
      const session = c.get("zkagent");
      const { amount, currency } = session.context;
      return c.json({ order_id: `ord_${randomUUID()}`, agent_id: session.agent_id, amount, currency, receipt: session.receipt }, 201);
    },
  );
  app.notFound((c) => c.json({ error: "Not found" }, 404));
  app.onError((_, c) => c.json({ error: "Internal server error" }, 500));
  return app;
}

if (import.meta.main) {
  const app = createShop({ zkagentUrl: env("ZKAGENT_URL"), apiKey: env("ZKAGENT_API_KEY") });
  const server = Bun.serve({ port: Number(process.env.PORT ?? 8080), hostname: process.env.HOST ?? "127.0.0.1", fetch: app.fetch });
  process.stdout.write(`shop listening on http://${server.hostname}:${server.port}\n`);
  const stop = () => server.stop().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
