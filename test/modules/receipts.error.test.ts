// Receipts when signing cannot happen: the decision stands and is answered
// (receipt null), and the next status read with a working signer signs it.
import { describe, expect, test } from "bun:test";
import { createPublicKey, verify } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { observed } from "../support/contract";
import { loadConfig } from "../../src/config";
import { startServer } from "../../src/main";
import { newSigningKey } from "../../src/receipts/keys";
import { ReceiptSigner } from "../../src/receipts/signer";
import { openSqlite } from "../../src/store/sqlite";
import { BASE, createHarness } from "../support/harness";
import { identity } from "../support/proofs";
import { proveFor, registerAgent, requestChallenge, submitProof } from "./flow";

const SECRET = "the receipt key secret, thirty-two characters or more";

describe("signing fails after the decision", () => {
  test("the proof is answered without a receipt; a status read with the secret signs it later", async () => {
    const store = openSqlite(":memory:");
    await store.ensureSigningKey(await newSigningKey(Date.now(), SECRET));
    // This node lacks RECEIPT_KEY_SECRET: it cannot unseal the shared key.
    const h = await createHarness(store, { receipts: { signer: new ReceiptSigner(store), issuer: "https://zk.example" } });
    const key = await h.newKey();
    const agent = await identity("receipts-error");
    await registerAgent(h, key, "agent", agent);
    const challenge = await requestChallenge(h, key, "agent", "purchase");
    const verdict = await submitProof(h, key, challenge.challenge_id, await proveFor(agent, challenge, "purchase"));
    expect(verdict.status).toBe(200);
    expect(verdict.body).toMatchObject({ verified: true, receipt: null });
    expect((await store.getChallenge(challenge.challenge_id))?.status).toBe("verified");
    expect((await h.call("GET", `/v1/verify/status/${challenge.challenge_id}`, { key })).body).toMatchObject({ status: "verified", receipt: null });

    // A node with the secret (same store) signs and stores it on its first read.
    const healthy = observed(createApp({ ...h.deps, receipts: { signer: new ReceiptSigner(store, { secret: SECRET }), issuer: "https://zk.example" } }));
    const read = await healthy.handle(new Request(`${BASE}/v1/verify/status/${challenge.challenge_id}`, { headers: { "x-api-key": key } }));
    const { receipt } = (await read.json()) as { receipt: string };
    const [header, payload, signature] = receipt.split(".") as [string, string, string];
    const jwks = (await (await healthy.handle(new Request(`${BASE}/.well-known/jwks.json`))).json()) as { keys: Record<string, string>[] };
    const jwk = jwks.keys.find((k) => k.kid === JSON.parse(Buffer.from(header, "base64url").toString()).kid)!;
    const publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x } as any, format: "jwk" });
    expect(verify(null, Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, "base64url"))).toBe(true);
    expect(JSON.parse(Buffer.from(payload, "base64url").toString())).toMatchObject({
      iss: "https://zk.example",
      jti: challenge.challenge_id,
      status: "verified",
    });
    expect((await store.getChallenge(challenge.challenge_id))?.receipt).toBe(receipt);
  });
});

describe("start-up", () => {
  test("a sealed signing key without RECEIPT_KEY_SECRET stops the server at start, naming the setting", async () => {
    const dir = mkdtempSync(join(tmpdir(), "zkagent-receipts-start-"));
    try {
      const path = join(dir, "z.db");
      const store = openSqlite(path);
      await store.ensureSigningKey(await newSigningKey(Date.now(), SECRET));
      await store.close();
      const config = loadConfig({ DATABASE_URL: path, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent" });
      await expect(startServer(config, { bootstrap: false })).rejects.toThrow(/RECEIPT_KEY_SECRET/);
      const server = await startServer({ ...config, receiptKeySecret: SECRET, publicUrl: "https://zkagent.example" }, { bootstrap: false });
      try {
        const jwks = await fetch(`${server.url}/.well-known/jwks.json`);
        expect(jwks.status).toBe(200);
        expect(((await jwks.json()) as { keys: unknown[] }).keys).toHaveLength(1);
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
