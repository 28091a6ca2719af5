// Issue 11, items 5, 6, 13, 14: inputs that used to differ between the stores
// or be accepted though nothing could use them. Every case on both stores.
import { beforeEach, describe, expect, test } from "bun:test";
import { COMMITMENT_OF_ZERO } from "../../src/identity/commitment";
import { createHarness, type Harness } from "../support/harness";
import { storesUnderTest } from "../support/stores";

for (const { name, open } of storesUnderTest()) {
  describe(`identifiers and encodings (${name})`, () => {
    let h: Harness;
    let key: string;
    let challengeId: string;
    beforeEach(async () => {
      h = await createHarness(await open());
      key = await h.newKey("ids", 0);
      expect((await h.call("POST", "/v1/agents", { key, body: { agent_id: "agent", identity_commitment: "5" } })).status).toBe(201);
      challengeId = (await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "agent", action: "buy" } })).body.challenge_id;
    });

    test("6. NUL: body identifiers → 400 naming the field; ids in paths and challenge_id name nothing → 404; never 500", async () => {
      const cases: [string, () => ReturnType<Harness["call"]>, number, string][] = [
        [
          "challenge action",
          () => h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "agent", action: "buy\u0000" } }),
          400,
          "Invalid field action: ",
        ],
        [
          "challenge agent_id",
          () => h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "\u0000agent", action: "buy" } }),
          400,
          "Invalid field agent_id: ",
        ],
        [
          "register agent_id",
          () => h.call("POST", "/v1/agents", { key, body: { agent_id: "a\u0000", identity_commitment: "5" } }),
          400,
          "Invalid field agent_id: ",
        ],
        [
          "proof challenge_id",
          () => h.call("POST", "/v1/verify/proof", { key, body: { challenge_id: `${challengeId}\u0000`, proof: "p" } }),
          404,
          "Challenge not found",
        ],
        [
          "proof challenge_id, Idempotency-Key",
          () => h.call("POST", "/v1/verify/proof", { key, body: { challenge_id: "\u0000", proof: "p" }, headers: { "idempotency-key": "nul-1" } }),
          404,
          "Challenge not found",
        ],
        ["status path", () => h.call("GET", `/v1/verify/status/${challengeId}%00`, { key }), 404, "Session not found"],
        ["GET agent path", () => h.call("GET", "/v1/agents/agent%00", { key }), 404, "Agent not found"],
        ["DELETE agent path", () => h.call("DELETE", "/v1/agents/%00", { key }), 404, "Agent not found"],
        ["PUT mandate path", () => h.call("PUT", "/v1/agents/agent%00/mandate", { key, body: {} }), 404, "Agent not found"],
        ["DELETE mandate path", () => h.call("DELETE", "/v1/agents/%00/mandate", { key }), 404, "Agent not found"],
      ];
      for (const [label, send, status, error] of cases) {
        const response = await send();
        expect({ label, status: response.status }).toEqual({ label, status });
        expect(String(response.body.error)).toStartWith(error);
      }
      // The challenge is untouched. A NUL inside context was data here once (canonical JSON escapes it);
      // since issue 18 every stored string follows the identifier rule, at any depth (stored-text.error.test.ts).
      expect((await h.store.getChallenge(challengeId))?.status).toBe("pending");
      const withNul = await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: "agent", action: "buy", context: { n: "v\u0000" } } });
      expect(withNul).toMatchObject({ status: 400, body: { error: "Invalid field context: n must not contain U+0000 (NUL)" } });
    });

    test("13. agent ids . and .. are refused at registration and at challenge creation", async () => {
      for (const agentId of [".", ".."]) {
        const registered = await h.call("POST", "/v1/agents", { key, body: { agent_id: agentId, identity_commitment: "5" } });
        expect(registered.status).toBe(400);
        expect(registered.body.error).toStartWith("Invalid field agent_id: ");
        const asked = await h.call("POST", "/v1/verify/challenge", { key, body: { agent_id: agentId, action: "buy" } });
        expect(asked.status).toBe(400);
      }
      for (const fine of ["...", ".a", "a.", "a..b"])
        expect((await h.call("POST", "/v1/agents", { key, body: { agent_id: fine, identity_commitment: "5" } })).status).toBe(201);
    });

    test("5. the commitment of secret 0 (Poseidon(0), a public constant) is refused at registration", async () => {
      const response = await h.call("POST", "/v1/agents", { key, body: { agent_id: "zero", identity_commitment: COMMITMENT_OF_ZERO } });
      expect(response.status).toBe(400);
      expect(response.body.error).toStartWith("Invalid field identity_commitment: ");
      expect(await h.store.getAgent((await h.store.listKeys())[0]!.id, "zero")).toBeNull();
    });

    test("14. a UTF-8 byte order mark is 400 and a charset other than UTF-8 is 415, each named; utf-8 in any spelling is fine", async () => {
      const body = '{"agent_id":"agent","action":"buy"}';
      const bom = await h.call("POST", "/v1/verify/challenge", { key, body: `\ufeff${body}` });
      expect(bom.status).toBe(400);
      expect(bom.body.error).toBe("Malformed JSON body");
      expect(bom.body.message).toContain("byte order mark");
      for (const charset of ["utf-16", "UTF-16LE", "latin1", "iso-8859-1", '"utf-16"']) {
        const response = await h.call("POST", "/v1/verify/challenge", { key, body, headers: { "content-type": `application/json; charset=${charset}` } });
        expect(response.status).toBe(415);
        expect(response.body.error).toBe("Unsupported Media Type");
        expect(response.body.message).toContain("charset");
      }
      for (const charset of ["utf-8", "UTF-8", '"utf-8"', "utf8"]) {
        const response = await h.call("POST", "/v1/verify/challenge", { key, body, headers: { "content-type": `application/json; charset=${charset}` } });
        expect(response.status).toBe(200);
      }
    });
  });
}
