import { Elysia } from "elysia";
import type { ModuleDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { readJsonObject } from "../../http/body";
import { describe, JSON_BODY_ERRORS } from "../../http/docs";
import { idempotent } from "../../http/idempotency";
import { REQUEST_ID_HEADER } from "../../http/request-id";
import { validate } from "../../http/validate";
import { challengeExpired, challengeUsed, proofRequest, proofResponse, verificationFailed } from "./model";
import { submitProof } from "./service";

export const proofs = (deps: ModuleDeps) =>
  new Elysia({ name: "proofs" }).use(authentication(deps)).post(
    "/v1/verify/proof",
    async ({ key, request, set }) => {
      const body = await readJsonObject(request);
      const input = validate(proofRequest, body);
      const requestId = String(set.headers[REQUEST_ID_HEADER]);
      const outcome = await idempotent(deps, key, request, "proof", body, () => submitProof(deps, key, input, requestId));
      return outcome instanceof Response ? outcome : outcome.body;
    },
    {
      auth: true,
      parse: "none",
      detail: describe({
        operationId: "submitProof",
        tag: "Verification",
        summary: "Verify a proof",
        description:
          "Verifies the agent's Groth16 proof against the challenge's nonce, action and context, once. A failed proof fails the challenge for good: request a new one.",
        body: proofRequest,
        idempotent: true,
        ok: { status: 200, schema: proofResponse, description: "The proof verified" },
        errors: [
          ...JSON_BODY_ERRORS,
          "idempotency_in_progress",
          "idempotency_mismatch",
          "challenge_not_found",
          "unauthorized_session",
          "challenge_expired",
          "challenge_used",
          "verification_failed",
        ],
        // The three 400s of the challenge itself carry `verified: false`; `error` tells them apart.
        bodies: { verification_failed: verificationFailed, challenge_expired: challengeExpired, challenge_used: challengeUsed },
      }),
    },
  );
