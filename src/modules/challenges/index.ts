import { Elysia } from "elysia";
import type { AppDeps } from "../../deps";
import { describe } from "../../http/docs";
import { readJsonObject } from "../../http/body";
import { authenticate } from "../keys/service";
import { challengeRequest, challengeResponse, parseChallengeRequest } from "./model";
import { createChallenge, rateLimitHeaders } from "./service";

export const challenges = (deps: AppDeps) =>
  new Elysia({ name: "challenges" }).post(
    "/v1/verify/challenge",
    async ({ request, set }) => {
      const key = await authenticate(deps.store, request.headers.get("x-api-key"));
      const input = parseChallengeRequest(await readJsonObject(request));
      const { body, rateLimit } = await createChallenge(deps, key, input);
      if (rateLimit) Object.assign(set.headers, rateLimitHeaders(rateLimit));
      return body;
    },
    {
      parse: "none",
      detail: describe({
        tag: "Verification",
        summary: "Request a challenge",
        description:
          "Issues a one-time challenge (id + nonce, 300 s) for an agent and an intended action. The agent proves against the nonce; the proof is bound to action and context.",
        body: challengeRequest,
        ok: { status: 200, schema: challengeResponse, description: "The challenge" },
        errors: {
          400: "Missing or invalid fields",
          401: "Missing API key",
          403: "Invalid API key",
          413: "Body over 64 KiB",
          415: "Content-Type is not application/json",
          429: "Rate limit exceeded (see Retry-After)",
        },
      }),
    },
  );
