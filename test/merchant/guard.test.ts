// The merchant guard in process: its Elysia and Hono adapters in front of a
// real zkagent app (app.handle, no port), the agent's fetch answering them;
// the group path (private verification, issue 24) against a test double of
// the service, since the service on this branch has no group challenges yet;
// and the service being unreachable.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { Elysia } from "elysia";
import fc from "fast-check";
import { Hono } from "hono";
import { answerChallenge, ChallengeError, createIdentity, readChallenge, zkagentFetch } from "../../src/agent";
import { challengeScope, groupMessageOf, originScope } from "../../src/groups/derivation";
import { formatAuth, parseAuth } from "../../src/http-auth/scheme";
import { contextHash } from "../../src/identity/encoding";
import { zkagent as elysiaGuard } from "../../src/merchant/adapters/elysia";
import { zkagent as honoGuard } from "../../src/merchant/adapters/hono";
import { BadRequest, bodyFields, type GuardOptions, type GuardProblem, zkagentGuard } from "../../src/merchant";
import { merchantService } from "./support";

// The first proof of the process builds the prover (seconds on a loaded machine).
setDefaultTimeout(30_000);

const order = { amount: "20", currency: "EUR" };
const context: GuardOptions["context"] = ({ body }) => {
  const { amount, currency } = (body ?? {}) as Record<string, unknown>;
  if (typeof amount !== "string" || typeof currency !== "string") throw new BadRequest("amount and currency are required");
  return { amount, currency };
};

const service = () => merchantService(context);

describe("adapters in front of the real service", () => {
  test("Elysia: the handler receives the verified session; a plain request is refused before it runs", async () => {
    const { identity, options } = await service();
    let served = 0;
    const shop = new Elysia().use(elysiaGuard(options)).post("/orders", ({ zkagent }) => {
      served++;
      return { scheme: zkagent.scheme, agent: zkagent.agent_id, amount: zkagent.context.amount, confidence: zkagent.confidence };
    });
    const plain = await shop.handle(
      new Request("http://shop.test/orders", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(order) }),
    );
    expect(plain.status).toBe(401);
    expect(plain.headers.get("www-authenticate")).toBe('ZKAgent realm="zkagent"');
    expect(served).toBe(0);
    const agentFetch = zkagentFetch({ identity, fetch: (request) => shop.handle(request) });
    const response = await agentFetch("http://shop.test/orders", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(order),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ scheme: "zkagent", agent: "bot", amount: "20", confidence: 0.999 });
    expect(served).toBe(1);
  });

  test("Hono: the same, with announce (the claim on the first request: two round trips)", async () => {
    const { identity, options } = await service();
    const shop = new Hono().post("/orders", honoGuard(options), (c) => c.json({ agent: c.get("zkagent").agent_id, target: c.get("zkagent").request.target }));
    const sent: string[] = [];
    const agentFetch = zkagentFetch({
      identity,
      announce: true,
      fetch: (request) => (sent.push(request.headers.get("authorization") ?? ""), shop.fetch(request)),
    });
    const response = await agentFetch("http://shop.test/orders?x=1", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(order),
    });
    expect(await response.json()).toEqual({ agent: "bot", target: "/orders?x=1" });
    expect(sent.length).toBe(2);
    expect(sent[0]).toBe('ZKAgent agent="bot"');
  });

  test("a body with no context is 400 naming the problem; a context function's bug is 500 with nothing of it", async () => {
    const { options } = await service();
    const guard = zkagentGuard(options);
    const request = (body: string) =>
      new Request("http://shop.test/orders", { method: "POST", headers: { "content-type": "application/json", authorization: 'ZKAgent agent="bot"' }, body });
    const missing = await guard.verify(request("{}"));
    expect(missing.ok).toBe(false);
    if (missing.ok) return;
    expect(missing.response.status).toBe(400);
    expect(await missing.response.json()).toEqual({ error: "Invalid request", reason: "invalid_request", message: "amount and currency are required" });
    const notJson = await guard.verify(request("{"));
    expect(notJson.ok ? 0 : notJson.response.status).toBe(400);
    const buggy = zkagentGuard({
      ...options,
      context: () => {
        throw new Error("secret internals at /srv/app.ts:12");
      },
    });
    const crashed = await buggy.verify(request(JSON.stringify(order)));
    if (crashed.ok) throw new Error("served");
    expect(crashed.response.status).toBe(500);
    const text = await crashed.response.text();
    expect(JSON.parse(text)).toEqual({ error: "Internal server error", reason: "internal_error" });
  });

  test("credentials whose claim is not the challenge's agent, or whose challenge_id is not an id: refused, the proof not spent", async () => {
    const { harness, identity, options } = await service();
    const guard = zkagentGuard(options);
    const request = (authorization: string) =>
      new Request("http://shop.test/orders", { method: "POST", headers: { "content-type": "application/json", authorization }, body: JSON.stringify(order) });
    const first = await guard.verify(request('ZKAgent agent="bot"'));
    if (first.ok) throw new Error("served");
    const challenge = readChallenge(first.response);
    if (challenge === null || challenge === "claim") throw new Error("no challenge");
    const credentials = await answerChallenge(challenge, { identity });
    const other = await guard.verify(request(credentials.replace('agent="bot"', 'agent="someone-else"')));
    if (other.ok) throw new Error("served");
    expect(other.response.status).toBe(403);
    expect((await other.response.json()).reason).toBe("request_mismatch");
    const traversal = await guard.verify(request(credentials.replace(/challenge_id="[^"]+"/, 'challenge_id="../../v1/usage"')));
    if (traversal.ok) throw new Error("served");
    expect(traversal.response.status).toBe(400);
    const status = await harness.call("GET", `/v1/verify/status/${challenge.challenge_id}`, { key: options.apiKey });
    expect(status.body.status).toBe("pending");
    expect((await guard.verify(request(credentials))).ok).toBe(true);
  });

  test("the service unreachable: 502 verifier_unavailable, no detail and no key", async () => {
    const { options } = await service();
    const guard = zkagentGuard({ ...options, fetch: () => Promise.reject(new Error("ECONNREFUSED 10.0.0.1")) });
    const result = await guard.verify(
      new Request("http://shop.test/orders", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: 'ZKAgent agent="bot"' },
        body: JSON.stringify(order),
      }),
    );
    if (result.ok) throw new Error("served");
    expect(result.response.status).toBe(502);
    const text = await result.response.text();
    expect(JSON.parse(text)).toEqual({ error: "Verification service unavailable", reason: "verifier_unavailable" });
    expect(text).not.toContain(options.apiKey);
  });
});

// What issue 24's service answers for a group challenge, as the guard must pass it through.
const GROUP_FIELDS = { group_id: "grp_1", merkle_tree_root: "123", merkle_tree_depth: 20, message: "456", scope: "789", circuit_id: "semaphore-v4" };
/** What the double's status and answer say of the group; by default the group the challenge was made for. */
function double(say: { statusGroup?: string | null; answerGroup?: string } = {}) {
  const calls: { method: string; path: string; body: any; key: string | null }[] = [];
  let decided = false;
  const stored = { action: "", context: {} as Record<string, unknown>, group: "" };
  const fetch = async (request: Request) => {
    const body = request.body ? await request.json() : undefined;
    const path = new URL(request.url).pathname;
    calls.push({ method: request.method, path, body, key: request.headers.get("x-api-key") });
    const reply = (status: number, value: unknown) => Response.json(value, { status });
    if (path === "/v1/verify/challenge") {
      Object.assign(stored, { action: body.action, context: body.context, group: body.group_id });
      // The message the service derives (the agent recomputes it and refuses any other).
      const message = groupMessageOf({ nonce: "ab".repeat(31), action: body.action, context: body.context }).toString();
      // And the scope of the origin the context binds (issue 37: the agent recomputes it too).
      const scope = challengeScope({ keyId: "key_merchant", groupId: body.group_id, context: body.context }).toString();
      return reply(200, {
        challenge_id: "ch_group",
        nonce: "ab".repeat(31),
        expires_in: 300,
        timestamp: 1,
        ...GROUP_FIELDS,
        group_id: body.group_id,
        message,
        scope,
      });
    }
    if (path === "/v1/verify/status/ch_group") {
      const group = say.statusGroup === undefined ? stored.group || "grp_1" : say.statusGroup;
      return reply(200, {
        session_id: "ch_group",
        status: decided ? "verified" : "pending",
        agent_id: decided ? "pseud_9" : "",
        ...(group === null ? {} : { group_id: group, pseudonym: decided ? "pseud_9" : null }),
        action: stored.action,
        context_hash: contextHash(stored.context).toString(),
      });
    }
    if (path === "/v1/verify/proof") {
      decided = true;
      return reply(200, {
        verified: true,
        agent_id: "pseud_9",
        pseudonym: "pseud_9",
        group_id: say.answerGroup ?? (stored.group || "grp_1"),
        action: stored.action,
        confidence: 0.99,
        timestamp: "t",
        session_id: "ch_group",
        receipt: "r.r.r",
      });
    }
    return reply(404, { error: "Not found" });
  };
  return { calls, fetch };
}

describe("a group claim (private verification), against a test double of the service", () => {
  test("the claim becomes group_id, the challenge's group fields reach the agent, the proof object passes through verbatim", async () => {
    const service = double();
    const guard = zkagentGuard({ url: "http://zkagent.test", apiKey: "zka_merchant", action: "purchase", context, fetch: service.fetch, groups: ["grp_1"] });
    const shop = async (request: Request) => {
      const result = await guard.verify(request);
      return result.ok ? Response.json(result.session) : result.response;
    };
    const semaphoreProof = JSON.stringify({
      merkleTreeDepth: 20,
      merkleTreeRoot: "123",
      nullifier: "9",
      message: "456",
      scope: "789",
      points: ["1", "2", "3", "4", "5", "6", "7", "8"],
    });
    const seen: Record<string, string>[] = [];
    const identity = { group_id: "grp_1", secret: "12345" };
    const agentFetch = zkagentFetch({
      identity,
      fetch: shop,
      groupProver: async (challenge) => {
        seen.push(challenge.params);
        return semaphoreProof;
      },
    });
    const response = await agentFetch("http://shop.test/orders", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(order),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      scheme: "group",
      agent_id: "pseud_9",
      pseudonym: "pseud_9",
      group_id: "grp_1",
      action: "purchase",
      context: order,
    });
    expect(seen[0]).toMatchObject({
      group_id: "grp_1",
      merkle_tree_root: "123",
      merkle_tree_depth: "20",
      scope: originScope("http://shop.test", "grp_1").toString(),
    });
    expect(seen[0]!.message).toBe(groupMessageOf({ nonce: "ab".repeat(31), action: "purchase", context: service.calls[0]!.body.context }).toString());
    expect(service.calls[0]!.body).toEqual({
      group_id: "grp_1",
      action: "purchase",
      context: { ...order, "@request": { method: "POST", origin: "http://shop.test", target: "/orders" } },
    });
    const proofCall = service.calls.find((c) => c.path === "/v1/verify/proof")!;
    expect(proofCall.body).toEqual({ challenge_id: "ch_group", proof: semaphoreProof }); // no signature for a group: it would name the agent
    expect(service.calls.every((c) => c.key === "zka_merchant")).toBe(true);
  });

  test("a group identity without a groupProver cannot answer: ChallengeError, nothing sent", async () => {
    const service = double();
    const guard = zkagentGuard({ url: "http://zkagent.test", apiKey: "k", action: "purchase", context, fetch: service.fetch, groups: ["grp_1"] });
    const shop = async (request: Request) => {
      const result = await guard.verify(request);
      return result.ok ? new Response("served") : result.response;
    };
    const agentFetch = zkagentFetch({ identity: { group_id: "grp_1", secret: "1" }, fetch: shop });
    await expect(
      agentFetch("http://shop.test/orders", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(order) }),
    ).rejects.toBeInstanceOf(ChallengeError);
    expect(service.calls.some((c) => c.path === "/v1/verify/proof")).toBe(false);
  });
});

describe("the groups a merchant accepts (issue 34: any key can make a group and enrol its own identities)", () => {
  const PROOF = Buffer.from('{"points":["1"]}').toString("base64url");
  const orderRequest = (authorization: string, body = JSON.stringify(order)) =>
    new Request("http://shop.test/orders", { method: "POST", headers: { "content-type": "application/json", authorization }, body });
  const guardOn = (service: ReturnType<typeof double>, extra: Partial<GuardOptions> = {}) =>
    zkagentGuard({ url: "http://zkagent.test", apiKey: "k", action: "purchase", context, fetch: service.fetch, ...extra });
  async function refusal(result: Awaited<ReturnType<ReturnType<typeof zkagentGuard>["verify"]>>) {
    if (result.ok) throw new Error(`served ${JSON.stringify(result.session)}`);
    return { status: result.response.status, body: await result.response.json() };
  }

  test("a group not in `groups`, and any group when `groups` is not set: 403 group_not_accepted before any call to the service", async () => {
    for (const [options, group] of [
      [{ groups: ["grp_1"] }, "grp_attacker"],
      [{}, "grp_1"],
      [{ groups: [] }, "grp_1"],
    ] as const) {
      const service = double();
      const refused = await refusal(await guardOn(service, options).verify(orderRequest(`ZKAgent group="${group}"`)));
      expect(refused).toEqual({
        status: 403,
        body: { error: "Group not accepted", reason: "group_not_accepted", message: `members of group "${group}" are not accepted here` },
      });
      // With the proof's credentials too: no status read, no proof spent.
      const answered = await refusal(
        await guardOn(service, options).verify(orderRequest(`ZKAgent group="${group}", challenge_id="ch_group", proof="${PROOF}"`)),
      );
      expect(answered.body.reason).toBe("group_not_accepted");
      expect(service.calls).toEqual([]);
    }
  });

  test("a route that accepts only agents refuses a group claim (403 scheme_not_accepted) before any call; its 401 asks for an agent only", async () => {
    const service = double();
    const guard = guardOn(service, { groups: ["grp_1"], accept: ["zkagent"] });
    expect(await refusal(await guard.verify(orderRequest('ZKAgent group="grp_1"')))).toMatchObject({ status: 403, body: { reason: "scheme_not_accepted" } });
    expect(service.calls).toEqual([]);
    const plain = await refusal(await guard.verify(new Request("http://shop.test/orders", { method: "POST" })));
    expect(plain.body.message).toBe('repeat the request with Authorization: ZKAgent agent="<agent id>"');
    expect(() => zkagentGuard({ url: "http://z", apiKey: "k", action: "a", accept: ["web" as "group"] })).toThrow(TypeError);
  });

  test("the challenge's group (its status) is checked before the proof is spent; the answer's after", async () => {
    // The claim names an accepted group but presents a challenge made for another (another route of the same merchant key).
    const other = double({ statusGroup: "grp_2" });
    const guard = guardOn(other, { groups: ["grp_1", "grp_2"] });
    expect(await refusal(await guard.verify(orderRequest('ZKAgent group="grp_1"')))).toMatchObject({ status: 401 });
    const mismatch = await refusal(await guard.verify(orderRequest(`ZKAgent group="grp_1", challenge_id="ch_group", proof="${PROOF}"`)));
    expect(mismatch).toMatchObject({ status: 403, body: { reason: "request_mismatch", message: "the challenge was issued for another group" } });
    expect(other.calls.some((c) => c.path === "/v1/verify/proof")).toBe(false);

    // Credentials with no claim present a challenge of a group this guard does not accept.
    const foreign = double({ statusGroup: "grp_2" });
    const strict = guardOn(foreign, { groups: ["grp_1"] });
    await strict.verify(orderRequest('ZKAgent group="grp_1"'));
    const claimless = await refusal(await strict.verify(orderRequest(`ZKAgent challenge_id="ch_group", proof="${PROOF}"`)));
    expect(claimless).toMatchObject({ status: 403, body: { reason: "group_not_accepted" } });
    expect(foreign.calls.some((c) => c.path === "/v1/verify/proof")).toBe(false);

    // A group claim presenting an agent's challenge (no group_id in its status).
    const agents = double({ statusGroup: null });
    const byAgentChallenge = guardOn(agents, { groups: ["grp_1"] });
    await byAgentChallenge.verify(orderRequest('ZKAgent group="grp_1"'));
    const kind = await refusal(await byAgentChallenge.verify(orderRequest(`ZKAgent group="grp_1", challenge_id="ch_group", proof="${PROOF}"`)));
    expect(kind).toMatchObject({ status: 403, body: { reason: "request_mismatch" } });
    expect(agents.calls.some((c) => c.path === "/v1/verify/proof")).toBe(false);

    // The service's verified answer names a group outside the list: not served.
    const answered = double({ answerGroup: "grp_evil" });
    const checked = guardOn(answered, { groups: ["grp_1"] });
    await checked.verify(orderRequest('ZKAgent group="grp_1"'));
    const outside = await refusal(await checked.verify(orderRequest(`ZKAgent group="grp_1", challenge_id="ch_group", proof="${PROOF}"`)));
    expect(outside).toMatchObject({ status: 403, body: { reason: "group_not_accepted" } });

    // And the same exchange with nothing wrong is served, as scheme "group".
    const honest = double();
    const guarded = guardOn(honest, { groups: ["grp_1"] });
    await guarded.verify(orderRequest('ZKAgent group="grp_1"'));
    const served = await guarded.verify(orderRequest(`ZKAgent group="grp_1", challenge_id="ch_group", proof="${PROOF}"`));
    if (!served.ok) throw new Error(`refused ${served.response.status}`);
    expect(served.session).toMatchObject({ scheme: "group", group_id: "grp_1", pseudonym: "pseud_9", agent_id: "pseud_9" });
  });
});

describe("a service that contradicts the challenge it issued", () => {
  test("a verified answer naming another accepted group: 502, not served, and onError names the answer", async () => {
    const service = double({ answerGroup: "grp_2" });
    const problems: GuardProblem[] = [];
    const guard = zkagentGuard({
      url: "http://zkagent.test",
      apiKey: "k",
      action: "purchase",
      context,
      fetch: service.fetch,
      groups: ["grp_1", "grp_2"],
      onError: (problem) => problems.push(problem),
    });
    const request = (authorization: string) =>
      new Request("http://shop.test/orders", { method: "POST", headers: { "content-type": "application/json", authorization }, body: JSON.stringify(order) });
    await guard.verify(request('ZKAgent group="grp_1"'));
    const proof = Buffer.from('{"points":["1"]}').toString("base64url");
    const result = await guard.verify(request(`ZKAgent group="grp_1", challenge_id="ch_group", proof="${proof}"`));
    if (result.ok) throw new Error("served");
    expect(result.response.status).toBe(502);
    expect(problems.map((p) => p.reason)).toEqual(["verifier_unavailable"]);
    expect(problems[0]!.message).toStartWith('POST /v1/verify/proof answered 200 {"verified":true');
  });
});

describe("a context JSON cannot carry exactly (issue 34: 1e400 made a challenge, then a 500)", () => {
  test("400 invalid_request naming the member, before any call to the service", async () => {
    const calls: string[] = [];
    const guard = zkagentGuard({
      url: "http://zkagent.test",
      apiKey: "k",
      action: "purchase",
      // A context function may compute what JSON cannot carry (here: scale overflows to Infinity) as well as pass on what the body had.
      context: ({ body }) => {
        const { amount, note, scale } = body as { amount: number; note?: string; scale?: string };
        return { amount: scale === undefined ? amount : amount * Number(scale), note: note ?? "" };
      },
      fetch: (request) => (calls.push(new URL(request.url).pathname), Response.json({ error: "unexpected" }, { status: 500 })),
    });
    for (const [body, message] of [
      // The body is read as I-JSON: what it cannot carry exactly is named at the body.
      ['{"amount": 1e400}', "the body's amount: number is too large for a double (it would become Infinity); send it as a string"],
      ['{"amount": -1e999}', "the body's amount: number is too large for a double (it would become Infinity); send it as a string"],
      ['{"amount": 1, "note": "\\ud800"}', "the body's note: string contains a lone UTF-16 surrogate (not a Unicode character)"],
      // A member named twice would be bound last-wins while another parser reads it first-wins.
      ['{"amount": 1, "amount": 1000}', "the body's amount: member name appears more than once in its object; send each name once"],
      // What the context function derived is checked too.
      ['{"amount": 10, "scale": "1e308"}', "context.amount is a number JSON cannot carry exactly (Infinity)"],
      ['{"amount": -10, "scale": "1e308"}', "context.amount is a number JSON cannot carry exactly (-Infinity)"],
    ]) {
      const result = await guard.verify(
        new Request("http://shop.test/orders", { method: "POST", headers: { "content-type": "application/json", authorization: 'ZKAgent agent="bot"' }, body }),
      );
      if (result.ok) throw new Error("served");
      expect(result.response.status).toBe(400);
      expect(await result.response.json()).toEqual({ error: "Invalid request", reason: "invalid_request", message });
    }
    expect(calls).toEqual([]);
  });

  test("bodyFields refuses a number that overflowed and a lone surrogate, by name", () => {
    const request = new Request("http://shop.test/");
    const fields = bodyFields(["amount", "currency"]);
    expect(() => fields({ request, body: JSON.parse('{"amount": 1e400, "currency": "EUR"}') })).toThrow(
      new BadRequest("amount is a number JSON cannot carry exactly (Infinity)"),
    );
    expect(() => fields({ request, body: JSON.parse('{"amount": "1", "currency": ["\\udc00"]}') })).toThrow(
      new BadRequest("currency[0] is not well-formed Unicode (a lone surrogate)"),
    );
  });
});

describe("the origin a challenge binds (scheme version 2)", () => {
  test("behind a proxy: a guard configured with origin https://shop.example on http://127.0.0.1:port binds https://shop.example, and serves it; behind one that keeps Host, no option is needed", async () => {
    const { identity, options } = await service();
    const shopFor = (origin?: string) => new Hono().post("/orders", honoGuard({ ...options, ...(origin ? { origin } : {}) }), (c) => c.json(c.get("zkagent")));
    const proxied = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: shopFor("https://shop.example").fetch });
    const direct = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: shopFor().fetch });
    try {
      const place = async (url: string) => {
        const post = (authorization: string) =>
          fetch(`${url}/orders`, { method: "POST", headers: { "content-type": "application/json", authorization }, body: JSON.stringify(order) });
        const first = await post('ZKAgent agent="bot"');
        expect(first.status).toBe(401);
        const challenge = readChallenge(first);
        if (challenge === null || challenge === "claim") throw new Error("no challenge");
        const served = await post(await answerChallenge(challenge, { identity }));
        expect(served.status).toBe(200);
        return { bound: challenge.context["@request"], session: await served.json() };
      };
      const behindProxy = await place(`http://127.0.0.1:${proxied.port}`);
      expect(behindProxy.bound).toEqual({ method: "POST", origin: "https://shop.example", target: "/orders" });
      expect(behindProxy.session).toMatchObject({ scheme: "zkagent", agent_id: "bot", request: { origin: "https://shop.example" } });
      const fromHost = await place(`http://127.0.0.1:${direct.port}`);
      expect(fromHost.bound).toEqual({ method: "POST", origin: `http://127.0.0.1:${direct.port}`, target: "/orders" });
      // A reverse proxy that passes Host on: with no option, the challenge binds the origin the agent addressed (the proxy's).
      const keepsHost = Bun.serve({
        port: 0,
        hostname: "127.0.0.1",
        fetch: (request) => {
          const url = new URL(request.url);
          return fetch(`http://127.0.0.1:${direct.port}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body: request.body });
        },
      });
      try {
        const throughProxy = await place(`http://127.0.0.1:${keepsHost.port}`);
        expect(throughProxy.bound).toEqual({ method: "POST", origin: `http://127.0.0.1:${keepsHost.port}`, target: "/orders" });
      } finally {
        keepsHost.stop(true);
      }
    } finally {
      proxied.stop(true);
      direct.stop(true);
    }
    for (const origin of ["ftp://shop.example", "https://shop.example/shop", "shop.example"])
      expect(() => zkagentGuard({ ...options, origin })).toThrow(TypeError);
    expect(() => zkagentGuard({ ...options, origin: "https://Shop.Example:443/" })).not.toThrow();
  });
});

// Any well-formed text: ASCII (controls too) and every code point outside the surrogates.
// (fc.string's "binary" unit takes seconds to set up on first use.)
const anyText = fc
  .array(fc.oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0x80, max: 0xd7ff }), fc.integer({ min: 0xe000, max: 0x10ffff })))
  .map((points) => String.fromCodePoint(...points));

describe("the wire grammar", () => {
  test("parameters are quoted-strings with escapes; several schemes in one header; duplicates refused", () => {
    expect(parseAuth('Bearer abc/+==, ZKAgent agent="a\\"b", challenge_id=ch_1')).toEqual([{ agent: 'a"b', challenge_id: "ch_1" }]);
    expect(parseAuth('zkagent AGENT="x"')).toEqual([{ agent: "x" }]);
    expect(parseAuth('ZKAgent agent="x", agent="y"')).toBeNull();
    expect(parseAuth("ZKAgent abc==")).toBeNull();
    expect(parseAuth('Basic realm="r"')).toEqual([]);
  });

  test("any text round-trips through a header: printable ASCII quoted, the rest in RFC 8187's extended form", () => {
    expect(formatAuth({ action: "購入", realm: 'a"b' })).toBe(`ZKAgent action*=UTF-8''%E8%B3%BC%E5%85%A5, realm="a\\"b"`);
    expect(parseAuth("ZKAgent a*=UTF-8''%E2%82%AC")).toEqual([{ a: "€" }]);
    expect(parseAuth(`ZKAgent a="1", a*=UTF-8''2`)).toBeNull();
    fc.assert(
      fc.property(anyText, fc.string(), (a, b) => {
        const header = formatAuth({ a, b });
        expect(new Headers({ authorization: header }).get("authorization")).toBe(header); // a valid header value
        expect(parseAuth(header)).toEqual([{ a, b }]);
      }),
    );
  });
});

describe("bodyFields", () => {
  test("takes the named fields, adds the merchant's, and refuses a missing one by name", () => {
    const request = new Request("http://shop.test/");
    const fields = bodyFields(["amount", "currency"], { merchant: "m" });
    expect(fields({ request, body: { amount: "1", currency: "EUR", note: "ignored" } })).toEqual({ amount: "1", currency: "EUR", merchant: "m" });
    expect(() => fields({ request, body: { amount: "1" } })).toThrow(new BadRequest("currency is required"));
    expect(() => fields({ request, body: [1] })).toThrow(new BadRequest("the body must be a JSON object"));
  });
});

describe("the agent's fetch, against a merchant it need not trust", () => {
  const CONTEXT = { amount: "5", "@request": { method: "GET", origin: "http://shop.test", target: "/orders" } };
  const challengeHeader = (circuitId: string, circuit: string) =>
    formatAuth({
      realm: "r",
      challenge_id: "ch_1",
      nonce: "ab".repeat(31),
      action: "purchase",
      // The request the agent sends (GET http://shop.test/orders): the agent proves only a challenge that binds it.
      context: Buffer.from(JSON.stringify(CONTEXT)).toString("base64url"),
      circuit_id: circuitId,
      circuit,
    });

  test("a circuit from a service it does not trust is refused: the witness code would be the merchant's choice", async () => {
    const identity = { ...(await createIdentity()), agent_id: "bot" };
    const sent: string[] = [];
    const merchant = (request: Request) => {
      sent.push(request.headers.get("authorization") ?? "");
      return new Response("{}", {
        status: 401,
        headers: { "www-authenticate": challengeHeader("evil-circuit", "https://evil.example/v1/circuits/evil-circuit") },
      });
    };
    const untrusted = zkagentFetch({ identity, announce: true, fetch: merchant });
    await expect(untrusted("http://shop.test/orders")).rejects.toThrow(/not from a trusted zkagent service/);
    expect(sent).toEqual(['ZKAgent agent="bot"']); // nothing proved, nothing sent after the challenge
  });

  test("approve: false returns the 401 as it came, unproved", async () => {
    const identity = { ...(await createIdentity()), agent_id: "bot" };
    const seen: string[] = [];
    const response = await zkagentFetch({
      identity,
      announce: true,
      approve: (challenge) => (seen.push(JSON.stringify(challenge.context)), false),
      fetch: () =>
        new Response("nope", { status: 401, headers: { "www-authenticate": challengeHeader("agent_identity-x", "https://z.example/v1/circuits/x") } }),
    })("http://shop.test/orders");
    expect(response.status).toBe(401);
    expect(await response.text()).toBe("nope");
    expect(seen).toEqual([JSON.stringify(CONTEXT)]);
  });
});
