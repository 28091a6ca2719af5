// GET /v1/signing-keys/{keyid}: which of the calling key's agents a Web
// Bot Auth signature's keyid (the RFC 7638 thumbprint of the agent's signing
// key, as the reference package computes it) names; revocation shows; no key
// sees another's agents; rows stored before the thumbprint was are filled.
import { beforeAll, describe, expect, test } from "bun:test";
import { jwkToKeyID } from "web-bot-auth";
import { helpers } from "web-bot-auth/crypto";
import { type AgentIdentity, createIdentity } from "../../src/agent";
import { fillSigningKeyIds } from "../../src/modules/agents/service";
import { createHarness, type Harness } from "../support/harness";

let h: Harness;
let key: string;
let otherKey: string;
let agent: AgentIdentity;
let keyid: string;

const referenceKeyId = (x: string) => jwkToKeyID({ kty: "OKP", crv: "Ed25519", x }, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE);

beforeAll(async () => {
  h = await createHarness();
  key = await h.newKey("platform");
  otherKey = await h.newKey("another platform");
  agent = await createIdentity();
  keyid = await referenceKeyId(agent.signing_key);
  const registered = await h.call("POST", "/v1/agents", {
    key,
    body: { agent_id: "signer", identity_commitment: agent.identity_commitment, signing_key: agent.signing_key },
  });
  expect(registered.status).toBe(201);
});

describe("GET /v1/signing-keys/{keyid}", () => {
  test("the keyid of the agent's signing key names the agent", async () => {
    const response = await h.call("GET", `/v1/signing-keys/${keyid}`, { key });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ agent_id: "signer", signing_key: agent.signing_key, status: "active" });
  });

  test("another key's lookup finds nothing: 404", async () => {
    const response = await h.call("GET", `/v1/signing-keys/${keyid}`, { key: otherKey });
    expect(response.status).toBe(404);
    expect(response.body.error).toBe("Agent not found");
  });

  test("an unknown or malformed keyid: 404", async () => {
    expect((await h.call("GET", `/v1/signing-keys/${"A".repeat(43)}`, { key })).status).toBe(404);
    expect((await h.call("GET", "/v1/signing-keys/not%20a%20keyid", { key })).status).toBe(404);
  });

  test("a signing key two of the key's agents share names neither: 404 saying so", async () => {
    const shared = await createIdentity();
    for (const id of ["twin-1", "twin-2"]) {
      const registered = await h.call("POST", "/v1/agents", {
        key,
        body: { agent_id: id, identity_commitment: shared.identity_commitment, signing_key: shared.signing_key },
      });
      expect(registered.status).toBe(201);
    }
    const response = await h.call("GET", `/v1/signing-keys/${await referenceKeyId(shared.signing_key)}`, { key });
    expect(response.status).toBe(404);
    expect(response.body.message).toContain("share");
  });

  test("a revoked agent reads back revoked", async () => {
    const other = await createIdentity();
    await h.call("POST", "/v1/agents", { key, body: { agent_id: "gone", identity_commitment: other.identity_commitment, signing_key: other.signing_key } });
    expect((await h.call("DELETE", "/v1/agents/gone", { key })).status).toBe(200);
    const response = await h.call("GET", `/v1/signing-keys/${await referenceKeyId(other.signing_key)}`, { key });
    expect(response.status).toBe(200);
    expect(response.body.status).toBe("revoked");
  });

  test("an agent stored without its thumbprint (registered before it was stored) is found once the start fills it", async () => {
    const legacy = await createIdentity();
    const [keyId] = key.split("_").slice(1, 2);
    const record = (await h.store.getAgent(keyId!, "signer"))!;
    await h.store.registerAgent({ ...record, agentId: "legacy", signingKey: legacy.signing_key, signingKeyId: null });
    const legacyKeyId = await referenceKeyId(legacy.signing_key);
    expect((await h.call("GET", `/v1/signing-keys/${legacyKeyId}`, { key })).status).toBe(404);
    expect(await fillSigningKeyIds(h.store)).toBe(1);
    expect(await fillSigningKeyIds(h.store)).toBe(0);
    const response = await h.call("GET", `/v1/signing-keys/${legacyKeyId}`, { key });
    expect(response.status).toBe(200);
    expect(response.body.agent_id).toBe("legacy");
  });
});
