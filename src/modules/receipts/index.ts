// GET /.well-known/jwks.json: the public keys receipts are checked with.
// Public (no API key): merchants and processors that never call the API need
// it. Cacheable for as long as a node caches the active key, so a checker's
// copy is never much staler than the signers' own view.
import { Elysia } from "elysia";
import type { ModuleDeps } from "../../deps";
import { describe } from "../../http/docs";
import { KEY_REFRESH_MS } from "../../receipts/signer";
import { jwksResponse } from "./model";

export const receipts = (deps: ModuleDeps) =>
  new Elysia({ name: "receipts" }).get(
    "/.well-known/jwks.json",
    async ({ set }) => {
      const keys = await deps.receipts.signer.jwks();
      // Only the key set is cacheable: set after reading it, so a 503 is never cached for 5 s.
      set.headers["cache-control"] = `public, max-age=${KEY_REFRESH_MS / 1000}`;
      return keys;
    },
    {
      detail: describe({
        operationId: "getReceiptKeys",
        tag: "Verification",
        summary: "Receipt signing keys (JWKS)",
        description:
          "Every Ed25519 key whose verification receipts may still be checked: the active one and earlier ones not retired. No API key. Cacheable for 5 s, the time in which every node picks up a rotation. See docs/receipts.md.",
        ok: { status: 200, schema: jwksResponse, description: "The key set", headers: { "Cache-Control": true } },
        errors: [],
        public: true,
      }),
    },
  );
