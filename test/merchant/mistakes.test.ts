// A merchant's mistakes and a client's malformed requests, named at once
// (issues 37 and 38): options the guard cannot work with refused when it is
// made, naming the option; a service that refuses the API key told apart from
// one that cannot be reached, to the agent (the reason) and to the merchant
// (onError, with the cause); a Host that is no host[:port] answered 400 on
// every adapter, never 500.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import type { AddressInfo } from "node:net";
import { Elysia } from "elysia";
import express from "express";
import { Hono } from "hono";
import { zkagent as elysiaGuard } from "../../src/merchant/adapters/elysia";
import { zkagent as expressGuard } from "../../src/merchant/adapters/express";
import { zkagent as honoGuard } from "../../src/merchant/adapters/hono";
import { bodyFields, type GuardOptions, type GuardProblem, type Scheme, zkagentGuard } from "../../src/merchant";
import { nodeRequest } from "../../src/merchant/request";
import { merchantService, rawRequest } from "./support";

setDefaultTimeout(30_000);

const order = { amount: "20", currency: "EUR" };
const orderRequest = (authorization = 'ZKAgent agent="bot"') =>
  new Request("http://shop.test/orders", { method: "POST", headers: { "content-type": "application/json", authorization }, body: JSON.stringify(order) });
const refusal = async (result: Awaited<ReturnType<ReturnType<typeof zkagentGuard>["verify"]>>) => {
  if (result.ok) throw new Error("served");
  return { status: result.response.status, body: await result.response.json() };
};

describe("options the guard cannot work with: refused when it is made, naming the option", () => {
  const valid: GuardOptions = { url: "https://zkagent.example.com", apiKey: "zka_0123456789abcdef_key", action: "purchase" };
  const cases: [string, Record<string, unknown>, string][] = [
    ["no url", { url: undefined }, "url must be the zkagent service's http(s) URL (e.g. https://zkagent.example.com), not missing"],
    [
      "a url without a scheme",
      { url: "zkagent.example.com" },
      'url must be the zkagent service\'s http(s) URL (e.g. https://zkagent.example.com), not "zkagent.example.com"',
    ],
    ["a url that does not parse", { url: "https://[::1" }, "url must be the zkagent service's http(s) URL"],
    ["a url of another scheme", { url: "ftp://zkagent.example.com" }, "url must be the zkagent service's http(s) URL"],
    ["no apiKey", { apiKey: undefined }, "apiKey must be the merchant's API key for the zkagent service (a string), not undefined"],
    ["an empty apiKey", { apiKey: "" }, "apiKey must be the merchant's API key for the zkagent service (a string), not empty"],
    ["an apiKey copied with its line break", { apiKey: "zka_0123456789abcdef_key\n" }, "apiKey holds spaces or characters a header cannot carry"],
    ["no action", { action: undefined }, "action must be the action's name or a function of the request, not missing"],
    ["a context that is no function", { context: { amount: "1" } }, "context must be a function of the request"],
    ["a timeout of 0", { timeoutMs: 0 }, "timeoutMs must be a positive number of milliseconds, not number"],
    ["an onError that is no function", { onError: "console" }, "onError must be a function"],
    ["a publicUrl that does not parse", { publicUrl: "zkagent" }, 'publicUrl must be an http(s) URL, not "zkagent"'],
  ];
  for (const [what, change, message] of cases)
    test(`${what}: the guard and every adapter throw, naming it`, () => {
      const options = { ...valid, ...change } as GuardOptions;
      for (const make of [zkagentGuard, honoGuard, elysiaGuard, (o: GuardOptions) => expressGuard({ ...o, origin: "https://shop.example" })]) {
        expect(() => make(options)).toThrow(TypeError);
        expect(() => make(options)).toThrow(message);
      }
    });

  test("the key itself is never in the message", () => {
    expect(() => zkagentGuard({ ...valid, apiKey: "zka_secret value" })).toThrow(/^(?!.*zka_secret).*$/);
  });
});

describe("the service refusing the key, unreachable, or failing: told apart, to the agent and to onError", () => {
  test("a wrong API key (a real service): 502 service_rejected_key, onError told which, with no key in either", async () => {
    const { options } = await service();
    for (const apiKey of ["zka_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "not-a-key"]) {
      const problems: GuardProblem[] = [];
      const guard = zkagentGuard({ ...options, apiKey, onError: (p) => problems.push(p) });
      const result = await guard.verify(orderRequest());
      // Waiting mends nothing here: no Retry-After.
      expect(result.ok ? "served" : result.response.headers.get("retry-after")).toBeNull();
      const refused = await refusal(result);
      expect(refused).toEqual({
        status: 502,
        body: { error: "Verification service unavailable", reason: "service_rejected_key", message: "the zkagent service refused this server's API key" },
      });
      expect(problems).toEqual([
        {
          reason: "service_rejected_key",
          level: "error",
          message: "the zkagent service at http://zkagent.test refused the API key (403 Invalid API key): check apiKey",
          cause: undefined,
        },
      ]);
      // A presented challenge: its status read is refused the same way (before: read as "unknown challenge", then 502 with nothing said).
      problems.length = 0;
      const presented = await refusal(await guard.verify(orderRequest('ZKAgent agent="bot", challenge_id="ch_1", proof="e30"')));
      expect(presented.body.reason).toBe("service_rejected_key");
      expect(problems.map((p) => p.reason)).toEqual(["service_rejected_key"]);
    }
  });

  test("unreachable, timed out, 503, 429, an answer not understood: 502 verifier_unavailable; onError has what happened and the cause", async () => {
    const { options } = await service();
    const refusedConnection = new Error("connect ECONNREFUSED 10.0.0.1:443");
    const cases: [GuardOptions["fetch"], string, unknown][] = [
      [() => Promise.reject(refusedConnection), "POST http://zkagent.test/v1/verify/challenge failed: connect ECONNREFUSED 10.0.0.1:443", refusedConnection],
      [
        (request) => new Promise((_resolve, reject) => request.signal.addEventListener("abort", () => reject(request.signal.reason))),
        "POST http://zkagent.test/v1/verify/challenge: no answer within 50 ms",
        "TimeoutError",
      ],
      [
        () => Response.json({ error: "Service unavailable" }, { status: 503 }),
        "POST http://zkagent.test/v1/verify/challenge answered 503 Service unavailable",
        undefined,
      ],
      [
        () => Response.json({ error: "Rate limit exceeded" }, { status: 429, headers: { "retry-after": "30" } }),
        "POST http://zkagent.test/v1/verify/challenge answered 429 Rate limit exceeded",
        undefined,
      ],
      [
        () => new Response("<html>proxy error</html>", { status: 200 }),
        "POST http://zkagent.test/v1/verify/challenge answered 200 with a body that is not a JSON object",
        undefined,
      ],
      [() => Response.json({ no: "challenge" }), 'POST /v1/verify/challenge answered 200 {"no":"challenge"}, which the guard does not understand', undefined],
    ];
    for (const [fetch, message, cause] of cases) {
      const problems: GuardProblem[] = [];
      const guard = zkagentGuard({ ...options, fetch, timeoutMs: 50, onError: (p) => problems.push(p) });
      const result = await guard.verify(orderRequest());
      // Retry-After: the service's own (the 429's 30 s), else 5 s.
      expect(result.ok ? null : result.response.headers.get("retry-after")).toBe(message.includes(" 429 ") ? "30" : "5");
      const refused = await refusal(result);
      expect(refused).toEqual({ status: 502, body: { error: "Verification service unavailable", reason: "verifier_unavailable" } });
      expect(problems.length).toBe(1);
      expect(problems[0]).toMatchObject({ reason: "verifier_unavailable", level: "error", message });
      if (typeof cause === "string") expect((problems[0]!.cause as Error).name).toBe(cause);
      else expect(problems[0]!.cause).toBe(cause);
      expect(JSON.stringify(refused)).not.toContain(options.apiKey);
    }
  });

  test("a context function that throws: 500 with nothing of it, onError gets the error itself", async () => {
    const { options } = await service();
    const bug = new Error("secret internals at /srv/app.ts:12");
    const problems: GuardProblem[] = [];
    const guard = zkagentGuard({
      ...options,
      context: () => {
        throw bug;
      },
      onError: (p) => problems.push(p),
    });
    expect(await refusal(await guard.verify(orderRequest()))).toEqual({ status: 500, body: { error: "Internal server error", reason: "internal_error" } });
    expect(problems).toEqual([{ reason: "internal_error", level: "error", message: "POST /orders: the action or context function threw", cause: bug }]);
  });

  test("without onError each problem is one line on stderr; an onError that throws does not turn the 502 into a crash", async () => {
    const { options } = await service();
    const lines: unknown[][] = [];
    const spy = spyOn(console, "error").mockImplementation((...args: unknown[]) => {
      lines.push(args);
    });
    try {
      const silentBefore = zkagentGuard({ ...options, apiKey: "wrong-key" });
      expect((await refusal(await silentBefore.verify(orderRequest()))).body.reason).toBe("service_rejected_key");
    } finally {
      spy.mockRestore();
    }
    expect(lines).toEqual([
      ["zkagent guard: service_rejected_key: the zkagent service at http://zkagent.test refused the API key (403 Invalid API key): check apiKey"],
    ]);
    const throwing = zkagentGuard({
      ...options,
      apiKey: "wrong-key",
      onError: () => {
        throw new Error("logger down");
      },
    });
    expect((await refusal(await throwing.verify(orderRequest()))).status).toBe(502);
  });

  test("every adapter passes onError on: Hono, Elysia, Express with a wrong key", async () => {
    const { options } = await service();
    const problems: string[] = [];
    const bad = { ...options, apiKey: "wrong-key", origin: "http://shop.test", onError: (p: GuardProblem) => problems.push(p.reason) };
    const hono = new Hono().post("/orders", honoGuard(bad), (c) => c.text("served"));
    const elysia = new Elysia().use(elysiaGuard(bad)).post("/orders", () => "served");
    expect((await hono.request(orderRequest())).status).toBe(502);
    expect((await elysia.handle(orderRequest())).status).toBe(502);
    const app = express();
    app.post("/orders", expressGuard(bad), (_req, res) => {
      res.end("served");
    });
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const answered = await fetch(`http://127.0.0.1:${port}/orders`, { method: "POST", headers: orderRequest().headers, body: JSON.stringify(order) });
      expect(answered.status).toBe(502);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    expect(problems).toEqual(["service_rejected_key", "service_rejected_key", "service_rejected_key"]);
  });

  test("a Node adapter without origin warns once (per onError), at start; with origin, not", () => {
    const problems: GuardProblem[] = [];
    const onError = (p: GuardProblem) => problems.push(p);
    const options = { url: "https://zkagent.example.com", apiKey: "k", action: "purchase", onError };
    expressGuard(options);
    expressGuard(options);
    expect(problems.length).toBe(1);
    expect(problems[0]).toMatchObject({ reason: "no_origin", level: "warn" });
    expect(problems[0]!.message).toContain("Set origin (e.g. https://shop.example), or answer only your own host names");
    const other: GuardProblem[] = [];
    expressGuard({ ...options, origin: "https://shop.example", onError: (p) => other.push(p) });
    honoGuard({ ...options, onError: (p) => other.push(p) });
    expect(other).toEqual([]);
  });
});

describe("a Host that is no host[:port]: 400 on every adapter, every route, origin set or not, signed or not (was 500)", () => {
  const servers: { stop: () => Promise<void> }[] = [];
  const ports: Record<string, number> = {};
  const calls: string[] = [];

  beforeAll(async () => {
    const { options: real } = await service();
    const options: GuardOptions<Scheme> = {
      ...real,
      // Any call to the service would be a bug here: counted.
      fetch: (request) => (calls.push(request.url), real.fetch!(request)),
      onError: () => {},
      groups: ["household"],
    };
    const signed: GuardOptions<Scheme> = {
      ...options,
      action: "browse",
      accept: ["web-bot-auth", "zkagent"],
      signatures: { signatureAgents: ["https://agents.operator.example"] },
    };
    const withOrigin = { origin: "https://shop.example" };
    const hono = new Hono()
      .post("/orders", honoGuard(options), (c) => c.text("served"))
      .post("/origin/orders", honoGuard({ ...options, ...withOrigin }), (c) => c.text("served"))
      .get("/catalog", honoGuard(signed), (c) => c.text("served"))
      .get("/origin/catalog", honoGuard({ ...signed, ...withOrigin }), (c) => c.text("served"));
    const elysia = new Elysia()
      .group("/origin", (app) =>
        app
          .use(elysiaGuard({ ...signed, ...withOrigin }))
          .get("/catalog", () => "served")
          .post("/orders", () => "served"),
      )
      .use(elysiaGuard(signed))
      .get("/catalog", () => "served")
      .post("/orders", () => "served");
    for (const [name, app] of [
      ["hono", hono.fetch],
      ["elysia", (request: Request) => elysia.handle(request)],
    ] as const) {
      const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app });
      ports[name] = server.port!;
      servers.push({ stop: () => server.stop(true) });
    }
    const app = express();
    app.post("/orders", expressGuard(options), (_req, res) => void res.end("served"));
    app.post("/origin/orders", expressGuard({ ...options, ...withOrigin }), (_req, res) => void res.end("served"));
    app.get("/catalog", expressGuard(signed), (_req, res) => void res.end("served"));
    app.get("/origin/catalog", expressGuard({ ...signed, ...withOrigin }), (_req, res) => void res.end("served"));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    ports.express = (server.address() as AddressInfo).port;
    servers.push({
      stop: () => {
        server.closeAllConnections();
        return new Promise((resolve) => server.close(() => resolve()));
      },
    });
  });
  afterAll(async () => {
    for (const server of servers) await server.stop();
  });

  const SIGNED =
    'signature-agent: "https://agents.operator.example"\r\nsignature-input: sig1=("@authority" "signature-agent");created=1;keyid="k";tag="web-bot-auth"\r\nsignature: sig1=:AAAA:';
  for (const adapter of ["hono", "elysia", "express"])
    test(adapter, async () => {
      const seen: string[] = [];
      for (const host of ["[::1", "shop.example:99999"])
        for (const prefix of ["", "/origin"])
          for (const [method, path, extra] of [
            ["POST", "/orders", "content-type: application/json"],
            ["POST", "/orders", 'content-type: application/json\r\nauthorization: ZKAgent agent="bot"'],
            ["POST", "/orders", 'content-type: application/json\r\nauthorization: ZKAgent group="household"'],
            ["GET", "/catalog", 'authorization: ZKAgent agent="bot"'],
            ["GET", "/catalog", SIGNED],
          ] as const) {
            const answered = await rawRequest(
              ports[adapter]!,
              `${method} ${prefix}${path} HTTP/1.1\r\nhost: ${host}\r\n${extra}`,
              method === "POST" ? JSON.stringify(order) : "",
            );
            seen.push(`${host} ${method} ${prefix}${path} ${extra.split(":")[0]}: ${answered.status}`);
            if (answered.status === 400) {
              const body = JSON.parse(answered.body);
              expect(body.reason).toBe("invalid_request");
              expect(body.message).toMatch(/Host header is not a host\[:port\]/);
            }
          }
      expect(seen.filter((line) => !line.endsWith(": 400"))).toEqual([]);
      expect(calls).toEqual([]);
    });
});

function service() {
  return merchantService(bodyFields(["amount", "currency"]));
}

describe("nodeRequest: only the path and query from the target, the authority from a Host that is a host[:port]", () => {
  const build = (url: string, host: string | undefined, extra: Partial<Parameters<typeof nodeRequest>[0]> = {}) =>
    nodeRequest({ method: "GET", url, headers: host === undefined ? {} : { host }, ...extra }, new Uint8Array());

  test("what is taken, what is refused", () => {
    const ok = (url: string, host: string, extra = {}) => {
      const built = build(url, host, extra);
      if (!built.ok) throw new Error(built.message);
      return built.request.url;
    };
    expect(ok("/orders?x=1", "shop.example")).toBe("http://shop.example/orders?x=1");
    expect(ok("/orders", "[::1]:8080")).toBe("http://[::1]:8080/orders");
    expect(ok("/a/b", "shop.example", { originalUrl: "/mounted/a/b" })).toBe("http://shop.example/mounted/a/b");
    expect(ok("/", "shop.example", { protocol: "https" })).toBe("https://shop.example/");
    expect(ok("/", "shop.example", { socket: { encrypted: true } })).toBe("https://shop.example/");
    const refused = (url: string, host: string | undefined, extra = {}) => {
      const built = build(url, host, extra);
      return built.ok ? built.request.url : built.message;
    };
    for (const target of ["http://relay.example/orders", "https://relay.example/", "//relay.example/orders", "*", "relay.example:443", ""])
      expect(refused(target, "shop.example")).toBe("the request target must be a path (origin-form, RFC 9112 §3.2.1), not an absolute URL or //authority");
    // x@y: a URL parser reads userinfo x and host y, an origin the client chose.
    for (const host of ["[::1", "shop.example:99999", "x@y", "a b", "shop.example/evil", "a?b", "a#b", "a\\b"])
      expect(refused("/orders", host)).toBe("the Host header is not a host[:port]");
    expect(refused("/orders", undefined)).toBe("the request has no Host header");
    expect(refused("/orders", "shop.example", { protocol: "javascript" })).toBe("the request's protocol is not http(s) (javascript)");
  });
});
