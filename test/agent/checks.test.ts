// The agent's checks before a proof (src/agent/checks.ts), as pure functions:
// the request binding (through http-auth/statement.ts), a group challenge's
// message, the agent's maximum amount, and the order they run in.
import { describe, expect, test } from "bun:test";
import { ChallengeError, checkChallenge, checkGroupMessage, checkMaxAmount, outgoingRequest, parseMaxAmount } from "../../src/agent/checks";
import { groupMessageOf } from "../../src/groups/derivation";
import type { JsonObject } from "../../src/identity/encoding";

const nonce = "ab".repeat(31);
const request = { method: "POST", origin: "https://shop.example", target: "/orders" };
const context = (fields: JsonObject): JsonObject => ({ ...fields, merchant: "shop", "@request": request });
const sending = (body: unknown) => ({ method: "POST", url: "https://shop.example/orders", body });

/** The ChallengeError `run` throws, as [code, field]. */
function refused(run: () => void): [string, string | undefined] {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ChallengeError);
    return [(error as ChallengeError).code, (error as ChallengeError).field];
  }
  throw new Error("expected a refusal");
}

describe("the maximum amount", () => {
  const max = { amount: "50.00", currency: "EUR" };

  test("exact decimals: at the maximum in any spelling passes, a cent or a thousandth above does not", () => {
    for (const amount of ["50", "50.00", "50.000000", 50, 49.99, "0.01"]) expect(() => checkMaxAmount({ amount, currency: "EUR" }, max)).not.toThrow();
    for (const amount of ["50.01", "50.001", 50.001, "51", 1e21])
      expect(refused(() => checkMaxAmount({ amount, currency: "EUR" }, max))).toEqual(["limit", "amount"]);
  });

  test("another currency, no currency, no amount, an amount that is no decimal: refused, each saying why", () => {
    expect(refused(() => checkMaxAmount({ amount: "5", currency: "USD" }, max))).toEqual(["limit", "currency"]);
    expect(refused(() => checkMaxAmount({ amount: "5" }, max))).toEqual(["limit", "currency"]);
    expect(refused(() => checkMaxAmount({ currency: "EUR" }, max))).toEqual(["limit", "amount"]);
    for (const amount of ["-1", "1e3", "five", null, true, -5])
      expect(refused(() => checkMaxAmount({ amount, currency: "EUR" }, max))).toEqual(["limit", "amount"]);
  });

  test("a challenge that binds no payment (neither amount nor currency) passes: a limited agent can browse; a null or empty amount is still refused", () => {
    expect(() => checkMaxAmount({}, max)).not.toThrow();
    expect(() => checkMaxAmount(context({ page: 2 }), max)).not.toThrow();
    expect(() => checkChallenge({ nonce, action: "browse", context: context({}) }, sending(undefined), { maxAmount: max })).not.toThrow();
    // Present but unusable is not absent: the merchant bound something it calls an amount.
    for (const amount of [null, "", {}]) expect(refused(() => checkMaxAmount({ amount }, max))[0]).toBe("limit");
    expect(refused(() => checkMaxAmount({ currency: "EUR", item: "x" }, max))).toEqual(["limit", "amount"]);
  });

  test("a malformed maximum is a TypeError naming the member", () => {
    expect(() => parseMaxAmount({ amount: "50,00", currency: "EUR" })).toThrow(/maxAmount.amount/);
    expect(() => parseMaxAmount({ amount: "-1", currency: "EUR" })).toThrow(/maxAmount.amount/);
    expect(() => parseMaxAmount({ amount: "5", currency: "" })).toThrow(/maxAmount.currency/);
  });
});

describe("a group challenge's message", () => {
  test("the one the service derives passes; another challenge's message, or none, is message_mismatch", () => {
    const shown = { nonce, action: "purchase", context: context({ amount: "1.00" }) };
    const own = groupMessageOf(shown).toString();
    expect(() => checkGroupMessage({ ...shown, message: own })).not.toThrow();
    const hidden = groupMessageOf({ ...shown, context: context({ amount: "1000.00" }) }).toString();
    expect(refused(() => checkGroupMessage({ ...shown, message: hidden }))).toEqual(["message_mismatch", "message"]);
    expect(refused(() => checkGroupMessage({ ...shown, message: undefined }))).toEqual(["message_mismatch", "message"]);
    // The same context with its members in another order is the same message (canonical JSON).
    const reordered = { "@request": request, merchant: "shop", amount: "1.00" };
    expect(() => checkGroupMessage({ ...shown, context: reordered, message: own })).not.toThrow();
  });
});

describe("the request as sent", () => {
  test("a JSON body is parsed (application/json and +json types); another type is not compared; a JSON type that does not parse is refused", () => {
    expect(outgoingRequest("POST", "https://s.example/o", "application/json; charset=utf-8", new TextEncoder().encode('{"amount":"5"}')).body).toEqual({
      amount: "5",
    });
    expect(outgoingRequest("POST", "https://s.example/o", "application/merge-patch+json", '{"a":1}').body).toEqual({ a: 1 });
    expect(outgoingRequest("POST", "https://s.example/o", "text/plain", '{"a":1}').body).toBeUndefined();
    expect(outgoingRequest("GET", "https://s.example/o", "application/json", null).body).toBeUndefined();
    expect(refused(() => outgoingRequest("POST", "https://s.example/o", "application/json", "{amount: 5}"))).toEqual(["request_mismatch", "body"]);
  });

  test("checkChallenge runs the request binding first, then the message, then the maximum", () => {
    const max = { amount: "10", currency: "EUR" };
    const challenge = { nonce, action: "purchase", context: context({ amount: "20", currency: "EUR" }), group: true, message: "1" };
    // Everything is wrong: the request binding is named first.
    expect(refused(() => checkChallenge(challenge, sending({ amount: "5" }), { maxAmount: max }))).toEqual(["request_mismatch", "amount"]);
    expect(refused(() => checkChallenge(challenge, sending({ amount: "20" }), { maxAmount: max, action: "refund" }))).toEqual(["request_mismatch", "action"]);
    expect(refused(() => checkChallenge(challenge, sending({ amount: "20" }), { maxAmount: max }))).toEqual(["message_mismatch", "message"]);
    const honest = { ...challenge, message: groupMessageOf(challenge).toString() };
    expect(refused(() => checkChallenge(honest, sending({ amount: "20" }), { maxAmount: max }))).toEqual(["limit", "amount"]);
    expect(() =>
      checkChallenge(honest, sending({ amount: "20", currency: "EUR" }), { maxAmount: { amount: "20", currency: "EUR" }, action: "purchase" }),
    ).not.toThrow();
    // An agent challenge has no message to check.
    expect(() => checkChallenge({ ...challenge, group: false }, sending({ amount: "20" }))).not.toThrow();
  });

  test("the origin and target the request goes to, not the ones a challenge names", () => {
    const challenge = { nonce, action: "purchase", context: context({}) };
    expect(refused(() => checkChallenge(challenge, { method: "POST", url: "https://shop.example.evil/orders", body: undefined }))).toEqual([
      "request_mismatch",
      "origin",
    ]);
    expect(refused(() => checkChallenge(challenge, { method: "POST", url: "http://shop.example/orders", body: undefined }))).toEqual([
      "request_mismatch",
      "origin",
    ]);
    expect(refused(() => checkChallenge(challenge, { method: "POST", url: "https://shop.example/orders?x=1", body: undefined }))).toEqual([
      "request_mismatch",
      "target",
    ]);
    // A version-1 challenge (no origin in @request) is refused.
    const v1 = { nonce, action: "purchase", context: { "@request": { method: "POST", target: "/orders" } } };
    expect(refused(() => checkChallenge(v1, sending(undefined)))).toEqual(["request_mismatch", "origin"]);
  });
});
