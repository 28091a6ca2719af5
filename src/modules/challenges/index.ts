import { Elysia } from "elysia";
import type { ModuleDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { readJsonObject } from "../../http/body";
import { describe, JSON_BODY_ERRORS, RATE_LIMIT_HEADERS } from "../../http/docs";
import { rateLimitHeaders } from "../../http/errors";
import { idempotent } from "../../http/idempotency";
import { REQUEST_ID_HEADER } from "../../http/request-id";
import { validate } from "../../http/validate";
import { challengeRefinements, challengeRequest, challengeResponse } from "./model";
import { createChallenge } from "./service";

export const challenges = (deps: ModuleDeps) =>
  new Elysia({ name: "challenges" }).use(authentication(deps)).post(
    "/v1/verify/challenge",
    async ({ key, request, set }) => {
      const body = await readJsonObject(request);
      const input = validate(challengeRequest, body, challengeRefinements);
      const requestId = String(set.headers[REQUEST_ID_HEADER]);
      const outcome = await idempotent(deps, key, request, "challenge", body, async () => {
        const { body, rateLimit } = await createChallenge(deps, key, input, requestId);
        if (rateLimit) Object.assign(set.headers, rateLimitHeaders(rateLimit));
        return body;
      });
      return outcome instanceof Response ? outcome : outcome.body;
    },
    {
      auth: true,
      parse: "none",
      detail: describe({
        operationId: "requestChallenge",
        tag: "Verification",
        summary: "Request a challenge",
        description:
          "Issues a one-time challenge (id + nonce, 300 s) for an agent and an intended action. The agent proves against the nonce; the proof is bound to action and context.",
        body: challengeRequest,
        idempotent: true,
        ok: { status: 200, schema: challengeResponse, description: "The challenge", headers: RATE_LIMIT_HEADERS },
        errors: [...JSON_BODY_ERRORS, "idempotency_in_progress", "idempotency_mismatch", "too_many_pending", "rate_limited"],
        headers: { 429: RATE_LIMIT_HEADERS },
      }),
    },
  );
