// Key directories: served signed by the SDK's directoryResponse and read
// back by the reference's verifier, fetched by the guard's cache under the
// project's source rules (https, or http to loopback only when allowed;
// bounded size; no cross-origin redirect; Cache-Control honoured within
// bounds), and only keys that signed the directory are usable.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { verifySignature, webcrypto } from "http-message-sig";
import { type AgentIdentity, createIdentity } from "../../src/agent";
import { cacheSeconds, DirectoryCache } from "../../src/merchant/modes/web-bot-auth/directories";
import { DIRECTORY_PATH, DirectoryError, directoryResponse, keyIdOf, MemoryNonceStore, NonceStoreFull, nonceKey, readDirectory } from "../../src/web-bot-auth";
import { fuzzParams } from "../fuzz/support";

let a: AgentIdentity;
let b: AgentIdentity;
/** What each path of the test operator answers, set per test. */
const routes = new Map<string, (request: Request, origin: string) => Response | Promise<Response>>();
let server: ReturnType<typeof Bun.serve>;
let other: ReturnType<typeof Bun.serve>;
let origin: string;

beforeAll(async () => {
  a = await createIdentity();
  b = await createIdentity();
  server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (request) => {
      const url = new URL(request.url);
      const route = routes.get(url.pathname);
      return route ? route(request, url.origin) : new Response("not found", { status: 404 });
    },
  });
  other = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request) => directoryResponse([a], { origin: new URL(request.url).origin }) });
  origin = `http://127.0.0.1:${server.port}`;
});
afterAll(() => {
  server.stop(true);
  other.stop(true);
});

const serve = (handler: (request: Request, origin: string) => Response | Promise<Response>) => routes.set(DIRECTORY_PATH, handler);

describe("directoryResponse (the operator's side)", () => {
  test("the JWKS holds the public keys only, with the media type, and its signature verifies with the reference's verifier", async () => {
    const response = await directoryResponse([a, b], { origin: "https://operator.example", maxAge: 600 });
    expect(response.headers.get("content-type")).toBe("application/http-message-signatures-directory+json");
    expect(response.headers.get("cache-control")).toBe("max-age=600");
    const text = await response.clone().text();
    expect(JSON.parse(text)).toEqual({ keys: [a, b].map((identity) => ({ kty: "OKP", crv: "Ed25519", x: identity.signing_key })) });
    for (const identity of [a, b]) expect(text).not.toContain(identity.signing_secret);
    // One signature per key (binding0, binding1), tag http-message-signatures-directory, over the request's @authority.
    const input = response.headers.get("signature-input")!;
    expect(input).toContain(`keyid="${await keyIdOf(a.signing_key)}"`);
    expect(input).toContain(`keyid="${await keyIdOf(b.signing_key)}"`);
    expect(input).toContain('tag="http-message-signatures-directory"');
    // Each signature verifies alone with its key, by http-message-sig (the reference's signature library; web-bot-auth's
    // own verify() admits tag web-bot-auth only): binding0 with a's key, binding1 with b's.
    const message = {
      kind: "response" as const,
      status: 200,
      fields: [...response.headers].map(([name, value]) => ({ name, value })),
      request: { kind: "request" as const, method: "GET", targetUri: `https://operator.example${DIRECTORY_PATH}`, fields: [] },
    };
    for (const [label, identity] of [
      ["binding0", a],
      ["binding1", b],
    ] as const) {
      const key = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: identity.signing_key }, { name: "Ed25519" }, false, ["verify"]);
      const verified = await verifySignature(message, {
        label,
        policy: { algorithms: ["ed25519"], requiredComponents: [{ name: "@authority", parameters: { req: true } }], requiredParameters: ["tag"] },
        resolveVerifier: () => webcrypto.verifier(key),
      });
      expect(verified.parameters.tag).toBe("http-message-signatures-directory");
      expect(verified.parameters.keyid).toBe(await keyIdOf(identity.signing_key));
    }
    // Swapped keys do not verify.
    const wrong = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: b.signing_key }, { name: "Ed25519" }, false, ["verify"]);
    await expect(
      verifySignature(message, {
        label: "binding0",
        policy: { algorithms: ["ed25519"], requiredComponents: [], requiredParameters: [] },
        resolveVerifier: () => webcrypto.verifier(wrong),
      }),
    ).rejects.toThrow(/verification failed/);
  });
});

describe("DirectoryCache (the verifier's side)", () => {
  test("a signed directory over http to loopback is read when allowed: each key by its thumbprint", async () => {
    serve((_, at) => directoryResponse([a, b], { origin: at }));
    const cache = new DirectoryCache({ allowInsecureLoopback: true });
    expect(await cache.key(origin, await keyIdOf(a.signing_key))).toBe(a.signing_key);
    expect(await cache.key(origin, await keyIdOf(b.signing_key))).toBe(b.signing_key);
    expect(await cache.key(origin, "not-a-key")).toBeNull();
  });

  test("http is refused unless loopback is allowed, before any request", async () => {
    serve((_, at) => directoryResponse([a], { origin: at }));
    const cache = new DirectoryCache();
    await expect(cache.key(origin, await keyIdOf(a.signing_key))).rejects.toThrow(DirectoryError);
    expect(cache.fetches).toBe(0);
    const external = new DirectoryCache({ allowInsecureLoopback: true });
    await expect(external.key("http://operator.example", "k")).rejects.toThrow(/not https/);
    expect(external.fetches).toBe(0);
  });

  test("a directory larger than the bound is refused", async () => {
    serve(
      () =>
        new Response(JSON.stringify({ keys: [], pad: "x".repeat(70_000) }), {
          headers: { "content-type": "application/http-message-signatures-directory+json" },
        }),
    );
    await expect(new DirectoryCache({ allowInsecureLoopback: true }).key(origin, "k")).rejects.toThrow(/larger than 65536 bytes/);
  });

  test("a redirect is refused, to another origin or the same one (draft -01: the directory answers 200 itself); so is any other status", async () => {
    serve(() => new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${other.port}${DIRECTORY_PATH}` } }));
    await expect(new DirectoryCache({ allowInsecureLoopback: true }).key(origin, await keyIdOf(a.signing_key))).rejects.toThrow(/redirects \(not followed\)/);
    routes.set("/keys.json", (_, at) => directoryResponse([a], { origin: at }));
    serve(() => new Response(null, { status: 301, headers: { location: "/keys.json" } }));
    await expect(new DirectoryCache({ allowInsecureLoopback: true }).key(origin, await keyIdOf(a.signing_key))).rejects.toThrow(/redirects \(not followed\)/);
    serve(async (_, at) => new Response(await (await directoryResponse([a], { origin: at })).text(), { status: 203 }));
    await expect(new DirectoryCache({ allowInsecureLoopback: true }).key(origin, await keyIdOf(a.signing_key))).rejects.toThrow(/answered 203/);
    // A directory URL with a path is that directory itself (draft -01's identifier), fetched there.
    expect(await new DirectoryCache({ allowInsecureLoopback: true }).key(`${origin}/keys.json?ignored=1`, await keyIdOf(a.signing_key))).toBe(a.signing_key);
  });

  test("another media type, or no signature, is refused", async () => {
    serve(async (_, at) => {
      const signed = await directoryResponse([a], { origin: at });
      return new Response(await signed.text(), { headers: { "content-type": "application/json", signature: signed.headers.get("signature")! } });
    });
    await expect(new DirectoryCache({ allowInsecureLoopback: true }).key(origin, "k")).rejects.toThrow(
      /is not application\/http-message-signatures-directory\+json/,
    );
    serve(() =>
      Response.json(
        { keys: [{ kty: "OKP", crv: "Ed25519", x: a.signing_key }] },
        { headers: { "content-type": "application/http-message-signatures-directory+json" } },
      ),
    );
    await expect(new DirectoryCache({ allowInsecureLoopback: true }).key(origin, await keyIdOf(a.signing_key))).rejects.toThrow(/no key of the directory/);
  });

  test("a key listed but not signing the directory is not usable (listing another's key proves nothing)", async () => {
    serve(async (_, at) => {
      const signedByA = await directoryResponse([a], { origin: at });
      const body = JSON.stringify({ keys: [a, b].map((identity) => ({ kty: "OKP", crv: "Ed25519", x: identity.signing_key })) });
      return new Response(body, { headers: signedByA.headers });
    });
    const cache = new DirectoryCache({ allowInsecureLoopback: true });
    expect(await cache.key(origin, await keyIdOf(a.signing_key))).toBe(a.signing_key);
    expect(await cache.key(origin, await keyIdOf(b.signing_key))).toBeNull();
  });

  test("a directory signed for another authority is refused", async () => {
    serve(() => directoryResponse([a], { origin: "https://operator.example" }));
    await expect(new DirectoryCache({ allowInsecureLoopback: true }).key(origin, await keyIdOf(a.signing_key))).rejects.toThrow(/no key of the directory/);
  });

  test("Cache-Control is honoured: kept max-age seconds, then fetched again; bounded by maxAgeSeconds; a failure retried after 30 s", async () => {
    const start = Math.floor(Date.now() / 1000);
    let clock = start;
    let maxAge = 120;
    // The operator signs at the cache's clock, which the directory's signature is checked against.
    const signedNow = (at: string) => directoryResponse([a], { origin: at, maxAge, now: new Date(clock * 1000) });
    serve((_, at) => signedNow(at));
    const keyid = await keyIdOf(a.signing_key);
    const cache = new DirectoryCache({ allowInsecureLoopback: true, now: () => clock, maxAgeSeconds: 3600 });
    const at = (t: number) => {
      clock = t;
      return cache.key(origin, keyid);
    };
    await at(start);
    await at(start + 119);
    expect(cache.fetches).toBe(1);
    await at(start + 121);
    expect(cache.fetches).toBe(2);
    maxAge = 1_000_000; // far above the bound
    await at(start + 300);
    expect(cache.fetches).toBe(3);
    await at(start + 300 + 3599);
    expect(cache.fetches).toBe(3);
    await at(start + 300 + 3601);
    expect(cache.fetches).toBe(4);
    serve(() => new Response("down", { status: 503 }));
    await at(start + 100_000).catch(() => {});
    await expect(at(start + 100_010)).rejects.toThrow(/answered 503/);
    expect(cache.fetches).toBe(5);
    serve((_, at) => signedNow(at));
    expect(await at(start + 100_031)).toBe(a.signing_key);
    expect(cache.fetches).toBe(6);
  });

  test("a failed refresh keeps the last good directory until it is stale past staleIfErrorSeconds (issue 37: it was replaced, the operator's agents refused)", async () => {
    const start = Math.floor(Date.now() / 1000);
    let clock = start;
    serve((_, at) => directoryResponse([a], { origin: at, maxAge: 120, now: new Date(clock * 1000) }));
    const keyid = await keyIdOf(a.signing_key);
    const cache = new DirectoryCache({ allowInsecureLoopback: true, now: () => clock, staleIfErrorSeconds: 600, retryAfterSeconds: 30 });
    expect(await cache.key(origin, keyid)).toBe(a.signing_key);
    serve(() => new Response("down", { status: 503 }));
    clock = start + 121; // expired: refetched, fails, the good keys still answer
    expect(await cache.key(origin, keyid)).toBe(a.signing_key);
    expect(cache.fetches).toBe(2);
    clock = start + 140; // within retryAfterSeconds of the failure: no fetch
    expect(await cache.key(origin, keyid)).toBe(a.signing_key);
    expect(cache.fetches).toBe(2);
    clock = start + 152;
    expect(await cache.key(origin, keyid)).toBe(a.signing_key);
    expect(cache.fetches).toBe(3);
    clock = start + 120 + 601; // stale beyond the bound: refused
    await expect(cache.key(origin, keyid)).rejects.toThrow(/answered 503/);
  });

  test("an unknown key id does not refetch the directory before it expires (issue 37: a forged keyid forced a refetch every 30 s)", async () => {
    const start = Math.floor(Date.now() / 1000);
    let clock = start;
    serve((_, at) => directoryResponse([a], { origin: at, maxAge: 300, now: new Date(clock * 1000) }));
    const cache = new DirectoryCache({ allowInsecureLoopback: true, now: () => clock });
    expect(await cache.key(origin, await keyIdOf(a.signing_key))).toBe(a.signing_key);
    for (const t of [1, 31, 61, 200, 299]) {
      clock = start + t;
      expect(await cache.key(origin, `forged-${t}`)).toBeNull();
    }
    expect(cache.fetches).toBe(1);
    clock = start + 301;
    expect(await cache.key(origin, "forged")).toBeNull();
    expect(cache.fetches).toBe(2);
  });

  test("cacheSeconds reads max-age, and no-store / no-cache as 0", () => {
    expect(cacheSeconds("public, max-age=300")).toBe(300);
    expect(cacheSeconds("no-store")).toBe(0);
    expect(cacheSeconds("private, no-cache")).toBe(0);
    expect(cacheSeconds("public")).toBeUndefined();
    expect(cacheSeconds(null)).toBeUndefined();
  });
});

describe("MemoryNonceStore", () => {
  test("a key is claimed once until it expires; a party full of live nonces refuses rather than forgets", () => {
    let now = 100;
    const store = new MemoryNonceStore({ perParty: 2, now: () => now });
    const op = (n: string) => nonceKey("https://op.example/.well-known/http-message-signatures-directory", "k", n);
    expect(store.claim(op("n1"), 160)).toBe(true);
    expect(store.claim(op("n1"), 160)).toBe(false);
    expect(store.claim(op("n2"), 200)).toBe(true);
    expect(() => store.claim(op("n3"), 200)).toThrow(NonceStoreFull);
    now = 161; // n1's window is over: its room is reused, and it may be claimed again
    expect(store.claim(op("n3"), 220)).toBe(true);
    expect(store.claim(op("n2"), 200)).toBe(false);
    expect(store.size).toBe(2);
  });

  test("one operator's nonces cannot lock out another, nor a registered agent (issue 37: one store of 100 000 for all did)", () => {
    const store = new MemoryNonceStore({ perParty: 1000, capacity: 1_000_000, now: () => 100 });
    const flooder = "https://flood.example/.well-known/http-message-signatures-directory";
    let refused = 0;
    for (let i = 0; i < 5000; i++) {
      try {
        store.claim(nonceKey(flooder, "k", `n${i}`), 3700);
      } catch (error) {
        expect(error).toBeInstanceOf(NonceStoreFull);
        refused++;
      }
    }
    expect(refused).toBe(4000);
    expect(store.claim(nonceKey("https://quiet.example/.well-known/http-message-signatures-directory", "k", "n0"), 3700)).toBe(true);
    expect(store.claim(nonceKey("agent:k2", "k2", "n0"), 3700)).toBe(true);
    // The same nonce under two keys is two claims.
    expect(store.claim(nonceKey("https://quiet.example/.well-known/http-message-signatures-directory", "k2", "n0"), 3700)).toBe(true);
  });
});

test("readDirectory on random bodies and signature fields resolves or throws DirectoryError, nothing else", async () => {
  const signed = await directoryResponse([a], { origin: "https://operator.example" });
  const pieces = [await signed.text(), signed.headers.get("signature")!, signed.headers.get("signature-input")!, '{"keys":[{"kty":"OKP"}]}', '{"keys":7}'];
  const text = fc.oneof(
    fc.string({ maxLength: 300 }),
    fc.constantFrom(...pieces),
    fc.tuple(fc.constantFrom(...pieces), fc.string({ maxLength: 6 })).map(([p, n]) => p + n),
  );
  await fc.assert(
    fc.asyncProperty(text, fc.option(text), fc.option(text), async (body, signature, input) => {
      const headers = new Headers();
      try {
        if (signature !== null) headers.set("signature", signature);
        if (input !== null) headers.set("signature-input", input);
      } catch {
        return;
      }
      try {
        await readDirectory({ status: 200, headers, body: new TextEncoder().encode(body) }, `https://operator.example${DIRECTORY_PATH}`);
      } catch (error) {
        expect(error).toBeInstanceOf(DirectoryError);
      }
    }),
    fuzzParams(300),
  );
});
