// Issue 18, items 2, 3 and 5: what a mandate, a context and a principal's JWS
// may carry, with the same answer on both stores, and nothing committed under
// an answer that says the request failed.
import { beforeEach, describe, expect, test } from "bun:test";
import { sign } from "node:crypto";
import { createPrincipal } from "../../src/agent";
import { privateKeyFromSeed } from "../../src/identity/signature";
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
      h.call("POST", "/v1/agents", { key, body: { agent_id: agent, identity_commitment: "5", principal_key: principal.principal_key, mandate: { mandate_jws: jws } } });

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
