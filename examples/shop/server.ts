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
//
//   PORT=8080 ZKAGENT_URL=http://127.0.0.1:3000 ZKAGENT_API_KEY=zka_… bun examples/shop/server.ts
//
// ZKAGENT_NONCE_STORE=redis://host:6379 (or valkey, rediss://) or
// postgres://user:pass@host/db: where the signatures' nonces are remembered,
// shared by every process of the shop (without it, each process keeps its
// own, and a signature replayed to another process would pass there). The
// shop stays strict: a signature without a nonce is refused.
//
// Optional: ZKAGENT_GROUPS=household,team-b (the groups whose members may
// order; none: group claims are refused), ZKAGENT_BUDGET_GROUPS=family-budget
// (the budgeted groups whose members may pay for an order from their budget:
// the spend is the order's amount and currency; none: budget claims are
// refused) and ZKAGENT_ORIGIN=https://shop.example
// (the shop's public origin, which challenges bind; set it behind a proxy
// that terminates TLS or rewrites Host).
import { randomUUID } from "node:crypto";
import { RedisClient, SQL } from "bun";
import { Hono } from "hono";
import { BadRequest, type NonceStore, PostgresNonceStore, RedisNonceStore } from "zkagent/merchant";
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
  /** The groups whose members may order (and browse). */
  groups?: string[];
  /** The budgeted groups whose members may pay for an order from their budget. */
  budgets?: string[];
  /** The shop's public origin. */
  origin?: string;
  /** The operators whose signed agents may browse the catalog. */
  signatureAgents?: string[];
  /** Read the operators' directories over http from this machine (development, tests). */
  allowInsecureLoopback?: boolean;
  /** Where accepted nonces are remembered (shared by the shop's processes); default the process's memory. */
  nonces?: NonceStore;
}

/** The nonce store ZKAGENT_NONCE_STORE names: Redis/Valkey or PostgreSQL, on Bun's own clients; undefined when unset. Throws on another scheme. */
export function nonceStoreFromUrl(url: string | undefined): NonceStore | undefined {
  if (!url) return undefined;
  const scheme = url.slice(0, url.indexOf(":"));
  if (["redis", "rediss", "valkey", "valkeys"].includes(scheme)) return new RedisNonceStore(new RedisClient(url.replace(/^valkey/, "redis")));
  if (scheme === "postgres" || scheme === "postgresql") return new PostgresNonceStore(new SQL(url, { max: 4 }));
  throw new TypeError(`ZKAGENT_NONCE_STORE must be a redis://, rediss://, valkey:// or postgres:// URL, not ${scheme}:`);
}

const list = (text: string | undefined): string[] =>
  (text ?? "")
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

/** The shop's options from its environment (`env` is process.env when run). */
export function shopOptionsFromEnv(env: Record<string, string | undefined>, required: (name: string) => string): ShopOptions {
  return {
    zkagentUrl: required("ZKAGENT_URL"),
    apiKey: required("ZKAGENT_API_KEY"),
    groups: list(env.ZKAGENT_GROUPS),
    budgets: list(env.ZKAGENT_BUDGET_GROUPS),
    signatureAgents: list(env.ZKAGENT_SIGNATURE_AGENTS),
    allowInsecureLoopback: ["1", "true"].includes(env.ZKAGENT_ALLOW_INSECURE_LOOPBACK ?? ""),
    ...(env.ZKAGENT_ORIGIN ? { origin: env.ZKAGENT_ORIGIN } : {}),
    ...(env.ZKAGENT_NONCE_STORE ? { nonces: nonceStoreFromUrl(env.ZKAGENT_NONCE_STORE) } : {}),
  };
}

/**
 * What the shop says it accepts when it starts: which agents, groups and
 * operators get in, and where each comes from, so a merchant sees a missing
 * ZKAGENT_GROUPS or ZKAGENT_SIGNATURE_AGENTS before the first refused order.
 */
export function acceptanceLines(options: ShopOptions): string[] {
  const groups = options.groups ?? [];
  const operators = options.signatureAgents ?? [];
  const budgets = options.budgets ?? [];
  const members = groups.length > 0 ? `members of ${groups.join(", ")}` : "no group's members (ZKAGENT_GROUPS unset)";
  const spenders = budgets.length > 0 ? `a member of ${budgets.join(", ")}` : "no budgeted group's member (ZKAGENT_BUDGET_GROUPS unset)";
  return [
    `  zkagent service: ${options.zkagentUrl} (agents and groups registered under its API key)`,
    `  POST /orders: a proof of "purchase" for the order's amount and currency from a registered agent, or from ${members}`,
    `  POST /orders: a spend of the order's amount and currency from the budget of ${spenders}`,
    `  GET /catalog: the same proofs (action "browse"), a registered agent's signature, or ${operators.length > 0 ? `a signed agent of ${operators.join(", ")}` : "no operator's signed agents (ZKAGENT_SIGNATURE_AGENTS unset)"}`,
    `  challenges bind ${options.origin ? `the origin ${options.origin} (ZKAGENT_ORIGIN)` : "the origin each request arrives with (set ZKAGENT_ORIGIN behind a proxy)"}`,
  ];
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
      groups: options.groups ?? [],
      ...(options.origin ? { origin: options.origin } : {}),
      // The shop's own registered agents may browse by their signature too (their keyid looked up at the service).
      signatures: {
        signatureAgents: options.signatureAgents ?? [],
        allowInsecureLoopback: options.allowInsecureLoopback,
        registeredAgents: true,
        ...(options.nonces ? { nonces: options.nonces } : {}),
      },
    }),
    (c) => {
      const session = c.get("zkagent");
      // Who was verified: the operator (and its key) for a signature; the agent, or the group and pseudonym, for a proof.
      const verified =
        session.scheme === "web-bot-auth"
          ? {
              scheme: session.scheme,
              signature_agent: session.signature_agent,
              keyid: session.keyid,
              ...(session.agent_id ? { agent_id: session.agent_id } : {}),
            }
          : session.scheme === "group"
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
      // A budget spend pays for the order: the context's amount and currency are what the member's budget is charged.
      accept: ["zkagent", "group", "budget"],
      groups: options.groups ?? [],
      budgets: options.budgets ?? [],
      ...(options.origin ? { origin: options.origin } : {}),
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
      // Who ordered: a registered agent by its id, a group's member by its pseudonym and the group; a budget spend by no one,
      // only the group whose member paid and the spend's one-time values.
      const who =
        session.scheme === "budget"
          ? { group_id: session.group_id, spend: session.spend }
          : session.scheme === "group"
            ? { agent_id: session.agent_id, group_id: session.group_id }
            : { agent_id: session.agent_id };
      return c.json({ order_id: `ord_${randomUUID()}`, scheme: session.scheme, ...who, amount, currency, receipt: session.receipt }, 201);
    },
  );
  app.notFound((c) => c.json({ error: "Not found" }, 404));
  app.onError((_, c) => c.json({ error: "Internal server error" }, 500));
  return app;
}

if (import.meta.main) {
  let app: ReturnType<typeof createShop>;
  let options: ShopOptions;
  try {
    options = shopOptionsFromEnv(process.env, env);
    app = createShop(options);
  } catch (error) {
    // The guard refuses options it cannot work with (an origin that is not http(s)).
    process.stderr.write(`shop: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
  const server = Bun.serve({ port: Number(process.env.PORT ?? 8080), hostname: process.env.HOST ?? "127.0.0.1", fetch: app.fetch });
  // One write: whoever waits for the first line gets the whole announcement.
  process.stdout.write(`shop listening on http://${server.hostname}:${server.port}\n${acceptanceLines(options).join("\n")}\n`);
  const stop = () => server.stop().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
