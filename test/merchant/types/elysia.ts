// The Elysia adapter's types (types.test.ts compiles this under strict tsc):
// the session follows `accept`. Each `@ts-expect-error` line must stay an error.
import { Elysia } from "elysia";
import type { SignatureSession, VerifiedSession } from "zkagent/merchant";
import { zkagent } from "zkagent/merchant/elysia";

const service = { url: "https://zkagent.example.com", apiKey: "zka_x" };

export const orders = new Elysia().use(zkagent({ ...service, action: "purchase" })).post("/orders", ({ zkagent }) => {
  const proved: VerifiedSession = zkagent;
  // @ts-expect-error a proof route never yields a signature's session
  const signed: SignatureSession = zkagent;
  return { agent: proved.agent_id, signed };
});

export const catalog = new Elysia()
  .use(zkagent({ ...service, action: "browse", accept: ["web-bot-auth", "zkagent"], signatures: { signatureAgents: [] } }))
  .get("/catalog", ({ zkagent }) => {
    // @ts-expect-error narrow on scheme before reading a proof's context
    zkagent.context;
    return zkagent.scheme === "web-bot-auth" ? { operator: zkagent.signature_agent } : { agent: zkagent.agent_id };
  });

export const feed = new Elysia()
  .use(zkagent({ ...service, action: "browse", accept: ["web-bot-auth"], signatures: { signatureAgents: [] } }))
  .get("/feed", ({ zkagent }) => {
    const signed: SignatureSession = zkagent;
    // @ts-expect-error a signature session carries no confidence
    zkagent.confidence;
    return { keyid: signed.keyid };
  });

// @ts-expect-error a scheme that does not exist
zkagent({ ...service, action: "browse", accept: ["basic"] });
