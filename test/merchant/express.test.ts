// The guard as Express middleware, in a real Express app on a loopback port,
// in front of the real zkagent app (in process): the agent's fetch is served,
// the handler reads the body it was verified with in req.body and the session
// in res.locals.zkagent; a body parser mounted in front is refused loudly.
import { expect, setDefaultTimeout, test } from "bun:test";
import type { AddressInfo } from "node:net";
import express from "express";
import { zkagentFetch } from "../../src/agent";
import { BodyAlreadyReadError, zkagent, zkagentSession } from "../../src/merchant/adapters/express";
import { bodyFields, type GuardProblem } from "../../src/merchant";
import { merchantService, rawRequest } from "./support";

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

test("a global express.json() in front with no raw copy: 400 body_already_read naming the fix, onError told, the handler never runs (was 500 BodyAlreadyReadError)", async () => {
  const { options } = await service();
  const problems: GuardProblem[] = [];
  let served = 0;
  const app = express();
  app.use(express.json());
  app.post("/orders", zkagent({ ...options, onError: (problem) => problems.push(problem) }), (_req, res) => {
    served++;
    res.status(201).end();
  });
  await serving(app, async (shop) => {
    const response = await fetch(`${shop}/orders`, {
      ...post(JSON.stringify(order)),
      headers: { "content-type": "application/json", authorization: 'ZKAgent agent="bot"' },
    });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body).toMatchObject({ error: "Request body already read", reason: "body_already_read" });
    expect(body.message).toContain("express.json({ verify: (req, _res, buf) => { req.rawBody = buf } })");
    expect(body.message).toContain("mount zkagent(...) before any body parser");
    expect(served).toBe(0);
    const read = problems.filter((p) => p.reason === "body_already_read");
    expect(read.length).toBe(1);
    expect(read[0]!.cause).toBeInstanceOf(BodyAlreadyReadError);
    // A request with no body passes the parser unread: the guard still answers it (401, a claim asked for).
    const plain = await fetch(`${shop}/orders`, { method: "POST" });
    expect(plain.status).toBe(401);
  });
});

test("a global express.json({ verify }) keeping the raw bytes in req.rawBody (the payment-webhook pattern): the agent's order is 201, req.body the parser's; a body changed after the parser is refused", async () => {
  const { identity, options } = await service();
  const app = express();
  app.use(
    express.json({
      verify: (req, _res, buf) => {
        (req as typeof req & { rawBody?: Buffer }).rawBody = buf;
      },
    }),
  );
  const orders = zkagent(options);
  app.post("/orders", orders, (req, res) => {
    const session = orders.session(res);
    res.status(201).json({ agent: session.agent_id, context: session.context, body: req.body });
  });
  await serving(app, async (shop) => {
    const response = await zkagentFetch({ identity })(`${shop}/orders`, post(JSON.stringify(order)));
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ agent: "bot", context: { amount: "20", currency: "EUR" }, body: order });
    // The raw bytes, not the parsed object, are what the guard reads: a duplicate member is refused as the guard's own reading refuses it.
    const duplicated = await fetch(`${shop}/orders`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: 'ZKAgent agent="bot"' },
      body: '{"amount":"20","amount":"2000","currency":"EUR"}',
    });
    expect(duplicated.status).toBe(400);
    expect((await duplicated.json()).message).toContain("member name appears more than once");
  });
});

test("express.raw() in front (the body a Buffer in req.body): the guard reads those bytes, the order is 201 and req.body stays the Buffer", async () => {
  const { identity, options } = await service();
  const app = express();
  app.use(express.raw({ type: "*/*" }));
  const orders = zkagent({ ...options, origin: "http://shop.test" });
  app.post("/orders", orders, (req, res) => {
    res.status(201).json({
      buffer: Buffer.isBuffer(req.body),
      text: Buffer.isBuffer(req.body) ? req.body.toString("utf8") : null,
      amount: orders.session(res).context.amount,
    });
  });
  await serving(app, async (shop) => {
    // The guard binds its configured origin: the agent addresses http://shop.test, delivered to the port.
    const agentFetch = zkagentFetch({ identity, fetch: (request) => fetch(shop + new URL(request.url).pathname, request) });
    const response = await agentFetch("http://shop.test/orders", post(JSON.stringify(order)));
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ buffer: true, text: JSON.stringify(order), amount: "20" });
  });
});

test("an absolute-form request target (POST http://relay.example/orders, Host the shop's) to a shop that answers only its own Host: 400 before any challenge; // too; the honest order still 201", async () => {
  const { harness, identity, options } = await service();
  const app = express();
  let allowed = "";
  // The mitigation docs/http-auth.md gives a shop without `origin`: answer only your own host names.
  app.use((req, res, next) => (req.headers.host === allowed ? next() : res.status(421).json({ error: "Misdirected request" })));
  // In front of every route, so that a target Express would not route to /orders (//relay.example/orders) meets the guard too.
  app.use(zkagent({ ...options, onError: () => {} }));
  app.post("/orders", (_req, res) => {
    res.status(201).json({ session: zkagentSession(res) });
  });
  await serving(app, async (shop) => {
    const port = Number(new URL(shop).port);
    allowed = `127.0.0.1:${port}`;
    const before = (await harness.call("GET", "/v1/usage", { key: options.apiKey })).body;
    for (const target of ["http://relay.example/orders", "https://relay.example/orders", "//relay.example/orders"]) {
      const answered = await rawRequest(
        port,
        `POST ${target} HTTP/1.1\r\nhost: ${allowed}\r\ncontent-type: application/json\r\nauthorization: ZKAgent agent="bot"`,
        JSON.stringify(order),
      );
      // Before: 401 with a challenge binding the origin the client wrote (http://relay.example).
      expect({ target, status: answered.status }).toEqual({ target, status: 400 });
      expect(JSON.parse(answered.body)).toEqual({
        error: "Invalid request",
        reason: "invalid_request",
        message: "the request target must be a path (origin-form, RFC 9112 §3.2.1), not an absolute URL or //authority",
      });
    }
    expect((await harness.call("GET", "/v1/usage", { key: options.apiKey })).body).toEqual(before);
    const honest = await zkagentFetch({ identity })(`${shop}/orders`, post(JSON.stringify(order)));
    expect(honest.status).toBe(201);
    expect((await honest.json()).session.request).toEqual({ method: "POST", origin: shop, target: "/orders" });
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
