// The guard as Express middleware, in a real Express app on a loopback port,
// in front of the real zkagent app (in process): the agent's fetch is served,
// the handler reads the body it was verified with in req.body and the session
// in res.locals.zkagent; a body parser mounted in front is refused loudly.
import { expect, setDefaultTimeout, test } from "bun:test";
import type { AddressInfo } from "node:net";
import express from "express";
import { zkagentFetch } from "../../src/agent";
import { BodyAlreadyReadError, zkagent, zkagentSession } from "../../src/merchant/adapters/express";
import { bodyFields } from "../../src/merchant";
import { merchantService } from "./support";

// The first proof of the process builds the prover (seconds on a loaded machine).
setDefaultTimeout(30_000);

const service = () => merchantService(bodyFields(["amount", "currency"]));

/** The app on a loopback port for the length of `run`, closed after it (a server left listening stalled bun test's next test). */
async function serving(app: express.Express, run: (url: string) => Promise<void>): Promise<void> {
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const order = { amount: "20", currency: "EUR", note: "left of the context" };
const post = (body: string) => ({ method: "POST", headers: { "content-type": "application/json" }, body });

test("no proof: 401 with the challenge header, the handler never runs; the agent's fetch: 201, req.body the JSON sent, the session in res.locals; a parser after the middleware leaves req.body alone", async () => {
  const { identity, options } = await service();
  let served = 0;
  const app = express();
  app.post("/orders", zkagent(options), (req, res) => {
    served++;
    const session = zkagentSession(res);
    res.status(201).json({ agent: session.agent_id, context: session.context, body: req.body, target: session.request.target });
  });
  app.post("/parsed-after", zkagent(options), express.json(), (req, res) => {
    res.status(201).json({ body: req.body });
  });
  await serving(app, async (shop) => {
    const plain = await fetch(`${shop}/orders`, post(JSON.stringify(order)));
    expect(plain.status).toBe(401);
    expect(plain.headers.get("www-authenticate")).toBe('ZKAgent realm="zkagent"');
    expect((await plain.json()).reason).toBe("claim_required");
    expect(served).toBe(0);

    const agentFetch = zkagentFetch({ identity });
    const response = await agentFetch(`${shop}/orders?ref=7`, post(JSON.stringify(order)));
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ agent: "bot", context: { amount: "20", currency: "EUR" }, body: order, target: "/orders?ref=7" });
    expect(served).toBe(1);

    const after = await agentFetch(`${shop}/parsed-after`, post(JSON.stringify(order)));
    expect(after.status).toBe(201);
    expect(await after.json()).toEqual({ body: order });
  });
});

test("a body parser in front of the middleware: the request is not served, next() gets an error naming the problem", async () => {
  const { options } = await service();
  const errors: unknown[] = [];
  let served = 0;
  const app = express();
  app.use(express.json());
  app.post("/orders", zkagent(options), (_req, res) => {
    served++;
    res.status(201).end();
  });
  app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    errors.push(error);
    res.status(500).json({ error: "misconfigured" });
  });
  await serving(app, async (shop) => {
    const response = await fetch(`${shop}/orders`, {
      ...post(JSON.stringify(order)),
      headers: { "content-type": "application/json", authorization: 'ZKAgent agent="bot"' },
    });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: "misconfigured" });
    expect(served).toBe(0);
    expect(errors.length).toBe(1);
    expect(errors[0]).toBeInstanceOf(BodyAlreadyReadError);
    const message = (errors[0] as Error).message;
    expect(message).toContain("a body parser such as express.json() is mounted in front of it");
    expect(message).toContain("mount zkagent(...) before any body parser");
  });
});

test("a body over the limit is 413, before the service is asked", async () => {
  const { options } = await service();
  const app = express();
  app.post("/orders", zkagent({ ...options, limit: 64 }), (_req, res) => {
    res.status(201).end();
  });
  await serving(app, async (shop) => {
    const large = await fetch(`${shop}/orders`, {
      ...post(JSON.stringify({ amount: "1", currency: "EUR", note: "x".repeat(100) })),
      headers: { "content-type": "application/json", authorization: 'ZKAgent agent="bot"' },
    });
    expect(large.status).toBe(413);
    expect((await large.json()).reason).toBe("body_too_large");
  });
});

test("zkagentSession in a handler the middleware is not in front of throws, rather than serve an unverified request", () => {
  expect(() => zkagentSession({ locals: {} })).toThrow("mount zkagent(...) in front of this handler");
});
