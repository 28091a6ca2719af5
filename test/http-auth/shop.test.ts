// The ZKAgent scheme end to end (issue 26): a real zkagent server and the
// example shop (examples/shop/server.ts) on their own loopback ports; agents
// through the SDK's fetch and through `zkagent fetch`. Every answer read
// through world.observe is recorded: none may be a 5xx.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { answerChallenge, createIdentity, fetch as agentFetch, readChallenge, zkagentFetch, type ZkAgentChallenge } from "../../src/agent";
import { parseAuth } from "../../src/http-auth/scheme";
import { call } from "../multinode/nodes";
import { shopOptionsFromEnv } from "../../examples/shop/server";
import { cli, startWorld, type World } from "./support";

setDefaultTimeout(30_000);

let world: World;
let shopper: Awaited<ReturnType<World["agent"]>>;
const order = (amount: number | string, currency = "EUR") => JSON.stringify({ amount, currency });
const json = { "content-type": "application/json" };

beforeAll(async () => {
  world = await startWorld("http-auth");
  shopper = await world.agent("shopper");
}, 60_000);

afterAll(async () => {
  await world?.stop();
});

/** POST /orders with `authorization`, through observe. */
const post = (body: string, authorization?: string) =>
  world.observe(new Request(`${world.shopUrl}/orders`, { method: "POST", headers: authorization ? { ...json, authorization } : json, body }));

/** A challenge for `agent`'s claim on `body`. */
async function challengeFor(agent: string, body: string): Promise<ZkAgentChallenge> {
  const response = await post(body, `ZKAgent agent="${agent}"`);
  expect(response.status).toBe(401);
  const challenge = readChallenge(response);
  if (challenge === null || challenge === "claim") throw new Error("no challenge");
  return challenge;
}

const payload = (jws: string) => JSON.parse(Buffer.from(jws.split(".")[1]!, "base64url").toString("utf8"));

describe("the challenge", () => {
  test("a plain request gets 401 with WWW-Authenticate: ZKAgent asking for the claim", async () => {
    const response = await post(order(20));
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe('ZKAgent realm="example-shop"');
    expect(await response.json()).toMatchObject({ error: "ZKAgent authentication required", reason: "claim_required" });
  });

  test("a claim gets 401 with the challenge: id, nonce, action, the exact context and the circuit, in the header and the body", async () => {
    const response = await post(order(20), 'ZKAgent agent="shopper"');
    expect(response.status).toBe(401);
    const [params] = parseAuth(response.headers.get("www-authenticate")!)!;
    const body = await response.json();
    const context = { amount: 20, currency: "EUR", merchant: "example-shop", "@request": { method: "POST", origin: world.shopUrl, target: "/orders" } };
    expect(body.challenge.context).toEqual(context);
    expect(JSON.parse(Buffer.from(params!.context!, "base64url").toString("utf8"))).toEqual(context);
    expect(params).toMatchObject({ realm: "example-shop", action: "purchase", challenge_id: body.challenge.challenge_id, nonce: body.challenge.nonce });
    expect(params!.circuit).toBe(`${world.node.url}/v1/circuits/${params!.circuit_id}`);
    expect(params!.nonce).toMatch(/^[0-9a-f]{62}$/);
    // The merchant's API key never reaches the agent.
    expect(response.headers.get("www-authenticate")! + JSON.stringify(body)).not.toContain(world.key);
  });

  test("a body the shop cannot derive a context from is a 400 naming the problem, with no challenge spent", async () => {
    const response = await post(JSON.stringify({ amount: -1, currency: "EUR" }), 'ZKAgent agent="shopper"');
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: "Invalid request",
      reason: "invalid_request",
      message: "amount must be a positive number or decimal string",
    });
    const overflow = await post('{"amount": 1e400, "currency": "EUR"}', 'ZKAgent agent="shopper"');
    expect(overflow.status).toBe(400);
    expect((await overflow.json()).reason).toBe("invalid_request");
    const garbled = await post(order(20), 'ZKAgent agent="shopper", agent="other"');
    expect(garbled.status).toBe(400);
    expect((await garbled.json()).reason).toBe("invalid_credentials");
  });
});

describe("groups", () => {
  test("a shop started without ZKAGENT_GROUPS refuses every group claim (403) and creates no challenge for it", async () => {
    const count = () => {
      const db = new Database(world.db, { readonly: true });
      try {
        return (db.query("SELECT count(*) AS n FROM challenges").get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    const before = count();
    const response = await post(order(20), 'ZKAgent group="household"');
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: "Group not accepted", reason: "group_not_accepted" });
    expect(count()).toBe(before);
  });

  test("the shop's options from its environment: ZKAGENT_GROUPS and ZKAGENT_SIGNATURE_AGENTS comma-separated, ZKAGENT_ORIGIN, ZKAGENT_ALLOW_INSECURE_LOOPBACK", () => {
    const required = (name: string) => `<${name}>`;
    const env = {
      ZKAGENT_GROUPS: " household, team-b ,,",
      ZKAGENT_BUDGET_GROUPS: "family-budget",
      ZKAGENT_ORIGIN: "https://shop.example",
      ZKAGENT_SIGNATURE_AGENTS: "https://a.example, https://b.example",
      ZKAGENT_ALLOW_INSECURE_LOOPBACK: "1",
    };
    expect(shopOptionsFromEnv(env, required)).toEqual({
      zkagentUrl: "<ZKAGENT_URL>",
      apiKey: "<ZKAGENT_API_KEY>",
      groups: ["household", "team-b"],
      budgets: ["family-budget"],
      signatureAgents: ["https://a.example", "https://b.example"],
      allowInsecureLoopback: true,
      origin: "https://shop.example",
    });
    expect(shopOptionsFromEnv({}, required)).toEqual({
      zkagentUrl: "<ZKAGENT_URL>",
      apiKey: "<ZKAGENT_API_KEY>",
      groups: [],
      budgets: [],
      signatureAgents: [],
      allowInsecureLoopback: false,
    });
  });
});

describe("placing an order", () => {
  test("the SDK's fetch answers the challenge: 201, made from the verified session", async () => {
    const sent: Request[] = [];
    const response = await agentFetch(`${world.shopUrl}/orders`, {
      method: "POST",
      headers: json,
      body: order("19.99"),
      zkagent: { identity: shopper.identity, fetch: (request) => (sent.push(request.clone()), world.observe(request)) },
    });
    expect(response.status).toBe(201);
    const placed = await response.json();
    expect(placed).toMatchObject({ scheme: "zkagent", agent_id: "shopper", amount: "19.99", currency: "EUR" });
    expect(placed.group_id).toBeUndefined();
    expect(placed.order_id).toMatch(/^ord_/);
    // plain, claim, credentials: three requests, one body
    expect(sent.map((r) => r.headers.get("authorization")?.split(/[ ,]/)[1]?.split("=")[0] ?? null)).toEqual([null, "agent", "agent"]);
    expect(await Promise.all(sent.map((r) => r.text()))).toEqual([order("19.99"), order("19.99"), order("19.99")]);
    // The receipt is the service's, for this agent, this action and this context, signed-for (confidence 0.999).
    const claims = payload(placed.receipt);
    expect(claims).toMatchObject({ sub: "shopper", status: "verified", action: "purchase", confidence: 0.999, signature: "valid" });
    expect(JSON.parse(claims.context)).toEqual({
      amount: "19.99",
      currency: "EUR",
      merchant: "example-shop",
      "@request": { method: "POST", origin: world.shopUrl, target: "/orders" },
    });
    const status = await call(world.node, "GET", `/v1/verify/status/${claims.session_id}`, world.key);
    expect(status.body.status).toBe("verified");
  });

  test("zkagent fetch places an order from the command line: the body on stdout, exit 0", async () => {
    const result = await cli(["fetch", `${world.shopUrl}/orders`, "-X", "POST", "-d", order(5, "USD"), "--identity", shopper.file]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ agent_id: "shopper", amount: 5, currency: "USD" });
    expect(result.stdout + result.stderr).not.toContain(shopper.identity.secret);
  });

  test("zkagent fetch: a refusal exits 1 with the status and the server's error and reason on stderr", async () => {
    const other = { ...(await createIdentity()), agent_id: "shopper" };
    const file = `${world.tmp}/impostor.json`;
    await Bun.write(file, JSON.stringify(other));
    const result = await cli(["fetch", `${world.shopUrl}/orders`, "-d", order(5), "--identity", file]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^zkagent: HTTP 403: Proof verification failed \([a-z_]+\)\n$/);
    expect(JSON.parse(result.stdout).error).toBe("Proof verification failed");
    const refused = await cli(["fetch", "file:///etc/passwd", "--identity", shopper.file]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("only http and https URLs are fetched");
  });
});

describe("what is refused, and not served", () => {
  test("a retried request whose body differs from the challenged one: 403 request_mismatch, the proof not spent", async () => {
    const challenge = await challengeFor("shopper", order(1));
    const authorization = await answerChallenge(challenge, { identity: shopper.identity });
    const response = await post(order(1000), authorization);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: "Request does not match the challenge", reason: "request_mismatch" });
    const status = await call(world.node, "GET", `/v1/verify/status/${challenge.challenge_id}`, world.key);
    expect(status.body.status).toBe("pending");
    // Another path or method with the same body does not match either.
    const elsewhere = await world.observe(
      new Request(`${world.shopUrl}/orders?coupon=1`, { method: "POST", headers: { ...json, authorization }, body: order(1) }),
    );
    expect(elsewhere.status).toBe(403);
    // The very request it was made for is still served.
    expect((await post(order(1), authorization)).status).toBe(201);
  });

  test("a replayed Authorization header: 403 challenge_used", async () => {
    const challenge = await challengeFor("shopper", order(7));
    const authorization = await answerChallenge(challenge, { identity: shopper.identity });
    expect((await post(order(7), authorization)).status).toBe(201);
    const replay = await post(order(7), authorization);
    expect(replay.status).toBe(403);
    expect(await replay.json()).toMatchObject({ error: "Challenge already used", reason: "challenge_used" });
  });

  test("a wrong identity (another secret for the same agent id): 403 proof_rejected", async () => {
    const impostor = { ...(await createIdentity()), agent_id: "shopper" };
    const response = await zkagentFetch({ identity: impostor, sign: false, fetch: world.observe })(`${world.shopUrl}/orders`, {
      method: "POST",
      headers: json,
      body: order(3),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: "Proof verification failed", reason: "proof_rejected" });
  });

  test("a revoked agent: 403 agent_revoked", async () => {
    const revoked = await world.agent("retired-bot");
    expect((await call(world.node, "DELETE", "/v1/agents/retired-bot", world.key)).status).toBe(200);
    const response = await zkagentFetch({ identity: revoked.identity, fetch: world.observe })(`${world.shopUrl}/orders`, {
      method: "POST",
      headers: json,
      body: order(3),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: "Proof verification failed", reason: "agent_revoked" });
  });

  test("an agent whose mandate caps the amount: 403 mandate_violation, naming the limit", async () => {
    const capped = await world.agent("capped-bot", { mandate: { limits: [{ action: "purchase", currency: "EUR", max_amount: "50.00" }] } });
    const send = zkagentFetch({ identity: capped.identity, fetch: world.observe });
    const within = await send(`${world.shopUrl}/orders`, { method: "POST", headers: json, body: order("50.00") });
    expect(within.status).toBe(201);
    const above = await send(`${world.shopUrl}/orders`, { method: "POST", headers: json, body: order("50.01") });
    expect(above.status).toBe(403);
    expect(await above.json()).toEqual({ error: "Proof verification failed", reason: "mandate_violation", detail: "max_amount" });
  });

  test("an expired challenge: 401 challenge_expired with a fresh challenge", async () => {
    const challenge = await challengeFor("shopper", order(9));
    const authorization = await answerChallenge(challenge, { identity: shopper.identity });
    // The server's clock is the system's: the challenge is aged in its database instead of waiting 300 s.
    const db = new Database(world.db);
    db.run("UPDATE challenges SET created_at = created_at - 301000, expires_at = expires_at - 301000 WHERE id = ?", [challenge.challenge_id]);
    db.close();
    const response = await post(order(9), authorization);
    expect(response.status).toBe(401);
    const fresh = readChallenge(response.clone());
    expect(fresh).not.toBe("claim");
    expect(fresh).not.toBeNull();
    expect((fresh as ZkAgentChallenge).challenge_id).not.toBe(challenge.challenge_id);
    expect((fresh as ZkAgentChallenge).params.error).toBe("challenge_expired");
    expect(await response.json()).toMatchObject({ error: "ZKAgent proof required", reason: "challenge_expired" });
  });

  test("no answer was a 5xx", () => {
    expect(world.statuses.length).toBeGreaterThan(15);
    expect(world.statuses.filter((status) => status >= 500)).toEqual([]);
  });
});
