import { describe, expect, test } from "bun:test";
import { boundRequest, challengedContext, isJsonType, jsonProblem, REQUEST_MEMBER, requestMismatch } from "../../src/http-auth/statement";

const shop = "https://shop.example";
const challengeFor = (method: string, url: string, declared: Record<string, unknown>, action = "purchase") => ({
  action,
  context: challengedContext(declared, boundRequest(method, url)),
});

describe("boundRequest", () => {
  test("origin from the URL, lower-cased, default port dropped; target is path and query", () => {
    expect(boundRequest("POST", "HTTPS://Shop.Example:443/orders?x=1#frag")).toEqual({ method: "POST", origin: shop, target: "/orders?x=1" });
  });
  test("a configured origin wins over the URL's (a proxy that terminates TLS)", () => {
    expect(boundRequest("GET", "http://10.0.0.5:8080/catalog", "https://shop.example").origin).toBe(shop);
  });
  test("refuses a non-http origin", () => {
    expect(() => boundRequest("GET", "file:///etc/passwd")).toThrow(TypeError);
  });
});

describe("challengedContext", () => {
  test("adds the request member with the origin", () => {
    expect(challengedContext({ amount: "20" }, boundRequest("POST", `${shop}/orders`))).toEqual({
      amount: "20",
      [REQUEST_MEMBER]: { method: "POST", origin: shop, target: "/orders" },
    });
  });
  test("a declared context that has the request member is a configuration error", () => {
    expect(() => challengedContext({ [REQUEST_MEMBER]: 1 }, boundRequest("GET", shop))).toThrow(TypeError);
  });
});

describe("requestMismatch", () => {
  const body = { amount: "20.00", currency: "EUR" };
  const own = { method: "POST", url: `${shop}/orders`, body };
  test("the agent's own request matches", () => {
    expect(requestMismatch(challengeFor("POST", `${shop}/orders`, { ...body, merchant: "shop" }), own, { action: "purchase" })).toBeNull();
  });
  test("a relayed challenge for another origin is refused (relay)", () => {
    const m = requestMismatch(challengeFor("POST", `${shop}/orders`, body), { method: "POST", url: "https://hostile.example/orders", body });
    expect(m?.field).toBe("origin");
  });
  test("another method or target is refused", () => {
    expect(requestMismatch(challengeFor("POST", `${shop}/orders`, body), { ...own, method: "GET", body: undefined })?.field).toBe("method");
    expect(requestMismatch(challengeFor("POST", `${shop}/orders?x=2`, body), own)?.field).toBe("target");
  });
  test("a rewritten body field is refused, naming it", () => {
    const m = requestMismatch(challengeFor("POST", `${shop}/orders`, { amount: "2000.00", currency: "EUR" }), own);
    expect(m?.field).toBe("amount");
    expect(m?.message).toContain('"2000.00"');
  });
  test("number spellings that parse alike are the same value", () => {
    expect(requestMismatch(challengeFor("POST", `${shop}/orders`, { amount: 20 }), { ...own, body: JSON.parse('{"amount": 20.0}') })).toBeNull();
  });
  test("another action than the one meant is refused", () => {
    expect(requestMismatch(challengeFor("POST", `${shop}/orders`, body, "refund"), own, { action: "purchase" })?.field).toBe("action");
  });
  test("a version-1 challenge (no origin) is refused", () => {
    const v1 = { action: "purchase", context: { ...body, [REQUEST_MEMBER]: { method: "POST", target: "/orders" } } };
    expect(requestMismatch(v1, own)?.field).toBe("origin");
    expect(requestMismatch({ action: "purchase", context: body }, own)?.field).toBe(REQUEST_MEMBER);
  });
});

describe("jsonProblem", () => {
  test("JSON values pass", () => {
    expect(jsonProblem({ a: [1, "x", null, true, { b: -0.5 }] })).toBeNull();
  });
  test("an overflowing number is named", () => {
    expect(jsonProblem(JSON.parse('{"amount": 1e400}'))).toContain("context.amount");
  });
  test("a lone surrogate is named", () => {
    expect(jsonProblem({ note: "\ud800" })).toContain("context.note");
  });
  test("a non-plain object is refused", () => {
    expect(jsonProblem({ when: new Date(0) })).toContain("context.when");
  });
});

test("isJsonType", () => {
  expect(isJsonType("application/json; charset=utf-8")).toBe(true);
  expect(isJsonType("application/merge-patch+json")).toBe(true);
  expect(isJsonType("text/plain")).toBe(false);
  expect(isJsonType(null)).toBe(false);
});
