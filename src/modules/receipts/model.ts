import { t } from "elysia";
import { RECEIPT_ALG } from "../../receipts/claims";

export const jwkSchema = t.Object(
  {
    kty: t.Literal("OKP"),
    crv: t.Literal("Ed25519"),
    x: t.String({ description: "The public key, base64url" }),
    kid: t.String({ description: "RFC 7638 thumbprint; the kid in a receipt's header" }),
    alg: t.Literal(RECEIPT_ALG),
    use: t.Literal("sig"),
  },
  { additionalProperties: false },
);

export const jwksResponse = t.Object({ keys: t.Array(jwkSchema) }, { additionalProperties: false });
