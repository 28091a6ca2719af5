// Issue 27: what an endpoint may point at (the server-side request forgery
// guard, checked at registration with the name resolved first), and that a
// key sees and changes only its own endpoints and events.
import { beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import { openSqlite } from "../../src/store/sqlite";
import type { Resolver } from "../../src/webhooks/policy";
import { checkTarget, embeddedIpv4, isPrivateAddress } from "../../src/webhooks/policy";
import { signatureHeader } from "../../src/webhooks/signing";
import { createHarness, type Harness } from "../support/harness";

/** A resolver with fixed answers, so names that resolve to internal addresses can be tested without a DNS server. */
const RECORDS: Record<string, string[]> = {
  "hooks.example": ["93.184.216.34"],
  "loopback.example": ["127.0.0.1"],
  "metadata.example": ["169.254.169.254"],
  "mixed.example": ["93.184.216.34", "10.1.2.3"],
  "v6-local.example": ["fe80::1"],
};
const resolve: Resolver = async (host) => {
  const found = RECORDS[host];
  if (!found) throw new Error("ENOTFOUND");
  return found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};

let h: Harness;
let key: string;
beforeAll(async () => {
  h = await createHarness(openSqlite(":memory:"), { webhooks: { allowPrivate: false, resolve } });
});
beforeEach(async () => {
  key = await h.newKey("hooks");
});

const register = (url: unknown, events: unknown = ["session.verified"], as = key) => h.call("POST", "/v1/webhooks", { key: as, body: { url, events } });

describe("POST /v1/webhooks refuses with a 400 naming the problem", () => {
  const refusals: [string, unknown, unknown, string][] = [
    ["a non-URL", "not a url", ["session.verified"], "Invalid field url: must be an absolute URL"],
    ["ftp://", "ftp://hooks.example/in", ["session.verified"], "Invalid field url: must use https (got ftp)"],
    [
      "http:// without the operator's allowance",
      "http://hooks.example/in",
      ["session.verified"],
      "Invalid field url: must use https (http is allowed only where the operator sets WEBHOOKS_ALLOW_PRIVATE=true)",
    ],
    [
      "a name resolving to 127.0.0.1",
      "https://loopback.example/in",
      ["session.verified"],
      "Invalid field url: resolves to 127.0.0.1, a loopback, link-local or private address (allowed only where the operator sets WEBHOOKS_ALLOW_PRIVATE=true)",
    ],
    [
      "a name resolving to 169.254.169.254",
      "https://metadata.example/latest/meta-data/",
      ["session.verified"],
      "Invalid field url: resolves to 169.254.169.254, a loopback, link-local or private address (allowed only where the operator sets WEBHOOKS_ALLOW_PRIVATE=true)",
    ],
    [
      "a name with one private address among public ones",
      "https://mixed.example/in",
      ["session.verified"],
      "Invalid field url: resolves to 10.1.2.3, a loopback, link-local or private address (allowed only where the operator sets WEBHOOKS_ALLOW_PRIVATE=true)",
    ],
    [
      "an IPv6 link-local name",
      "https://v6-local.example/in",
      ["session.verified"],
      "Invalid field url: resolves to fe80::1, a loopback, link-local or private address (allowed only where the operator sets WEBHOOKS_ALLOW_PRIVATE=true)",
    ],
    [
      "a literal loopback address",
      "https://[::1]:8443/in",
      ["session.verified"],
      "Invalid field url: resolves to ::1, a loopback, link-local or private address (allowed only where the operator sets WEBHOOKS_ALLOW_PRIVATE=true)",
    ],
    ["a name that does not resolve", "https://nowhere.example/in", ["session.verified"], "Invalid field url: host nowhere.example does not resolve"],
    ["a control character in the URL", "https://hooks.example/in\u0000x", ["session.verified"], "Invalid field url: must not contain control characters"],
    ["credentials in the URL", "https://user:pw@hooks.example/in", ["session.verified"], "Invalid field url: must not carry credentials"],
    [
      "an unknown event name",
      "https://hooks.example/in",
      ["session.verified", "session.exploded"],
      'Invalid field events: unknown event type "session.exploded"; known: session.verified, session.failed',
    ],
    ["no events", "https://hooks.example/in", [], "Invalid field events: must be a non-empty array of event types: session.verified, session.failed"],
    ["a URL that is not a string", 42, ["session.verified"], "Invalid field url: must be a non-empty string of at most 2048 characters"],
  ];
  for (const [what, url, events, error] of refusals) {
    test(what, async () => {
      const answer = await register(url, events);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ error });
    });
  }

  test("missing fields", async () => {
    const answer = await h.call("POST", "/v1/webhooks", { key, body: {} });
    expect(answer).toMatchObject({ status: 400, body: { error: "Missing required fields: url, events" } });
  });

  test("localhost through the system resolver is refused too", async () => {
    const system = await createHarness(openSqlite(":memory:"), { verifier: h.deps.verifier, webhooks: { allowPrivate: false } });
    const answer = await system.call("POST", "/v1/webhooks", {
      key: await system.newKey(),
      body: { url: "https://localhost:9/in", events: ["session.failed"] },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatch(/^Invalid field url: resolves to (127\.0\.0\.1|::1), a loopback/);
  });
});

describe("the policy itself", () => {
  test("private, loopback, link-local and mapped addresses are inside; public ones are not", () => {
    for (const inside of [
      "127.0.0.1",
      "10.0.0.1",
      "172.16.5.4",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "fd00::1",
      "fe80::1",
      "::ffff:127.0.0.1",
      "not-an-ip",
    ])
      expect([inside, isPrivateAddress(inside)]).toEqual([inside, true]);
    for (const outside of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "172.32.0.1"])
      expect([outside, isPrivateAddress(outside)]).toEqual([outside, false]);
  });

  test("an IPv6 address that reaches an IPv4 one (NAT64, 6to4, mapped, compatible) is judged by that IPv4 address", () => {
    for (const [address, v4] of [
      ["64:ff9b::7f00:1", "127.0.0.1"],
      ["64:ff9b::169.254.169.254", "169.254.169.254"],
      ["::ffff:10.0.0.1", "10.0.0.1"],
      ["::ffff:0:c0a8:101", "192.168.1.1"],
      ["::127.0.0.1", "127.0.0.1"],
      ["::a9fe:a9fe", "169.254.169.254"],
      ["2002:7f00:1::", "127.0.0.1"],
      ["2002:a9fe:a9fe:1::5", "169.254.169.254"],
      ["2002:c0a8:0101::1", "192.168.1.1"],
    ]) {
      expect([address, embeddedIpv4(address!)]).toEqual([address, v4]);
      expect([address, isPrivateAddress(address!)]).toEqual([address, true]);
    }
    // The same prefixes around a public IPv4 address reach the public Internet.
    for (const outside of ["64:ff9b::8.8.8.8", "::ffff:8.8.8.8", "2002:0808:0808::1", "::93.184.216.34"])
      expect([outside, isPrivateAddress(outside)]).toEqual([outside, false]);
    expect(embeddedIpv4("2606:4700:4700::1111")).toBeNull();
  });

  test("site-local fec0::/10 and Teredo 2001::/32 are refused", () => {
    for (const inside of ["fec0::1", "feff:ffff::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2"])
      expect([inside, isPrivateAddress(inside)]).toEqual([inside, true]);
  });

  test("a name resolving to a NAT64 address of the metadata service is refused", async () => {
    const nat64: typeof resolve = async () => [{ address: "64:ff9b::a9fe:a9fe", family: 6 }];
    expect(await checkTarget("https://hooks.example/in", false, nat64)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/^resolves to 64:ff9b::a9fe:a9fe/),
    });
  });

  test("with WEBHOOKS_ALLOW_PRIVATE, http and private addresses pass, ftp still does not", async () => {
    expect(await checkTarget("http://loopback.example:8080/in", true, resolve)).toMatchObject({ ok: true, target: { address: "127.0.0.1" } });
    expect(await checkTarget("ftp://loopback.example/in", true, resolve)).toEqual({ ok: false, problem: "must use https (got ftp)" });
  });
});

describe("endpoints belong to their key", () => {
  test("register → secret once; list and read without it; another key gets 404 and sees nothing", async () => {
    const created = await register("https://hooks.example/in", ["session.failed", "session.verified"]);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: "https://hooks.example/in", events: ["session.failed", "session.verified"], previous_secret_expires_at: null });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = created.body.id as string;
    const { secret: _, ...shown } = created.body;
    expect((await h.call("GET", "/v1/webhooks", { key })).body).toEqual({ webhooks: [shown] });
    expect((await h.call("GET", `/v1/webhooks/${id}`, { key })).body).toEqual(shown);

    const other = await h.newKey("other");
    expect((await h.call("GET", "/v1/webhooks", { key: other })).body).toEqual({ webhooks: [] });
    for (const [method, path] of [
      ["GET", `/v1/webhooks/${id}`],
      ["DELETE", `/v1/webhooks/${id}`],
      ["POST", `/v1/webhooks/${id}/rotate-secret`],
    ] as const) {
      const answer = await h.call(method, path, { key: other });
      expect([method, path, answer.status, answer.body]).toEqual([method, path, 404, { error: "Webhook not found" }]);
    }
    expect((await h.call("POST", "/v1/webhook-deliveries/msg_00000000000000000000000000000000/redeliver", { key: other })).status).toBe(404);
    // Still there for its own key; deleted, it is gone.
    expect((await h.call("DELETE", `/v1/webhooks/${id}`, { key })).status).toBe(200);
    expect((await h.call("GET", `/v1/webhooks/${id}`, { key })).status).toBe(404);
    expect((await h.call("GET", "/v1/webhooks", { key })).body).toEqual({ webhooks: [] });
  });

  test("rotation: a new secret; until the overlap ends both secrets sign, and each verifies with the stock library", async () => {
    const created = await register("https://hooks.example/in");
    const rotated = await h.call("POST", `/v1/webhooks/${created.body.id}/rotate-secret`, { key });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    expect(Date.parse(rotated.body.previous_secret_expires_at) - h.clock.now()).toBe(24 * 60 * 60 * 1000);
    expect((await h.call("GET", `/v1/webhooks/${created.body.id}`, { key })).body.previous_secret_expires_at).toBe(rotated.body.previous_secret_expires_at);

    const body = JSON.stringify({ type: "session.verified" });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signatureHeader([rotated.body.secret, created.body.secret], "msg_1", timestamp, body),
    };
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    for (const secret of [rotated.body.secret, created.body.secret]) expect(new Webhook(secret).verify(body, headers)).toEqual({ type: "session.verified" });
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`).verify(body, headers)).toThrow();
  });

  test("deliveries: a bad state or limit is a 400 naming it", async () => {
    expect((await h.call("GET", "/v1/webhook-deliveries?state=lost", { key })).body).toEqual({
      error: "Invalid field state: must be one of pending, delivered, failed",
    });
    expect((await h.call("GET", "/v1/webhook-deliveries?limit=0", { key })).body).toEqual({ error: "Invalid field limit: must be an integer from 1 to 1000" });
    expect((await h.call("GET", "/v1/webhook-deliveries", { key })).body).toEqual({ deliveries: [] });
  });
});
