import { Elysia } from "elysia";
import type { ModuleDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { readJsonObject } from "../../http/body";
import { describe } from "../../http/docs";
import { idempotent } from "../../http/idempotency";
import { REQUEST_ID_HEADER } from "../../http/request-id";
import { validate } from "../../http/validate";
import { proofFailure, proofRequest, proofResponse } from "./model";
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
        tag: "Verification",
        summary: "Verify a proof",
        description:
          "Verifies the agent's Groth16 proof against the challenge's nonce, action and context, once. A failed proof fails the challenge for good: request a new one.",
        body: proofRequest,
        ok: { status: 200, schema: proofResponse, description: "The proof verified" },
        failure: proofFailure,
        errors: {
          400: "Proof verification failed (with reason), challenge expired, challenge already used, or invalid fields",
          403: "Invalid API key, or the challenge belongs to another key",
          404: "Challenge not found",
          409: "A request with the same Idempotency-Key is still running",
          413: "Body over 64 KiB",
          415: "Content-Type is not application/json",
          422: "Idempotency-Key reused with a different body",
        },
      }),
    },
  );
