// What an adopter writes, through the package's exports: a merchant handler
// behind the Hono and Elysia adapters and the core guard, and an agent's
// call. Compiled under tsc --strict by types.test.ts, which also checks that
// this file holds no cast, any or unknown: the types must carry it alone.
import { Elysia } from "elysia";
import { Hono } from "hono";
import { type FetchIdentity, fetch as agentFetch, zkagentFetch } from "zkagent/agent";
import { BadRequest, type GuardOptions, type SignatureSession, type VerifiedSession, zkagentGuard } from "zkagent/merchant";
import { zkagent as elysiaGuard } from "zkagent/merchant/elysia";
import { zkagent as honoGuard } from "zkagent/merchant/hono";

const options: GuardOptions = {
  url: "https://zkagent.example.com",
  apiKey: "zka_0000000000000000_key",
  action: "purchase",
  context: ({ body }) => {
    if (typeof body !== "object" || body === null || !("amount" in body) || typeof body.amount !== "string") throw new BadRequest("amount is required");
    return { amount: body.amount, merchant: "shop" };
  },
};

export const hono = new Hono().post("/orders", honoGuard(options), (c) => {
  const session: VerifiedSession = c.get("zkagent");
  const confidence: number = session.confidence;
  return c.json({ agent: session.agent_id, confidence, receipt: session.receipt }, 201);
});

export const elysia = new Elysia().use(elysiaGuard(options)).post("/orders", ({ zkagent }) => {
  const agent: string = zkagent.agent_id;
  const target: string = zkagent.request.target;
  return { agent, target };
});

const guard = zkagentGuard(options);
export async function handle(request: Request): Promise<Response> {
  const result = await guard.verify(request);
  if (!result.ok) return result.response;
  return Response.json({ agent: result.session.agent_id, pseudonym: result.session.pseudonym ?? null });
}

const identity: FetchIdentity = { agent_id: "shopper", secret: "12345", signing_secret: "c2VjcmV0" };
export async function placeOrder(): Promise<number> {
  const response = await agentFetch("https://shop.example.com/orders", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ amount: "20" }),
    zkagent: { identity, trustedServices: ["https://zkagent.example.com"] },
  });
  const send = zkagentFetch({ identity, approve: (challenge) => challenge.action === "purchase" });
  const again = await send("https://shop.example.com/orders");
  return response.status + again.status;
}

// The README's two merchant lines.
import { bodyFields } from "zkagent/merchant";
const guardReadme = honoGuard({ url: "https://zkagent.example.com", apiKey: "zka_x", action: "purchase", context: bodyFields(["amount", "currency"]) });
export const readme = new Hono().post("/orders", guardReadme, (c) =>
  c.json({ agent: c.get("zkagent").agent_id, amount: c.get("zkagent").context.amount }, 201),
);

// A route that admits signed agents (Web Bot Auth) beside proofs: the session is either, told apart by its members.
export const catalog = new Hono().get(
  "/catalog",
  honoGuard({
    url: "https://zkagent.example.com",
    apiKey: "zka_x",
    action: "browse",
    accept: ["web-bot-auth", "zkagent", "group"],
    signatures: { signatureAgents: ["https://agents.operator.example"] },
  }),
  (c) => {
    const session = c.get("zkagent");
    if ("signature_agent" in session) {
      const signed: SignatureSession = session;
      return c.json({ operator: signed.signature_agent, keyid: signed.keyid });
    }
    const proved: VerifiedSession = session;
    return c.json({ agent: proved.agent_id });
  },
);

// A signature-only route: its session is a SignatureSession, with no narrowing.
const signaturesOnly = zkagentGuard({
  url: "https://zkagent.example.com",
  apiKey: "zka_x",
  action: "browse",
  accept: ["web-bot-auth"],
  signatures: { signatureAgents: [] },
});
export async function operatorOf(request: Request): Promise<string | null> {
  const result = await signaturesOnly.verify(request);
  return result.ok ? result.session.signature_agent : null;
}

// The agent signing every request for its operator.
export const signedFetch = zkagentFetch({ identity, signatureAgent: "https://agents.operator.example" });
