// Signatures as Standard Webhooks specifies them (HMAC-SHA256 over
// "<webhook-id>.<webhook-timestamp>.<body>", base64, prefixed "v1,"), made by
// the `standardwebhooks` library itself so that receivers verifying with it,
// in any language, agree with us by construction.
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";

/** A new signing secret in the form the library and its ports take: `whsec_` + base64 of 32 random bytes. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

/**
 * The webhook-signature header: one `v1,<sig>` per secret, space-separated.
 * During a rotation's overlap both the new and the previous secret sign, so a
 * receiver still holding either accepts the delivery (the specification
 * allows several signatures; verifiers accept when any matches).
 */
export function signatureHeader(secrets: readonly string[], id: string, timestampSeconds: number, body: string): string {
  const at = new Date(timestampSeconds * 1000);
  return secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(" ");
}

/** The three headers of one delivery attempt (the timestamp is the attempt's, as the specification intends). */
export function webhookHeaders(secrets: readonly string[], id: string, nowMs: number, body: string): Record<string, string> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatureHeader(secrets, id, timestamp, body),
  };
}
