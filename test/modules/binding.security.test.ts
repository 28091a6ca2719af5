// Issue 11, items 1–4: what the proof binds is exactly what the platform
// sent, or the request is refused. Bodies are sent as raw text, since the
// point is what JSON.parse would hide (duplicates, escapes, number spelling).
// Every case on both stores.
import { beforeEach, describe, expect, test } from "bun:test";
import { createHarness, type Harness } from "../support/harness";
import { storesUnderTest } from "../support/stores";

const raw = (h: Harness, key: string, path: string, text: string, headers: Record<string, string> = {}) =>
  h.call("POST", path, { key, body: text, headers: { "content-type": "application/json", ...headers } });

for (const { name, open } of storesUnderTest()) {
  describe(`I-JSON request bodies (${name})`, () => {
    let h: Harness;
    let key: string;
    beforeEach(async () => {
      h = await createHarness(await open());
      key = await h.newKey("binding", 0);
    });

    const challenge = (text: string, headers?: Record<string, string>) => raw(h, key, "/v1/verify/challenge", text, headers);
    const pending = () => h.store.countPending(h.clock.now());

    test("1. integers beyond 2^53 − 1 are refused, naming the field; 2^53 − 1 is bound exactly", async () => {
      for (const [text, field] of [
        ['{"agent_id":"a","action":"purchase","context":{"order_id":1234567890123456789}}', "context.order_id"],
        ['{"agent_id":"a","action":"purchase","context":{"order_id":1234567890123456768}}', "context.order_id"],
        ['{"agent_id":"a","action":"purchase","context":{"n":9007199254740993}}', "context.n"],
        ['{"agent_id":"a","action":"purchase","context":{"n":9007199254740992}}', "context.n"],
        ['{"agent_id":"a","action":"purchase","context":{"items":[1,{"qty":-9007199254740992}]}}', "context.items[1].qty"],
        ['{"agent_id":"a","action":"purchase","context":{"amount":0.1000000000000000000001}}', "context.amount"],
      ] as const) {
        const response = await challenge(text);
        expect(response.status).toBe(400);
        expect(response.body.error).toStartWith(`Invalid field ${field}: `);
      }
      expect(await pending()).toBe(0);
      const ok = await challenge('{"agent_id":"a","action":"purchase","context":{"n":9007199254740991,"amount":20.00}}');
      expect(ok.status).toBe(200);
      expect((await h.store.getChallenge(ok.body.challenge_id))?.context).toBe('{"amount":20,"n":9007199254740991}');
    });

    test("2. duplicate member names are refused at any depth, also where the service ignores the field", async () => {
      for (const [text, field] of [
        ['{"agent_id":"a","action":"purchase","context":{"amount":20,"amount":2000}}', "context.amount"],
        ['{"agent_id":"a","action":"refund","action":"purchase"}', "action"],
        ['{"agent_id":"a","action":"purchase","note":1,"note":1}', "note"],
        ['{"agent_id":"a","action":"purchase","context":{"a":{"b":[{"c":1,"c":1}]}}}', "context.a.b[0].c"],
      ] as const) {
        const response = await challenge(text);
        expect(response.status).toBe(400);
        expect(response.body.error).toStartWith(`Invalid field ${field}: `);
      }
      expect(await pending()).toBe(0);
    });

    test("3. lone surrogates in action and agent_id are refused; U+FFFD itself is an ordinary character", async () => {
      for (const [text, field] of [
        ['{"agent_id":"a","action":"refund\\ud800"}', "action"],
        ['{"agent_id":"a","action":"refund\\udc00"}', "action"],
        ['{"agent_id":"agent\\ud800","action":"refund"}', "agent_id"],
      ] as const) {
        const response = await challenge(text);
        expect(response.status).toBe(400);
        expect(response.body.error).toStartWith(`Invalid field ${field}: `);
      }
      expect(await pending()).toBe(0);
      const replacement = await challenge('{"agent_id":"a","action":"refund\\ufffd"}');
      expect(replacement.status).toBe(200);
      expect((await h.store.getChallenge(replacement.body.challenge_id))?.action).toBe("refund\ufffd");
      const registered = await raw(h, key, "/v1/agents", '{"agent_id":"bot\\udfff","identity_commitment":"5"}');
      expect(registered.status).toBe(400);
      expect(registered.body.error).toStartWith("Invalid field agent_id: ");
    });

    test("4. non-finite numbers and lone surrogates in context are 400, never 500; with an Idempotency-Key too, on both POSTs", async () => {
      const bodies: [string, string][] = [
        ['{"agent_id":"a","action":"b","context":{"x":1e400}}', "context.x"],
        [`{"agent_id":"a","action":"b","context":{"x":${"9".repeat(400)}}}`, "context.x"],
        ['{"agent_id":"a","action":"b","context":{"x":"\\ud800"}}', "context.x"],
        ['{"agent_id":"a","action":"b","context":{"\\ud800":1}}', 'context["\\ud800"]'],
      ];
      for (const [text, field] of bodies) {
        for (const headers of [{}, { "idempotency-key": `k-${crypto.randomUUID()}` }] as Record<string, string>[]) {
          const response = await challenge(text, headers);
          expect(response.status).toBe(400);
          expect(response.body.error).toStartWith(`Invalid field ${field}: `);
        }
      }
      // Fields the proof endpoint ignores are fingerprinted for idempotency: they are checked as well.
      for (const extra of ['"x":1e400', '"x":"\\udc00"', '"\\ud800":true', '"x":1,"x":2']) {
        for (const headers of [{}, { "idempotency-key": `k-${crypto.randomUUID()}` }] as Record<string, string>[]) {
          const response = await raw(h, key, "/v1/verify/proof", `{"challenge_id":"ch_x","proof":"p",${extra}}`, headers);
          expect(response.status).toBe(400);
          expect(response.body.error).toStartWith("Invalid field ");
        }
      }
    });
  });
}
