// The agent's side against Cloudflare's libraries: what the SDK's fetch and
// `zkagent fetch --signature-agent` send (draft -01's dictionary form)
// verifies with http-message-sig 0.3, every attempt signed afresh, with keyid
// the thumbprint web-bot-auth computes for what `zkagent directory` publishes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { component, verifySignature, webcrypto } from "http-message-sig";
import { jwkToKeyID } from "web-bot-auth";
import { helpers } from "web-bot-auth/crypto";
import { type AgentIdentity, createIdentity, zkagentFetch } from "../../src/agent";
import { cli } from "../http-auth/support";

const OPERATOR = "https://agents.operator.example";
let identity: AgentIdentity & { agent_id: string };
let other: AgentIdentity;
let tmp: string;
let identityFile: string;
let otherFile: string;

beforeAll(async () => {
  identity = { ...(await createIdentity()), agent_id: "signed-shopper" };
  other = await createIdentity();
  tmp = mkdtempSync(join(tmpdir(), "zkagent-wba-"));
  identityFile = join(tmp, "agent.json");
  otherFile = join(tmp, "other.json");
  writeFileSync(identityFile, JSON.stringify(identity), { mode: 0o600 });
  writeFileSync(otherFile, JSON.stringify(other), { mode: 0o600 });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * Cloudflare's verdict on a request: the signature's parameters when it
 * verifies with `x`'s key, else the error. By http-message-sig 0.3, the
 * reference's RFC 9421 library: web-bot-auth 0.1's verify() runs on its older
 * 0.2, which puts the whole Signature-Agent field in the base even for a
 * component naming a member (`;key="sig1"`), so it cannot check draft -01's
 * form (docs/http-auth.md, "Draft -01").
 */
async function referenceVerify(request: Request, x: string): Promise<{ keyid: string; nonce?: string; tag: string }> {
  const key = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x }, { name: "Ed25519" }, false, ["verify"]);
  const verified = await verifySignature(
    { kind: "request", method: request.method, targetUri: request.url, fields: [...request.headers].map(([name, value]) => ({ name, value })) },
    {
      label: "sig1",
      policy: {
        algorithms: ["ed25519"],
        requiredComponents: ["@authority", component("signature-agent", { key: "sig1" })],
        requiredParameters: ["created", "expires", "keyid", "nonce", "tag"],
      },
      resolveVerifier: () => webcrypto.verifier(key),
    },
  );
  return verified.parameters as { keyid: string; nonce?: string; tag: string };
}

/** The keyids `zkagent directory --json` publishes for these identity files, computed by the reference. */
async function publishedKeyIds(...files: string[]): Promise<string[]> {
  const { stdout, code } = await cli(["directory", ...files.flatMap((file) => ["--identity", file]), "--json"]);
  expect(code).toBe(0);
  const directory = JSON.parse(stdout) as { keys: JsonWebKey[] };
  return Promise.all(directory.keys.map((key) => jwkToKeyID(key, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE)));
}

describe("zkagent directory", () => {
  test("--json prints the JWKS of the identities' public keys, no secret; without it, each keyid", async () => {
    const { stdout, code } = await cli(["directory", "--identity", identityFile, "--identity", otherFile, "--json"]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ keys: [identity, other].map((i) => ({ kty: "OKP", crv: "Ed25519", x: i.signing_key })) });
    for (const secret of [identity.secret, identity.signing_secret, other.secret, other.signing_secret]) expect(stdout).not.toContain(secret);
    const text = await cli(["directory", "--identity", identityFile]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`keyid ${(await publishedKeyIds(identityFile))[0]}`);
    expect(text.stdout).not.toContain(identity.signing_secret);
  }, 30_000); // three CLI processes: seconds on a loaded machine

  test("an identity without signing_key is a usage error (exit 2)", async () => {
    const bare = join(tmp, "bare.json");
    writeFileSync(bare, JSON.stringify({ secret: "1" }));
    const { code, stderr } = await cli(["directory", "--identity", bare]);
    expect(code).toBe(2);
    expect(stderr).toContain('has no "signing_key"');
  });
});

describe("the SDK's fetch with signatureAgent", () => {
  test("every attempt (the claim's retry included) is signed afresh and passes the reference's verify, keyid as published", async () => {
    const sent: Request[] = [];
    const send = zkagentFetch({
      identity,
      signatureAgent: OPERATOR,
      fetch: async (request) => {
        sent.push(request.clone());
        // First a claim request (ZKAgent realm only), then an answer: the agent repeats with its claim.
        return sent.length === 1 ? new Response("{}", { status: 401, headers: { "www-authenticate": 'ZKAgent realm="shop"' } }) : new Response("ok");
      },
    });
    const response = await send("https://shop.example/catalog?page=2");
    expect(response.status).toBe(200);
    expect(sent).toHaveLength(2);
    const [published] = await publishedKeyIds(identityFile);
    const nonces = new Set<string>();
    for (const request of sent) {
      expect(request.headers.get("signature-agent")).toBe(`sig1="${OPERATOR}"`);
      const params = await referenceVerify(request, identity.signing_key);
      expect(params.keyid).toBe(published!);
      expect(params.tag).toBe("web-bot-auth");
      nonces.add(params.nonce!);
    }
    expect(nonces.size).toBe(2);
    expect(sent[1]!.headers.get("authorization")).toBe('ZKAgent agent="signed-shopper"');
    // The reference refuses it under another key: the verdict above is not vacuous.
    await expect(referenceVerify(sent[0]!, other.signing_key)).rejects.toThrow();
  });

  test('draft -01\'s form: Signature-Agent a dictionary member covered as "signature-agent";key="sig1"; a body\'s Content-Digest covered too, and the reference verifies both', async () => {
    const sent: Request[] = [];
    const send = zkagentFetch({ identity, signatureAgent: OPERATOR, fetch: async (request) => (sent.push(request), new Response("ok")) });
    const body = JSON.stringify({ amount: "12.00", currency: "EUR" });
    await send("https://shop.example/orders", { method: "POST", headers: { "content-type": "application/json" }, body });
    await send("https://shop.example/catalog");
    const [post, get] = sent as [Request, Request];
    expect(post.headers.get("signature-input")).toStartWith('sig1=("@authority" "signature-agent";key="sig1" "content-digest");');
    // The digest is the body's, computed independently here.
    const digest = new Bun.CryptoHasher("sha256").update(body).digest("base64");
    expect(post.headers.get("content-digest")).toBe(`sha-256=:${digest}:`);
    expect(await post.text()).toBe(body);
    expect((await referenceVerify(post, identity.signing_key)).tag).toBe("web-bot-auth");
    expect(get.headers.get("signature-input")).toStartWith('sig1=("@authority" "signature-agent";key="sig1");');
    expect(get.headers.has("content-digest")).toBe(false);
    expect((await referenceVerify(get, identity.signing_key)).tag).toBe("web-bot-auth");
  });

  test("a signature agent that is not an http(s) origin, or an identity without signing keys, is refused before anything is sent", async () => {
    const sent: Request[] = [];
    const capture = async (request: Request) => (sent.push(request), new Response("ok"));
    await expect(zkagentFetch({ identity, signatureAgent: "ftp://operator.example", fetch: capture })("https://shop.example/")).rejects.toThrow(TypeError);
    await expect(zkagentFetch({ identity: { agent_id: "x", secret: "1" }, signatureAgent: OPERATOR, fetch: capture })("https://shop.example/")).rejects.toThrow(
      /signing_key/,
    );
    expect(sent).toHaveLength(0);
  });
});

describe("zkagent fetch --signature-agent", () => {
  let server: ReturnType<typeof Bun.serve>;
  beforeAll(() => {
    // Answers 200 and the keyid when the reference verifies the signature with the identity's key, else 403.
    server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (request) => {
        try {
          const params = await referenceVerify(request, identity.signing_key);
          const digest = request.headers.get("content-digest");
          if (digest === null) return Response.json({ keyid: params.keyid, agent: request.headers.get("signature-agent") });
          // With a body: the digest covered, and the body's own.
          const body = await request.text();
          return Response.json({
            covered: request.headers.get("signature-input")!.includes('"content-digest"'),
            digest,
            body_digest: `sha-256=:${new Bun.CryptoHasher("sha256").update(body).digest("base64")}:`,
          });
        } catch (error) {
          return new Response(String(error), { status: 403 });
        }
      },
    });
  });
  afterAll(() => server.stop(true));

  test("the request it sends passes the reference's verify, with the keyid `zkagent directory` publishes", async () => {
    const { stdout, code, stderr } = await cli(["fetch", `http://127.0.0.1:${server.port}/catalog`, "--identity", identityFile, "--signature-agent", OPERATOR]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ keyid: (await publishedKeyIds(identityFile))[0], agent: `sig1="${OPERATOR}"` });
  });

  test("with a body (--data), Content-Digest is sent, covered, and the body's", async () => {
    const { stdout, code } = await cli([
      "fetch",
      `http://127.0.0.1:${server.port}/orders`,
      "--identity",
      identityFile,
      "--signature-agent",
      OPERATOR,
      "--data",
      '{"amount":"3.00","currency":"EUR"}',
    ]);
    expect(code).toBe(0);
    const answer = JSON.parse(stdout);
    expect(answer.covered).toBe(true);
    expect(answer.digest).toBe(answer.body_digest);
  });

  test("without it nothing is signed (the server refuses)", async () => {
    const { code } = await cli(["fetch", `http://127.0.0.1:${server.port}/catalog`, "--identity", identityFile]);
    expect(code).toBe(1);
  });

  test("an ORIGIN with a path is a usage error (exit 2)", async () => {
    const { code, stderr } = await cli(["fetch", `http://127.0.0.1:${server.port}/`, "--identity", identityFile, "--signature-agent", `${OPERATOR}/keys`]);
    expect(code).toBe(2);
    expect(stderr).toContain("must be an origin");
  });
});

test("under Node 20 too: the SDK bundled for Node signs a request and serves a signed directory that the reference accepts", async () => {
  const outdir = join(import.meta.dir, "../../build/sdk-node-wba-test");
  rmSync(outdir, { recursive: true, force: true });
  const built = await Bun.build({ entrypoints: [join(import.meta.dir, "../../src/agent/index.ts")], outdir, target: "node", packages: "external" });
  expect(built.success).toBe(true);
  const script = `
    import { requestSigner, directoryResponse } from ${JSON.stringify(join(outdir, "index.js"))};
    const identity = ${JSON.stringify({ signing_key: identity.signing_key, signing_secret: identity.signing_secret })};
    const signer = await requestSigner(identity, ${JSON.stringify(OPERATOR)});
    const request = await signer.sign(new Request("https://shop.example/catalog"));
    const directory = await directoryResponse([identity], { origin: ${JSON.stringify(OPERATOR)} });
    process.stdout.write(JSON.stringify({ headers: [...request.headers], directory: [...directory.headers], body: await directory.text() }));`;
  const child = Bun.spawnSync(["node", "--input-type=module", "-e", script], { cwd: tmp, stdout: "pipe", stderr: "pipe" });
  rmSync(outdir, { recursive: true, force: true });
  expect(child.stderr.toString()).toBe("");
  expect(child.exitCode).toBe(0);
  const out = JSON.parse(child.stdout.toString()) as { headers: [string, string][]; directory: [string, string][]; body: string };
  const params = await referenceVerify(new Request("https://shop.example/catalog", { headers: out.headers }), identity.signing_key);
  expect(params.keyid).toBe((await publishedKeyIds(identityFile))[0]!);
  expect(JSON.parse(out.body)).toEqual({ keys: [{ kty: "OKP", crv: "Ed25519", x: identity.signing_key }] });
  expect(new Headers(out.directory).get("signature-input")).toContain('tag="http-message-signatures-directory"');
}, 30_000);
