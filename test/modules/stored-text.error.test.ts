// Issue 18, items 2, 3 and 5: what a mandate, a context and a principal's JWS
// may carry, with the same answer on both stores, and nothing committed under
// an answer that says the request failed.
import { beforeEach, describe, expect, test } from "bun:test";
import { sign } from "node:crypto";
import canonicalize from "canonicalize";
import fc from "fast-check";
import { createPrincipal } from "../../src/agent";
import { privateKeyFromSeed } from "../../src/identity/signature";
import { parseMandate } from "../../src/mandates/schema";
import { challengeRefinements } from "../../src/modules/challenges/model";
import { StoreUnavailableError } from "../../src/store/interface";
import { createHarness, type Harness } from "../support/harness";
import { storesUnderTest } from "../support/stores";

const principal = createPrincipal();
const b64 = (text: string) => Buffer.from(text).toString("base64url");
const HEADER = '{"alg":"EdDSA","typ":"zkagent-mandate+jwt"}';

/** A compact JWS over exactly these texts (node:crypto only), so a test can write what JSON.stringify never would. */
function jwsOf(header: string, payload: string): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign(null, Buffer.from(input), privateKeyFromSeed(principal.principal_secret)).toString("base64url")}`;
}

for (const { name, open } of storesUnderTest()) {
  describe(`stored text, iat and signed-mandate JSON (${name})`, () => {
    let h: Harness;
    let key: string;
    let keyId: string;
    beforeEach(async () => {
      h = await createHarness(await open());
      key = await h.newKey("text", 0);
      keyId = key.split("_")[1]!;
    });

    const payload = (iat: string, mandate = "{}", agent = "delegate") =>
      `{"key_id":"${keyId}","agent_id":"${agent}","identity_commitment":"5","mandate":${mandate},"iat":${iat}}`;
    const register = (jws: string, agent = "delegate") =>
      h.call("POST", "/v1/agents", {
        key,
        body: { agent_id: agent, identity_commitment: "5", principal_key: principal.principal_key, mandate: { mandate_jws: jws } },
      });

    test("3. iat 2^63, 9223372036854775807, 1e300, a day ahead: 400 on both stores, nothing stored; now + 300 s is accepted", async () => {
      const now = Math.floor(h.clock.now() / 1000);
      for (const iat of ["9223372036854775808", "9223372036854775807", "1e300", String(now + 86_400), String(now + 301)]) {
        const reply = await register(jwsOf(HEADER, payload(iat)));
        expect({ iat, status: reply.status }).toEqual({ iat, status: 400 });
        expect(reply.body.error).toStartWith("Invalid field mandate_jws: ");
        expect((await h.call("GET", "/v1/agents/delegate", { key })).status).toBe(404);
      }
      expect((await register(jwsOf(HEADER, payload(String(now + 300))))).status).toBe(201);
      // A replacement from the far future is refused too, so it cannot freeze the mandate.
      const frozen = await h.call("PUT", "/v1/agents/delegate/mandate", { key, body: { mandate_jws: jwsOf(HEADER, payload("1e300", '{"actions":["x"]}')) } });
      expect(frozen.status).toBe(400);
      expect((await h.call("GET", "/v1/agents/delegate", { key })).body.mandate).toEqual({});
    });

    test("5. a duplicate member in the JWS header or payload: 400 naming it, nothing stored", async () => {
      const cases: [string, string, string][] = [
        ['{"alg":"EdDSA","typ":"x","typ":"zkagent-mandate+jwt"}', payload("1"), "protected header is not I-JSON at typ"],
        [HEADER, payload("1", '{"actions":["refund"]},"mandate":{}'), "payload is not I-JSON at mandate"],
        [HEADER, payload("1").replace('"agent_id"', '"agent_id":"other","agent_id"'), "payload is not I-JSON at agent_id"],
      ];
      for (const [header, body, why] of cases) {
        const reply = await register(jwsOf(header, body));
        expect(reply.status).toBe(400);
        expect(reply.body.error).toStartWith(`Invalid field mandate_jws: ${why}: member name appears more than once`);
      }
      expect((await h.call("GET", "/v1/agents/delegate", { key })).status).toBe(404);
    });
  });
}

for (const { name, open } of storesUnderTest()) {
  describe(`2. NUL at any depth of a mandate, a context, a signed payload (${name})`, () => {
    let h: Harness;
    let key: string;
    beforeEach(async () => {
      h = await createHarness(await open());
      key = await h.newKey("nul", 0);
    });

    test("registration: 400 naming the member, nothing stored (PostgreSQL answered 500 with the agent stored)", async () => {
      const cases: [unknown, string][] = [
        [{ limits: [{ action: "p\u0000", currency: "EUR", max_amount: "10.00" }] }, "limits[0].action must not contain U+0000 (NUL)"],
        [{ actions: ["purchase", "re\u0000fund"] }, "actions[1] must not contain U+0000 (NUL)"],
        [{ merchants: ["\u0000"] }, "merchants[0] must not contain U+0000 (NUL)"],
      ];
      for (const [mandate, why] of cases) {
        const reply = await h.call("POST", "/v1/agents", { key, body: { agent_id: "a", identity_commitment: "5", mandate } });
        expect(reply).toMatchObject({ status: 400, body: { error: `Invalid field mandate: ${why}` } });
        expect((await h.call("GET", "/v1/agents/a", { key })).status).toBe(404);
      }
    });

    test("PUT mandate: 400, the stored mandate unchanged; GET and DELETE keep answering", async () => {
      const mandate = { limits: [{ action: "purchase", currency: "EUR", max_total: "50.00", period: "day" }] };
      expect((await h.call("POST", "/v1/agents", { key, body: { agent_id: "a", identity_commitment: "5", mandate } })).status).toBe(201);
      const nul = { limits: [{ action: "purchase\u0000", currency: "EUR", max_total: "50.00", period: "day" }] };
      const reply = await h.call("PUT", "/v1/agents/a/mandate", { key, body: nul });
      expect(reply).toMatchObject({ status: 400, body: { error: "Invalid field mandate: limits[0].action must not contain U+0000 (NUL)" } });
      expect((await h.call("GET", "/v1/agents/a", { key })).body.mandate).toEqual(mandate);
      expect((await h.call("DELETE", "/v1/agents/a", { key })).status).toBe(200);
    });

    test("a principal's signed mandate with NUL inside: 400 naming it", async () => {
      const keyId = key.split("_")[1]!;
      const payload = `{"key_id":"${keyId}","agent_id":"d","identity_commitment":"5","mandate":{"limits":[{"action":"p\\u0000","max_count":1,"period":"day"}]},"iat":1}`;
      const reply = await h.call("POST", "/v1/agents", {
        key,
        body: { agent_id: "d", identity_commitment: "5", principal_key: principal.principal_key, mandate: { mandate_jws: jwsOf(HEADER, payload) } },
      });
      expect(reply).toMatchObject({ status: 400, body: { error: "Invalid field mandate_jws: mandate limits[0].action must not contain U+0000 (NUL)" } });
      expect((await h.call("GET", "/v1/agents/d", { key })).status).toBe(404);
    });

    test("context: NUL in a nested value or member name is 400 naming where; nothing stored", async () => {
      const cases: [unknown, string][] = [
        [{ merchant: "shop\u0000" }, "merchant must not contain U+0000 (NUL)"],
        [{ a: { b: ["x", "y\u0000"] } }, "a.b[1] must not contain U+0000 (NUL)"],
        [{ a: [{ "k\u0000": 1 }] }, 'member name a[0]["k\\u0000"] must not contain U+0000 (NUL)'],
      ];
      for (const [context, why] of cases) {
        const reply = await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "a", action: "buy", context } });
        expect(reply).toMatchObject({ status: 400, body: { error: `Invalid field context: ${why}` } });
      }
      expect(await h.store.countPending(h.clock.now())).toBe(0);
    });

    test("property: any mandate or context the schema accepts is stored and read back identically; any other is 400, nothing stored", async () => {
      const text = fc.oneof(
        { weight: 4, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 10 }) },
        fc.constantFrom("purchase", "p\u0000", "\u0000", "a\u0000b"),
      );
      const limit = fc.record(
        {
          action: text,
          currency: fc.constantFrom("EUR", "USD", "e\u0000r"),
          max_amount: fc.constantFrom("10.00", "5", "0.5"),
          max_count: fc.nat(5),
          period: fc.constantFrom("day", "week", "month"),
        },
        { requiredKeys: ["currency"] },
      );
      const mandate = fc.record(
        { actions: fc.array(text, { maxLength: 3 }), merchants: fc.array(text, { maxLength: 3 }), limits: fc.array(limit, { maxLength: 3 }) },
        { requiredKeys: [] },
      );
      let n = 0;
      await fc.assert(
        fc.asyncProperty(mandate, async (m) => {
          const agent = `agent-${n++}`;
          const accepted = parseMandate(m).ok;
          const reply = await h.call("POST", "/v1/agents", { key, body: { agent_id: agent, identity_commitment: "5", mandate: m } });
          expect(reply.status).toBe(accepted ? 201 : 400);
          const read = await h.call("GET", `/v1/agents/${agent}`, { key });
          if (!accepted) return void expect(read.status).toBe(404);
          expect(reply.body.mandate).toEqual(m);
          expect(read).toMatchObject({ status: 200, body: { mandate: m } });
          expect((await h.call("PUT", `/v1/agents/${agent}/mandate`, { key, body: m })).body.mandate).toEqual(m);
          expect((await h.call("DELETE", `/v1/agents/${agent}`, { key })).status).toBe(200);
        }),
        { numRuns: 60, seed: 18 },
      );
      const context = fc.dictionary(text, fc.oneof(text, fc.integer(), fc.array(text, { maxLength: 2 }), fc.dictionary(text, text, { maxKeys: 2 })), {
        maxKeys: 4,
      });
      await fc.assert(
        fc.asyncProperty(context, async (c) => {
          const accepted = challengeRefinements.context(c) === null;
          const reply = await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "a", action: "buy", context: c } });
          expect(reply.status).toBe(accepted ? 200 : 400);
          if (accepted) expect((await h.store.getChallenge(reply.body.challenge_id))?.context).toBe(canonicalize(c) as string);
        }),
        { numRuns: 60, seed: 18 },
      );
    });
  });
}

for (const { name, open } of storesUnderTest()) {
  describe(`2. no write commits under an answer that says it failed (${name})`, () => {
    test("a failing read of the spend (the read-back that failed on PostgreSQL): 503, and registration, new mandate and revocation are not committed", async () => {
      const store = await open();
      const down = { on: false };
      // The store as the app sees it: readSpend fails while `down.on`, everything else is the real store.
      const flaky = new Proxy(store, {
        get(target, property) {
          if (property === "readSpend" && down.on)
            return async () => {
              throw new StoreUnavailableError("readSpend: the database went away");
            };
          const value = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const h = await createHarness(flaky);
      const key = await h.newKey("after-write", 0);
      const keyId = key.split("_")[1]!;
      const mandate = { limits: [{ action: "purchase", currency: "EUR", max_total: "50.00", period: "day" }] };

      down.on = true;
      expect((await h.call("POST", "/v1/agents", { key, body: { agent_id: "a", identity_commitment: "5", mandate } })).status).toBe(503);
      expect(await store.getAgent(keyId, "a")).toBeNull();

      down.on = false;
      expect((await h.call("POST", "/v1/agents", { key, body: { agent_id: "a", identity_commitment: "5", mandate } })).status).toBe(201);
      down.on = true;
      const wider = { limits: [{ action: "purchase", currency: "EUR", max_total: "500.00", period: "day" }] };
      expect((await h.call("PUT", "/v1/agents/a/mandate", { key, body: wider })).status).toBe(503);
      expect(JSON.parse((await store.getAgent(keyId, "a"))!.mandate!)).toEqual(mandate);
      expect((await h.call("DELETE", "/v1/agents/a", { key })).status).toBe(503);
      expect((await store.getAgent(keyId, "a"))!.revokedAt).toBeNull();
      // Removing the mandate shows no spend, so it reads nothing back: it commits and says so.
      expect((await h.call("DELETE", "/v1/agents/a/mandate", { key })).status).toBe(200);
      expect((await store.getAgent(keyId, "a"))!.mandate).toBeNull();
    });

    test("revocation reads the agent and its spend once, before its one write; revoking again writes nothing and reads nothing back", async () => {
      const store = await open();
      const calls: string[] = [];
      // The real store, recording the agent reads and writes a revocation makes.
      const counted = new Proxy(store, {
        get(target, property) {
          const value = Reflect.get(target, property);
          if (typeof value !== "function") return value;
          if (property === "getAgent" || property === "readSpend" || property === "revokeAgent")
            return (...args: unknown[]) => {
              calls.push(property);
              return value.apply(target, args);
            };
          return value.bind(target);
        },
      });
      const h = await createHarness(counted);
      const key = await h.newKey("revoke", 0);
      const mandate = { limits: [{ action: "purchase", currency: "EUR", max_total: "50.00", period: "day" }] };
      expect((await h.call("POST", "/v1/agents", { key, body: { agent_id: "a", identity_commitment: "5", mandate } })).status).toBe(201);

      calls.length = 0;
      const first = await h.call("DELETE", "/v1/agents/a", { key });
      expect(first.status).toBe(200);
      expect(first.body.status).toBe("revoked");
      expect(calls).toEqual(["getAgent", "readSpend", "revokeAgent"]);

      calls.length = 0;
      const again = await h.call("DELETE", "/v1/agents/a", { key });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(calls).toEqual(["getAgent", "readSpend"]);
      expect((await h.call("GET", "/v1/agents/a", { key })).body).toEqual(first.body);
    });
  });
}
