// The guard's Web Bot Auth mode against Cloudflare's reference package:
// requests `web-bot-auth` signs are admitted when their operator is trusted
// and its directory (served signed on a loopback port) holds the key, and
// refused 401 with the reason otherwise; never a 5xx, whatever the headers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseDictionary } from "structured-headers";
import { component, createSignature, webcrypto } from "http-message-sig";
import { jwkToKeyID, signatureHeaders } from "web-bot-auth";
import { Ed25519Signer, helpers } from "web-bot-auth/crypto";
import { type AgentIdentity, createIdentity } from "../../src/agent";
import { type GuardOptions, type GuardMode, zkagentGuard } from "../../src/merchant";
import { DirectoryCache } from "../../src/merchant/modes/web-bot-auth/directories";
import { DIRECTORY_PATH, directoryResponse, MemoryNonceStore } from "../../src/web-bot-auth";
import { fuzzParams } from "../fuzz/support";

const SHOP = "https://shop.example";
let operator: AgentIdentity;
let stranger: AgentIdentity;
let server: ReturnType<typeof Bun.serve>;
let operatorOrigin: string;
let directories: DirectoryCache;

/** The key id as the reference package computes it (jsonwebkey-thumbprint). */
const referenceKeyId = (identity: AgentIdentity) =>
  jwkToKeyID({ kty: "OKP", crv: "Ed25519", x: identity.signing_key }, helpers.WEBCRYPTO_SHA256, helpers.BASE64URL_DECODE);
const jwkOf = (identity: AgentIdentity) => ({ kty: "OKP", crv: "Ed25519", x: identity.signing_key, d: identity.signing_secret });

beforeAll(async () => {
  operator = await createIdentity();
  stranger = await createIdentity();
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (request) => {
      const url = new URL(request.url);
      if (url.pathname !== "/.well-known/http-message-signatures-directory") return new Response("no", { status: 404 });
      return directoryResponse([operator], { origin: url.origin });
    },
  });
  operatorOrigin = `http://127.0.0.1:${server.port}`;
}, 30_000); // two identities: seconds on a loaded machine
afterAll(() => server?.stop(true));

function guardFor(extra: Partial<GuardOptions<GuardMode>> = {}) {
  directories = new DirectoryCache({ allowInsecureLoopback: true });
  return zkagentGuard({
    url: "http://zkagent.invalid",
    apiKey: "zka_unused",
    action: "browse",
    origin: SHOP,
    accept: ["web-bot-auth"],
    signatures: { signatureAgents: [operatorOrigin], nonces: new MemoryNonceStore(), directories },
    // No call to the zkagent service is made for a signature.
    fetch: () => {
      throw new Error("the service must not be called");
    },
    ...extra,
  });
}

interface SignOptions {
  /** Signature-Agent as a dictionary (sig1="…") rather than the legacy string; the reference covers it whole either way. */
  dictionary?: boolean;
  identity?: AgentIdentity;
  url?: string;
  agent?: string;
  created?: Date;
  expires?: Date;
}

/** A request signed by the reference package, with Signature-Agent in the form it writes (a quoted string). */
async function referenceSigned(options: SignOptions = {}): Promise<Request> {
  const url = options.url ?? `${SHOP}/catalog`;
  const agent = JSON.stringify(options.agent ?? operatorOrigin);
  const headers = new Headers({ "signature-agent": options.dictionary ? `sig1=${agent}` : agent });
  const created = options.created ?? new Date();
  const signer = await Ed25519Signer.fromJWK(jwkOf(options.identity ?? operator));
  const signed = await signatureHeaders({ method: "GET", url, headers: Object.fromEntries(headers) }, signer, {
    created,
    expires: options.expires ?? new Date(created.getTime() + 60_000),
  });
  headers.set("signature", signed.Signature);
  headers.set("signature-input", signed["Signature-Input"]);
  return new Request(url.replace(/^https:\/\/[^/]+/, SHOP), { headers });
}

async function reason(response: Response): Promise<string> {
  return ((await response.json()) as { reason: string }).reason;
}

/** The status each reason answers: a replay is 429 (draft -01), a dependency down 502/503 with Retry-After, any other 401. */
const STATUS: Record<string, number> = { replayed_nonce: 429, directory_unavailable: 502, agent_lookup_unavailable: 502, nonce_unavailable: 503 };

async function refused(request: Request, guard = guardFor()): Promise<string> {
  const result = await guard.verify(request);
  expect(result.ok).toBe(false);
  if (result.ok) return "";
  const why = await reason(result.response.clone());
  expect(result.response.status).toBe(STATUS[why] ?? 401);
  if (result.response.status >= 500) expect(Number(result.response.headers.get("retry-after"))).toBeGreaterThan(0);
  return why;
}

describe("requests signed by the reference package (web-bot-auth 0.1)", () => {
  test("a trusted operator's agent whose key is in its directory is admitted, named by operator and keyid", async () => {
    const guard = guardFor();
    const result = await guard.verify(await referenceSigned());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.session).toEqual({
      scheme: "web-bot-auth",
      signature_agent: operatorOrigin + DIRECTORY_PATH,
      keyid: await referenceKeyId(operator),
      request: { method: "GET", origin: SHOP, target: "/catalog" },
    });
  });

  test("a key the operator's directory does not hold: 401 unknown_key", async () => {
    expect(await refused(await referenceSigned({ identity: stranger }))).toBe("unknown_key");
  });

  test("an operator the merchant does not trust: 401 untrusted_agent, and its directory is never fetched", async () => {
    const guard = guardFor();
    expect(await refused(await referenceSigned({ agent: "https://operator.elsewhere.example" }), guard)).toBe("untrusted_agent");
    expect(directories.fetches).toBe(0);
  });

  test("an expired signature: 401 expired", async () => {
    const created = new Date(Date.now() - 600_000);
    expect(await refused(await referenceSigned({ created, expires: new Date(created.getTime() + 300_000) }))).toBe("expired");
  });

  test("a signature made for another authority: 401 bad_signature", async () => {
    expect(await refused(await referenceSigned({ url: "https://other-shop.example/catalog" }))).toBe("bad_signature");
  });

  test("a signature that verifies for the request URL's authority but not the guard's origin: 401 wrong_authority", async () => {
    const request = await referenceSigned({ url: "http://127.0.0.1:9/catalog" });
    const direct = new Request("http://127.0.0.1:9/catalog", { headers: request.headers });
    expect(await refused(direct)).toBe("wrong_authority");
  });

  test("a changed signature or signature input: 401 bad_signature", async () => {
    const request = await referenceSigned();
    const changedInput = new Headers(request.headers);
    changedInput.set(
      "signature-input",
      request.headers.get("signature-input")!.replace(/created=(\d+)/, (_, n) => `created=${Number(n) - 1}`),
    );
    expect(await refused(new Request(request.url, { headers: changedInput }))).toBe("bad_signature");
    const changedSignature = new Headers(request.headers);
    const bytes = Buffer.from(/:([^:]+):/.exec(request.headers.get("signature")!)![1]!, "base64");
    bytes[10]! ^= 1;
    changedSignature.set("signature", `sig1=:${bytes.toString("base64")}:`);
    expect(await refused(new Request(request.url, { headers: changedSignature }))).toBe("bad_signature");
  });

  test("a nonce is accepted once: the same request again is 429 replayed_nonce, on the same route and on another route of the process", async () => {
    const guard = guardFor();
    const request = await referenceSigned();
    expect((await guard.verify(request.clone())).ok).toBe(true);
    expect(await refused(request.clone(), guard)).toBe("replayed_nonce");
    // Two guards given no store share the process's: a signature covers the authority, not the route.
    const routes = [1, 2].map(() =>
      guardFor({ signatures: { signatureAgents: [operatorOrigin], directories: new DirectoryCache({ allowInsecureLoopback: true }) } }),
    );
    const again = await referenceSigned();
    expect((await routes[0]!.verify(again.clone())).ok).toBe(true);
    expect(await refused(again.clone(), routes[1])).toBe("replayed_nonce");
  });

  test("a header the signature does not cover, even one that is not ASCII, does not get in the way", async () => {
    const request = await referenceSigned();
    const headers = new Headers(request.headers);
    headers.set("user-agent", "Agent/1.0 (caf\u00e9)");
    headers.set("x-trace", "a\tb");
    const result = await guardFor().verify(new Request(request.url, { headers }));
    expect(result.ok).toBe(true);
  });

  test("the directory is fetched once for many requests (cached)", async () => {
    const guard = guardFor();
    for (let i = 0; i < 3; i++) expect((await guard.verify(await referenceSigned())).ok).toBe(true);
    expect(directories.fetches).toBe(1);
  });
});

describe("interop with the reference package in the dictionary form (draft -01)", () => {
  test('its signature over Signature-Agent: sig1="…" (covered whole, as web-bot-auth 0.1 signs) is admitted: the member named by the label is the operator', async () => {
    const result = await guardFor().verify(await referenceSigned({ dictionary: true }));
    expect(result.ok).toBe(true);
    if (result.ok && "signature_agent" in result.session) expect(result.session.signature_agent).toBe(operatorOrigin + DIRECTORY_PATH);
  });

  test("a dictionary covered whole with no member for the label is not attributed to another member: missing_signature_agent", async () => {
    const request = await referenceSigned({ dictionary: true });
    const headers = new Headers(request.headers);
    // Re-signed over a field whose only member is named for another label.
    const signer = await Ed25519Signer.fromJWK(jwkOf(operator));
    headers.set("signature-agent", `other=${JSON.stringify(operatorOrigin)}`);
    const created = new Date();
    const signed = await signatureHeaders({ method: "GET", url: `${SHOP}/catalog`, headers: { "signature-agent": headers.get("signature-agent")! } }, signer, {
      created,
      expires: new Date(created.getTime() + 60_000),
    });
    headers.set("signature", signed.Signature);
    headers.set("signature-input", signed["Signature-Input"]);
    expect(await refused(new Request(`${SHOP}/catalog`, { headers }))).toBe("missing_signature_agent");
  });

  test("the legacy string form is still read", async () => {
    expect((await guardFor().verify(await referenceSigned())).ok).toBe(true);
  });
});

describe("the trust list takes origins and directory URLs (draft -01: the operator is its directory URL)", () => {
  test("an origin stands for its well-known directory: a Signature-Agent naming that URL is the same operator", async () => {
    const result = await guardFor().verify(await referenceSigned({ dictionary: true, agent: operatorOrigin + DIRECTORY_PATH }));
    expect(result.ok).toBe(true);
  });

  test("a directory URL with a path is that directory, fetched there; the query is dropped; another path of the same origin is another operator", async () => {
    const guard = guardFor({
      signatures: {
        signatureAgents: [`${operatorOrigin}/agents/keys.json?v=2`],
        nonces: new MemoryNonceStore(),
        directories: new DirectoryCache({
          allowInsecureLoopback: true,
          // The operator serves its directory at /agents/keys.json (signed for its own authority).
          fetch: (request) =>
            new URL(request.url).pathname === "/agents/keys.json"
              ? directoryResponse([operator], { origin: new URL(request.url).origin })
              : new Response("no", { status: 404 }),
        }),
      },
    });
    const result = await guard.verify(await referenceSigned({ dictionary: true, agent: `${operatorOrigin}/agents/keys.json` }));
    expect(result.ok).toBe(true);
    if (result.ok && "signature_agent" in result.session) expect(result.session.signature_agent).toBe(`${operatorOrigin}/agents/keys.json`);
    expect(await refused(await referenceSigned({ dictionary: true }), guard)).toBe("untrusted_agent");
    expect(await refused(await referenceSigned({ dictionary: true, agent: `${operatorOrigin}/other/keys.json` }), guard)).toBe("untrusted_agent");
  });

  test("an entry that is no http(s) origin or URL is refused when the guard is made", () => {
    expect(() => guardFor({ signatures: { signatureAgents: ["ftp://operator.example"] } })).toThrow(/not an http\(s\) origin or URL/);
    expect(() => guardFor({ signatures: { signatureAgents: [operatorOrigin], nonce: "sometimes" as never } })).toThrow(/"required" or "optional"/);
  });
});

describe("dependencies down: 502/503 with Retry-After, never 401 (issue 37)", () => {
  test("the operator's directory cannot be read: 502 directory_unavailable, Retry-After until the next fetch", async () => {
    const guard = zkagentGuard({
      url: "http://zkagent.invalid",
      apiKey: "zka_unused",
      action: "browse",
      origin: SHOP,
      accept: ["web-bot-auth"],
      signatures: {
        signatureAgents: [operatorOrigin],
        nonces: new MemoryNonceStore(),
        directories: new DirectoryCache({ allowInsecureLoopback: true, retryAfterSeconds: 30, fetch: () => new Response("down", { status: 503 }) }),
      },
    });
    const result = await guard.verify(await referenceSigned());
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.response.status).toBe(502);
    expect(Number(result.response.headers.get("retry-after"))).toBeGreaterThanOrEqual(29);
    expect(await reason(result.response)).toBe("directory_unavailable");
  });

  test("the nonce store cannot answer: 503 nonce_unavailable, Retry-After; never admitted", async () => {
    const nonces = {
      claim: () => {
        throw new Error("store down");
      },
    };
    const guard = guardFor({ signatures: { signatureAgents: [operatorOrigin], nonces, directories: new DirectoryCache({ allowInsecureLoopback: true }) } });
    expect(await refused(await referenceSigned(), guard)).toBe("nonce_unavailable");
  });
});

describe("the signature rules", () => {
  /** A signature made with http-message-sig 0.3 directly, to shape what the reference would not write. */
  async function crafted(options: { tag?: string; created?: number; expires?: number; dictionary?: boolean; nonce?: string | null }) {
    const headers = new Headers({ "signature-agent": options.dictionary ? `sig1="${operatorOrigin}"` : JSON.stringify(operatorOrigin) });
    const key = await crypto.subtle.importKey("jwk", jwkOf(operator), { name: "Ed25519" }, false, ["sign"]);
    const now = Math.floor(Date.now() / 1000);
    const created = options.created ?? now;
    const parameters: Record<string, string | number> = {
      created,
      keyid: await referenceKeyId(operator),
      alg: "ed25519",
      expires: options.expires ?? created + 60,
      tag: options.tag ?? "web-bot-auth",
    };
    if (options.nonce !== null) parameters.nonce = options.nonce ?? crypto.randomUUID();
    const fields = await createSignature(
      { kind: "request", method: "GET", targetUri: `${SHOP}/catalog`, fields: [...headers].map(([name, value]) => ({ name, value })) },
      {
        components: ["@authority", options.dictionary ? component("signature-agent", { key: "sig1" }) : "signature-agent"],
        parameters,
        signer: webcrypto.signer(key),
      },
    );
    headers.set("signature", fields.signature);
    headers.set("signature-input", fields.signatureInput);
    return new Request(`${SHOP}/catalog`, { headers });
  }

  test('the IETF draft\'s dictionary form of Signature-Agent (sig1="…", covered with ;key="sig1") is admitted', async () => {
    const result = await guardFor().verify(await crafted({ dictionary: true }));
    expect(result.ok).toBe(true);
    if (result.ok && "signature_agent" in result.session) expect(result.session.signature_agent).toBe(operatorOrigin + DIRECTORY_PATH);
  });

  test("another tag: 401 wrong_tag", async () => {
    expect(await refused(await crafted({ tag: "http-message-signatures-directory" }))).toBe("wrong_tag");
  });

  test("created in the future beyond the 60 s skew: 401 not_yet_valid; within it: admitted", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await refused(await crafted({ created: now + 300 }))).toBe("not_yet_valid");
    expect((await guardFor().verify(await crafted({ created: now + 20 }))).ok).toBe(true);
  });

  test("a window longer than an hour: 401 window_too_long", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await refused(await crafted({ created: now, expires: now + 7200 }))).toBe("window_too_long");
  });

  test("no nonce: 401 nonce_required with Accept-Signature naming nonce (the default, required); admitted when the route's policy is optional", async () => {
    expect(await refused(await crafted({ nonce: null }))).toBe("nonce_required");
    const asked = await guardFor().verify(await crafted({ nonce: null, dictionary: true }));
    expect(asked.ok).toBe(false);
    if (!asked.ok) {
      // RFC 9421 §5.1: a dictionary whose member lists the components and, as parameters, what the signature must carry.
      const wanted = parseDictionary(asked.response.headers.get("accept-signature")!).get("sig1") as [[string, Map<string, unknown>][], Map<string, unknown>];
      expect(wanted[0].map(([name]) => name)).toEqual(["@authority", "signature-agent"]);
      expect(wanted[0][1]![1].get("key")).toBe("sig1");
      expect(wanted[1].get("nonce")).toBe(true);
      expect(wanted[1].get("tag")).toBe("web-bot-auth");
    }
    const optional = guardFor({
      signatures: { signatureAgents: [operatorOrigin], nonce: "optional", directories: new DirectoryCache({ allowInsecureLoopback: true }) },
    });
    const request = await crafted({ nonce: null, dictionary: true });
    expect((await optional.verify(request.clone())).ok).toBe(true);
    expect((await optional.verify(await crafted({ nonce: null }))).ok).toBe(true);
    // Without a nonce nothing is remembered: the same signature passes again within its window (draft -01's baseline).
    expect((await optional.verify(request.clone())).ok).toBe(true);
    // With one, it is still accepted once under "optional".
    const once = await crafted({});
    expect((await optional.verify(once.clone())).ok).toBe(true);
    expect(await refused(once.clone(), optional)).toBe("replayed_nonce");
  });

  test("a route that does not accept web-bot-auth ignores the signature: 401 claim_required", async () => {
    const guard = guardFor({ accept: ["zkagent", "group"] });
    const result = await guard.verify(await referenceSigned());
    expect(result.ok).toBe(false);
    if (!result.ok) expect(await reason(result.response)).toBe("claim_required");
  });

  test("an unsigned request to a signature-only route: 401 signature_required", async () => {
    expect(await refused(new Request(`${SHOP}/catalog`))).toBe("signature_required");
  });

  test("a route that also accepts proofs offers the ZKAgent challenge beside the signature's reason", async () => {
    const guard = guardFor({ accept: ["web-bot-auth", "zkagent"] });
    const result = await guard.verify(await referenceSigned({ identity: stranger }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.response.status).toBe(401);
    expect(result.response.headers.get("www-authenticate")).toMatch(/^ZKAgent realm=/);
    expect(await reason(result.response)).toBe("unknown_key");
  });
});

describe("registered agents' keys (signatures.registeredAgents)", () => {
  /** A stand-in for the zkagent service's GET /v1/signing-keys/{keyid}: the merchant's agents by keyid. */
  async function registry(agents: { agent_id: string; identity: AgentIdentity; status: string }[], down = false) {
    const byKeyId = new Map<string, { agent_id: string; signing_key: string; status: string }>();
    for (const agent of agents)
      byKeyId.set(await referenceKeyId(agent.identity), { agent_id: agent.agent_id, signing_key: agent.identity.signing_key, status: agent.status });
    const asked: string[] = [];
    const fetch = (request: Request) => {
      asked.push(new URL(request.url).pathname);
      if (down) return new Response("down", { status: 503 });
      const found = byKeyId.get(new URL(request.url).pathname.split("/").pop()!);
      return found ? Response.json(found) : Response.json({ error: "Agent not found" }, { status: 404 });
    };
    return { fetch, asked };
  }
  const registeredGuard = (fetch: (request: Request) => Response) =>
    guardFor({ fetch, signatures: { signatureAgents: [operatorOrigin], registeredAgents: true, nonces: new MemoryNonceStore(), directories } });

  /** Signed by the reference with no Signature-Agent at all (it then covers @authority only). */
  async function withoutSignatureAgent(identity: AgentIdentity): Promise<Request> {
    const signer = await Ed25519Signer.fromJWK(jwkOf(identity));
    const created = new Date();
    const signed = await signatureHeaders({ method: "GET", url: `${SHOP}/catalog`, headers: {} }, signer, {
      created,
      expires: new Date(created.getTime() + 60_000),
    });
    return new Request(`${SHOP}/catalog`, { headers: { signature: signed.Signature, "signature-input": signed["Signature-Input"] } });
  }

  test("a registered agent's signature, with no Signature-Agent or an untrusted one, is admitted and names the agent", async () => {
    const service = await registry([{ agent_id: "own", identity: stranger, status: "active" }]);
    const guard = registeredGuard(service.fetch);
    for (const request of [await withoutSignatureAgent(stranger), await referenceSigned({ identity: stranger, agent: "https://platform.example" })]) {
      const result = await guard.verify(request);
      expect(result.ok).toBe(true);
      if (result.ok && "keyid" in result.session) expect(result.session.agent_id).toBe("own");
    }
    // Two requests, one call: the answer is cached (issue 37).
    expect(service.asked).toEqual([`/v1/signing-keys/${await referenceKeyId(stranger)}`]);
  });

  test("revoked: 401 agent_revoked; unknown: the operator's reason; the service down: 502 agent_lookup_unavailable with Retry-After (issue 37: it was 401)", async () => {
    const revoked = await registry([{ agent_id: "own", identity: stranger, status: "revoked" }]);
    expect(await refused(await withoutSignatureAgent(stranger), registeredGuard(revoked.fetch))).toBe("agent_revoked");
    const empty = await registry([]);
    expect(await refused(await withoutSignatureAgent(stranger), registeredGuard(empty.fetch))).toBe("missing_signature_agent");
    expect(await refused(await referenceSigned({ identity: stranger, agent: "https://platform.example" }), registeredGuard(empty.fetch))).toBe(
      "untrusted_agent",
    );
    const down = await registry([], true);
    expect(await refused(await withoutSignatureAgent(stranger), registeredGuard(down.fetch))).toBe("agent_lookup_unavailable");
  });

  test("a flood of random key ids makes one service lookup per key id per cache period (issue 37: one call per forged request)", async () => {
    const service = await registry([]);
    const guard = registeredGuard(service.fetch);
    const keyids = Array.from({ length: 20 }, () => Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url"));
    const base = await withoutSignatureAgent(stranger);
    for (let round = 0; round < 3; round++)
      for (const keyid of keyids) {
        const headers = new Headers(base.headers);
        headers.set("signature-input", base.headers.get("signature-input")!.replace(/keyid="[^"]+"/, `keyid="${keyid}"`));
        expect(await refused(new Request(base.url, { headers }), guard)).toBe("missing_signature_agent");
      }
    expect(service.asked).toHaveLength(20);
    expect(new Set(service.asked).size).toBe(20);
  });

  test("a registered agent's key cannot pass for another: the signature is checked with the key the service answers", async () => {
    // The service says the keyid is `operator`'s key while `stranger` signed: the signature does not verify.
    const service = await registry([{ agent_id: "own", identity: operator, status: "active" }]);
    const request = await withoutSignatureAgent(stranger);
    const forged = new Headers(request.headers);
    forged.set("signature-input", request.headers.get("signature-input")!.replace(/keyid="[^"]+"/, `keyid="${await referenceKeyId(operator)}"`));
    expect(await refused(new Request(request.url, { headers: forged }), registeredGuard(service.fetch))).toBe("bad_signature");
  });

  test("without the option, a signature with no Signature-Agent is missing_signature_agent and the service is never asked", async () => {
    const service = await registry([{ agent_id: "own", identity: stranger, status: "active" }]);
    expect(await refused(await withoutSignatureAgent(stranger), guardFor({ fetch: service.fetch }))).toBe("missing_signature_agent");
    expect(service.asked).toEqual([]);
  });
});

test("random Signature, Signature-Input and Signature-Agent values get a 4xx, never a 5xx", async () => {
  const guard = guardFor();
  const valid = await referenceSigned();
  const pieces = [
    valid.headers.get("signature")!,
    valid.headers.get("signature-input")!,
    valid.headers.get("signature-agent")!,
    'sig1=("@authority" "signature-agent");created=1;expires=2;keyid="x";nonce="n";tag="web-bot-auth"',
    "sig1=:AAAA:",
    `sig1="${operatorOrigin}"`,
  ];
  const value = fc.oneof(
    fc.string({ maxLength: 200 }).map((text) => text.replace(/[\r\n\0]/g, " ")),
    fc.constantFrom(...pieces),
    fc.tuple(fc.constantFrom(...pieces), fc.string({ maxLength: 8 })).map(([piece, noise]) => piece + noise.replace(/[\r\n\0]/g, "")),
  );
  await fc.assert(
    fc.asyncProperty(fc.option(value), fc.option(value), fc.option(value), async (signature, input, agent) => {
      const headers = new Headers();
      try {
        if (signature !== null) headers.set("signature", signature);
        if (input !== null) headers.set("signature-input", input);
        if (agent !== null) headers.set("signature-agent", agent);
      } catch {
        return; // not a value a header can carry
      }
      const result = await guard.verify(new Request(`${SHOP}/catalog`, { headers }));
      if (result.ok) return;
      expect(result.response.status).toBeGreaterThanOrEqual(400);
      expect(result.response.status).toBeLessThan(500);
    }),
    fuzzParams(300),
  );
});
