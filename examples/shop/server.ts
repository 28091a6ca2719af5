// A small shop whose orders only verified agents may place (README, "Protect
// an endpoint"). POST /orders {amount, currency} is guarded by the ZKAgent
// middleware: the agent proves the action "purchase" for exactly this
// amount, currency and merchant, and the order is made from what the proof
// bound (the session's context), never from the body read again.
//
// GET /catalog admits any of the three modes (docs/http-auth.md): a signed
// agent of an operator listed in ZKAGENT_SIGNATURE_AGENTS (Web Bot Auth) or
// one of the shop's registered agents signing with its registered key, an
// agent's proof, or a group member's; it answers the products and who was
// verified. Browsing needs no intent; ordering does, so POST /orders still
// takes a proof only.
//
//   PORT=8080 ZKAGENT_URL=http://127.0.0.1:3000 ZKAGENT_API_KEY=zka_… \
//   ZKAGENT_SIGNATURE_AGENTS=https://agents.operator.example bun examples/shop/server.ts
//
// ZKAGENT_SIGNATURE_AGENTS: the operators' origins, comma-separated.
// ZKAGENT_ALLOW_INSECURE_LOOPBACK=1: read their directories over http from
// this machine (development, tests).
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

const PRODUCTS = [
  { sku: "tea-001", name: "Sencha, 100 g", price: "12.50", currency: "EUR" },
  { sku: "cup-002", name: "Stoneware cup", price: "18.00", currency: "EUR" },
];

export interface ShopOptions {
  zkagentUrl: string;
  apiKey: string;
  /** The operators whose signed agents may browse the catalog. */
  signatureAgents?: string[];
  allowInsecureLoopback?: boolean;
}

export function createShop(options: ShopOptions) {
  const app = new Hono();
  app.get(
    "/catalog",
    zkagent({
      url: options.zkagentUrl,
      apiKey: options.apiKey,
      realm: MERCHANT,
      action: "browse",
      accept: ["web-bot-auth", "zkagent", "group"],
      // The shop's own registered agents may browse by their signature too (their keyid looked up at the service).
      signatures: { signatureAgents: options.signatureAgents ?? [], allowInsecureLoopback: options.allowInsecureLoopback, registeredAgents: true },
    }),
    (c) => {
      const session = c.get("zkagent");
      // Who was verified: the operator (and its key) for a signature; the agent, or the group and pseudonym, for a proof.
      const verified =
        "signature_agent" in session
          ? {
              scheme: session.scheme,
              signature_agent: session.signature_agent,
              keyid: session.keyid,
              ...(session.agent_id ? { agent_id: session.agent_id } : {}),
            }
          : session.group_id !== undefined
            ? { scheme: "group", group_id: session.group_id, pseudonym: session.pseudonym }
            : { scheme: "zkagent", agent_id: session.agent_id };
      return c.json({ products: PRODUCTS, verified });
    },
  );
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
  let app: ReturnType<typeof createShop>;
  try {
    app = createShop({
      zkagentUrl: env("ZKAGENT_URL"),
      apiKey: env("ZKAGENT_API_KEY"),
      signatureAgents: (process.env.ZKAGENT_SIGNATURE_AGENTS ?? "")
        .split(",")
        .map((origin) => origin.trim())
        .filter((origin) => origin !== ""),
      allowInsecureLoopback: ["1", "true"].includes(process.env.ZKAGENT_ALLOW_INSECURE_LOOPBACK ?? ""),
    });
  } catch (error) {
    process.stderr.write(`shop: ${(error as Error).message}\n`);
    process.exit(2);
  }
  const server = Bun.serve({ port: Number(process.env.PORT ?? 8080), hostname: process.env.HOST ?? "127.0.0.1", fetch: app.fetch });
  process.stdout.write(`shop listening on http://${server.hostname}:${server.port}\n`);
  const stop = () => server.stop().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
