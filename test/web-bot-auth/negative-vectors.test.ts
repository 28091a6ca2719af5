// A third party's negative vectors (test/vectors/web-bot-auth-negative/,
// ParallaxGrain/webbotauth-negative-vectors): 17 requests that must not
// verify, run against the guard in process, the directory fetch and the
// clock injected. Each is refused, never 5xx, for its own reason, through
// the mapping below (docs/http-auth.md, "The negative vector set").
//
// The guard is set so that nothing but the vector's own fault can refuse it:
// nonce "optional" (draft -01's baseline; the vectors carry none) and a
// window long enough for their expires (year 2124). NV-08 is also run with a
// nonce added and the signature remade under "required": issue 41 found it
// admitted that way (the Content-Digest was never compared with the body).
import { describe, expect, test } from "bun:test";
import { createPrivateKey, createPublicKey, verify as ed25519Verify } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createSignature, webcrypto } from "http-message-sig";
import { parseDictionary } from "structured-headers";
import { zkagentGuard } from "../../src/merchant";
import { DirectoryCache } from "../../src/merchant/modes/web-bot-auth/directories";
import { publicKeyObject } from "../../src/identity/signature";
import { directoryResponse, type NoncePolicy } from "../../src/web-bot-auth";

interface Vector {
  id: string;
  title: string;
  expected: { outcome: string; reason: string };
  now: number;
  request: { method: string; url: string; headers: Record<string, string>; body?: string };
  signedBase: string;
  directory: string | null;
}
const set = JSON.parse(readFileSync(join(import.meta.dir, "../vectors/web-bot-auth-negative/vectors.json"), "utf8")) as {
  key: { keyid: string; jwk: { x: string } };
  directoryBody: string;
  tests: Vector[];
};

/** The set's reason names, and the guard's reason for each (docs/http-auth.md keeps the same table with the why). */
export const REASONS: Record<string, string> = {
  "target-not-covered": "malformed_signature",
  "missing-fields": "malformed_signature",
  expired: "expired",
  "clock-ahead": "not_yet_valid",
  "bad-signature": "bad_signature",
  "canonicalization-mismatch": "bad_signature",
  "content-digest-mismatch": "content_digest_mismatch",
  "missing-component": "malformed_signature",
  "signature-input-unreadable": "malformed_signature",
  "signature-value-unreadable": "malformed_signature",
  "duplicate-component": "malformed_signature",
  "signature-agent-absent": "missing_signature_agent",
  "signature-agent-ambiguous-member": "missing_signature_agent",
  "signature-agent-member-missing": "missing_signature_agent",
  "signature-agent-unparsable": "missing_signature_agent",
  "signature-agent-not-https": "untrusted_agent",
  // Inapplicable as the set states it under draft -01 (a Signature-Agent URL with a path is that directory's URL, not an
  // error): refused because the merchant trusts https://signature-agent.test, whose directory is the well-known one.
  "signature-agent-not-origin": "untrusted_agent",
};

/** RFC 9421 Appendix B.1.4's Ed25519 private key (published in the RFC): to sign the directory as the guard requires, and to remake NV-08 with a nonce. */
const B14_SECRET = "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU";
const OPERATOR = "https://signature-agent.test";

/** The vector's directory body, with the signature the guard requires of a directory (the set's carry none) made with the same key. */
async function directoryFor(url: string, now: number): Promise<Response> {
  const signed = await directoryResponse([{ signing_key: set.key.jwk.x, signing_secret: B14_SECRET }], {
    origin: new URL(url).origin,
    now: new Date(now * 1000),
  });
  return new Response(set.directoryBody, { status: 200, headers: signed.headers });
}

function guardAt(now: number, nonce: NoncePolicy) {
  const fetched: string[] = [];
  const directories = new DirectoryCache({
    now: () => now,
    fetch: (request) => {
      fetched.push(request.url);
      return directoryFor(request.url, now);
    },
  });
  const guard = zkagentGuard({
    url: "http://zkagent.invalid",
    apiKey: "zka_unused",
    action: "browse",
    origin: "https://example.com",
    accept: ["web-bot-auth"],
    signatures: { signatureAgents: [OPERATOR], nonce, now: () => now, maxWindow: 200 * 365 * 86400, directories },
    fetch: () => {
      throw new Error("the service must not be called");
    },
  });
  return { guard, fetched };
}

const requestOf = (vector: Vector, headers = vector.request.headers) =>
  new Request(vector.request.url, { method: vector.request.method, headers, body: vector.request.body });

async function verdict(vector: Vector, request = requestOf(vector), nonce: NoncePolicy = "optional") {
  const { guard } = guardAt(vector.now, nonce);
  const result = await guard.verify(request);
  if (result.ok) return { ok: true as const, status: 200, reason: "" };
  const body = (await result.response.json()) as { reason: string };
  return { ok: false as const, status: result.response.status, reason: body.reason };
}

test("the extract holds the set's 17 vectors, every signature intact: each verifies over the base its signer used, with the published key", () => {
  expect(set.tests.map((vector) => vector.id)).toEqual([
    "NV-01",
    "NV-03",
    "NV-04",
    "NV-05",
    "NV-06",
    "NV-07",
    "NV-08",
    "NV-09",
    "NV-10",
    "NV-11",
    "NV-19",
    "NV-12",
    "NV-13",
    "NV-14",
    "NV-16",
    "NV-17",
    "NV-18",
  ]);
  const key = publicKeyObject(set.key.jwk.x)!;
  for (const vector of set.tests) {
    const value = /:([^:]+):/.exec(vector.request.headers.Signature!)![1]!;
    expect({ id: vector.id, verified: ed25519Verify(null, Buffer.from(vector.signedBase), key, Buffer.from(value, "base64")) }).toEqual({
      id: vector.id,
      verified: true,
    });
  }
  // The B.1.4 secret is the published key's: its public half is x.
  const secret = createPrivateKey({ key: { kty: "OKP", crv: "Ed25519", x: set.key.jwk.x, d: B14_SECRET }, format: "jwk" });
  expect(createPublicKey(secret).export({ format: "jwk" }).x).toBe(set.key.jwk.x);
});

describe("each vector is refused for its own reason, never 5xx", () => {
  for (const vector of set.tests) {
    test(`${vector.id} ${vector.title}: ${vector.expected.reason} → ${REASONS[vector.expected.reason]}`, async () => {
      const judged = await verdict(vector);
      expect(judged.ok).toBe(false);
      expect(judged.status).toBeLessThan(500);
      expect(judged.reason).toBe(REASONS[vector.expected.reason]!);
    });
  }
});

/** The vector's request with a nonce added and the signature remade over the same components (the B.1.4 key). */
async function withNonce(vector: Vector, change: (headers: Headers) => void = () => {}, expires?: number): Promise<Request> {
  const headers = new Headers(vector.request.headers);
  change(headers);
  const input = parseDictionary(headers.get("signature-input")!).get("sig1")! as [[string, Map<string, string>][], Map<string, unknown>];
  const components = input[0].map(([name, params]) => ({ name, parameters: Object.fromEntries(params) }));
  const parameters = Object.fromEntries(input[1]) as Record<string, string | number>;
  parameters.nonce = crypto.randomUUID();
  if (expires !== undefined) parameters.expires = expires;
  const key = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: set.key.jwk.x, d: B14_SECRET }, { name: "Ed25519" }, false, ["sign"]);
  headers.delete("signature");
  headers.delete("signature-input");
  const made = await createSignature(
    { kind: "request", method: vector.request.method, targetUri: vector.request.url, fields: [...headers].map(([name, value]) => ({ name, value })) },
    { components, parameters, signer: webcrypto.signer(key) },
  );
  headers.set("signature", made.signature);
  headers.set("signature-input", made.signatureInput);
  return new Request(vector.request.url, { method: vector.request.method, headers, body: vector.request.body });
}

describe("NV-08 with a nonce (issue 41: admitted before Content-Digest was compared with the body)", () => {
  const nv08 = () => set.tests.find((vector) => vector.id === "NV-08")!;

  test("remade with a nonce, under nonce required: refused content_digest_mismatch", async () => {
    expect(await verdict(nv08(), await withNonce(nv08()), "required")).toEqual({ ok: false, status: 401, reason: "content_digest_mismatch" });
  });

  test("the control: the same request with the body's true digest (sha-256, or sha-512) is admitted, so the refusal is the digest's alone", async () => {
    const body = nv08().request.body!;
    const sha256 = new Bun.CryptoHasher("sha256").update(body).digest("base64");
    const sha512 = new Bun.CryptoHasher("sha512").update(body).digest("base64");
    for (const digest of [`sha-256=:${sha256}:`, `sha-512=:${sha512}:`, `sha-512=:${sha512}:, sha-256=:${sha256}:`]) {
      const request = await withNonce(nv08(), (headers) => headers.set("content-digest", digest));
      expect((await verdict(nv08(), request, "required")).ok).toBe(true);
    }
    // One member right and one wrong is refused: every digest the verifier can check must match.
    const mixed = await withNonce(nv08(), (headers) => headers.set("content-digest", `sha-256=:${sha256}:, sha-512=:${sha256}:`));
    expect((await verdict(nv08(), mixed, "required")).reason).toBe("content_digest_mismatch");
  });

  test("without a nonce under required: nonce_required, with Accept-Signature naming nonce", async () => {
    const { guard } = guardAt(nv08().now, "required");
    const result = await guard.verify(requestOf(nv08()));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.response.status).toBe(401);
    expect(((await result.response.json()) as { reason: string }).reason).toBe("nonce_required");
    expect(result.response.headers.get("accept-signature")).toContain("nonce");
  });
});

test("a guard on its own clock (signatures.now) remembers nonces on that clock: a replay at the vectors' time is refused", async () => {
  const nv08 = set.tests.find((vector) => vector.id === "NV-08")!;
  const body = nv08.request.body!;
  const sha256 = new Bun.CryptoHasher("sha256").update(body).digest("base64");
  // Valid for an hour of 2025: long past on the system's clock.
  const request = await withNonce(nv08, (headers) => headers.set("content-digest", `sha-256=:${sha256}:`), nv08.now + 600);
  // No store given: the guard's default store must run on the guard's clock (2025 here), not the system's.
  const guard = zkagentGuard({
    url: "http://zkagent.invalid",
    apiKey: "zka_unused",
    action: "browse",
    origin: "https://example.com",
    accept: ["web-bot-auth"],
    signatures: {
      signatureAgents: [OPERATOR],
      nonce: "required",
      now: () => nv08.now,
      maxWindow: 200 * 365 * 86400,
      directories: new DirectoryCache({ now: () => nv08.now, fetch: (r) => directoryFor(r.url, nv08.now) }),
    },
  });
  expect((await guard.verify(request.clone())).ok).toBe(true);
  const replay = await guard.verify(request.clone());
  expect(replay.ok).toBe(false);
  if (!replay.ok) expect(replay.response.status).toBe(429);
});
