// The Hono adapter's types (types.test.ts compiles this under strict tsc):
// the session follows `accept`. Each `@ts-expect-error` line must stay an error.
import { Hono } from "hono";
import type { BudgetSession, GroupSession, SignatureSession, VerifiedSession } from "zkagent/merchant";
import { zkagent } from "zkagent/merchant/hono";

const service = { url: "https://zkagent.example.com", apiKey: "zka_x" };

export const shop = new Hono()
  .post("/orders", zkagent({ ...service, action: "purchase" }), (c) => {
    const session = c.get("zkagent");
    const proved: VerifiedSession = session;
    // @ts-expect-error a proof route never yields a signature's session
    const signed: SignatureSession = session;
    if (session.scheme === "group") {
      const member: GroupSession = session;
      return c.json({ pseudonym: member.pseudonym, signed });
    }
    return c.json({ agent: proved.agent_id });
  })
  .get("/catalog", zkagent({ ...service, action: "browse", accept: ["web-bot-auth", "zkagent"], signatures: { signatureAgents: [] } }), (c) => {
    const session = c.get("zkagent");
    // @ts-expect-error narrow on scheme before reading a proof's context
    session.context;
    return c.json(session.scheme === "web-bot-auth" ? { operator: session.signature_agent } : { agent: session.agent_id, context: session.context });
  })
  .post("/pay", zkagent({ ...service, action: "purchase", accept: ["budget", "zkagent"], budgets: ["family-budget"] }), (c) => {
    const session = c.get("zkagent");
    // @ts-expect-error narrow on scheme before reading what a budget spend paid
    session.amount;
    // @ts-expect-error a route without "group" never yields a group's session
    const member: GroupSession = session;
    if (session.scheme !== "budget") return c.json({ agent: session.agent_id, member });
    const paid: BudgetSession = session;
    return c.json({ amount: paid.amount, currency: paid.currency, nullifier: paid.spend.nullifier });
  })
  .post("/budget-only", zkagent({ ...service, action: "purchase", accept: ["budget"], budgets: ["family-budget"] }), (c) => {
    // A route that accepts budget spends only: the session is one, no narrowing.
    const paid: BudgetSession = c.get("zkagent");
    return c.json({ amount: paid.amount, group: c.get("zkagent").group_id });
  })
  .get("/feed", zkagent({ ...service, action: "browse", accept: ["web-bot-auth"], signatures: { signatureAgents: [] } }), (c) => {
    const signed: SignatureSession = c.get("zkagent");
    // @ts-expect-error a signature session carries no receipt
    c.get("zkagent").receipt;
    return c.json({ keyid: signed.keyid });
  });

// @ts-expect-error a scheme that does not exist
zkagent({ ...service, action: "browse", accept: ["basic"] });
