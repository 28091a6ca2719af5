// GET /.well-known/jwks.json: the public keys receipts are checked with.
// Public (no API key): merchants and processors that never call the API need
// it. Cacheable for as long as a node caches the active key, so a checker's
// copy is never much staler than the signers' own view.
import { Elysia, t } from "elysia";
import type { ModuleDeps } from "../../deps";
import { describe } from "../../http/docs";
import { KEY_REFRESH_MS } from "../../receipts/signer";

const jwk = t.Object({
  kty: t.Literal("OKP"),
  crv: t.Literal("Ed25519"),
  x: t.String({ description: "The public key, base64url" }),
  kid: t.String({ description: "RFC 7638 thumbprint; the kid in a receipt's header" }),
  alg: t.Literal("EdDSA"),
  use: t.Literal("sig"),
});

export const jwksResponse = t.Object({ keys: t.Array(jwk) });

export const receipts = (deps: ModuleDeps) =>
  new Elysia({ name: "receipts" }).get(
    "/.well-known/jwks.json",
    async ({ set }) => {
      set.headers["cache-control"] = `public, max-age=${KEY_REFRESH_MS / 1000}`;
      return deps.receipts.signer.jwks();
    },
    {
      detail: describe({
        tag: "Verification",
        summary: "Receipt signing keys (JWKS)",
        description:
          "Every Ed25519 key whose verification receipts may still be checked: the active one and earlier ones not retired. No API key. Cacheable for 5 s, the time in which every node picks up a rotation. See docs/receipts.md.",
        ok: { status: 200, schema: jwksResponse, description: "The key set" },
        errors: {},
        public: true,
      }),
    },
  );
