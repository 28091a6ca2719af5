// The Express adapter's types as an adopter meets them (types.test.ts
// compiles this file under strict tsc, TypeScript 5 and 7): the session
// follows the route's `accept`, as with Hono and Elysia. Each
// `@ts-expect-error` line must stay an error: the test fails when it compiles.
import express from "express";
import type { SignatureSession, VerifiedSession } from "zkagent/merchant";
import { zkagent, zkagentSession } from "zkagent/merchant/express";

const service = { url: "https://zkagent.example.com", apiKey: "zka_x" };
const app = express();

// docs/http-auth.md's route: signed agents beside proofs.
const catalog = zkagent({
  ...service,
  action: "browse",
  accept: ["web-bot-auth", "zkagent"],
  signatures: { signatureAgents: ["https://agents.operator.example"] },
});
app.get("/catalog", catalog, (_req, res) => {
  const session = catalog.session(res);
  // @ts-expect-error a signed agent's session has no context: narrow on scheme first
  session.context;
  if (session.scheme === "web-bot-auth") {
    const signed: SignatureSession = session;
    res.json({ operator: signed.signature_agent });
    return;
  }
  const proved: VerifiedSession = session;
  res.json({ agent: proved.agent_id, amount: proved.context.amount });
});

// The default: proofs only, a VerifiedSession with no narrowing.
const orders = zkagent({ ...service, action: "purchase" });
app.post("/orders", orders, (_req, res) => {
  const session = orders.session(res);
  const agent: string = session.agent_id;
  const group: string | undefined = session.group_id;
  // @ts-expect-error a proof route never yields a signature's session
  const signed: SignatureSession = session;
  res.status(201).json({ agent, group, signed });
});

// Signatures only: a SignatureSession, no narrowing.
const signedOnly = zkagent({ ...service, action: "browse", accept: ["web-bot-auth"], signatures: { signatureAgents: [] } });
app.get("/feed", signedOnly, (_req, res) => {
  const operator: string | null = signedOnly.session(res).signature_agent;
  // @ts-expect-error a signature session carries no proof's confidence
  signedOnly.session(res).confidence;
  res.json({ operator });
});

// The free function: proofs by default, or the route's schemes named.
app.get("/either", catalog, (_req, res) => {
  const either = zkagentSession<"web-bot-auth" | "zkagent">(res);
  const proof: VerifiedSession = zkagentSession(res);
  // @ts-expect-error a union of both is not a proof's session
  const notProof: VerifiedSession = either;
  res.json({ either, proof, notProof });
});

// @ts-expect-error a scheme that does not exist
zkagent({ ...service, action: "browse", accept: ["basic"] });

app.use(express.json({ verify: (req, _res, buf) => Object.assign(req, { rawBody: buf }) }));
