import { Elysia } from "elysia";
import type { ModuleDeps } from "../../deps";
import { authentication } from "../../http/auth";
import { readJsonObject } from "../../http/body";
import { describe, JSON_BODY_ERRORS, RATE_LIMIT_HEADERS } from "../../http/docs";
import { rateLimitHeaders } from "../../http/errors";
import { idempotent } from "../../http/idempotency";
import { REQUEST_ID_HEADER } from "../../http/request-id";
import { validate } from "../../http/validate";
import { invalidField } from "../../errors";
import { anyChallengeRequest, anyChallengeResponse, challengeRefinements, challengeRequest, groupChallengeRefinements, groupChallengeRequest } from "./model";
import { createChallenge, createGroupChallenge } from "./service";

const absent = (value: unknown) => value === undefined || value === null;

/**
 * An agent challenge's body. With neither agent_id nor group_id the answer is
 * the seed contract's, exactly ("Missing required fields: agent_id", plus any
 * other missing field, and nothing else): a body without group_id is an agent
 * challenge, and its clients compare that answer whole.
 */
const agentChallengeInput = (body: Record<string, unknown>) => validate(challengeRequest, body, challengeRefinements);

export const challenges = (deps: ModuleDeps) =>
  new Elysia({ name: "challenges" }).use(authentication(deps)).post(
    "/v1/verify/challenge",
    async ({ key, request, set }) => {
      const body = await readJsonObject(request);
      // A group_id makes it a group challenge; without one the agent challenge's rules hold unchanged.
      const forGroup = !absent(body.group_id);
      if (forGroup && !absent(body.agent_id)) throw invalidField("agent_id", "exactly one of agent_id and group_id may be given");
      const groupInput = forGroup ? validate(groupChallengeRequest, body, groupChallengeRefinements) : null;
      const agentInput = forGroup ? null : agentChallengeInput(body);
      const requestId = String(set.headers[REQUEST_ID_HEADER]);
      const outcome = await idempotent(deps, key, request, "challenge", body, async () => {
        const { body, rateLimit } = groupInput
          ? await createGroupChallenge(deps, key, groupInput, requestId)
          : await createChallenge(deps, key, agentInput!, requestId);
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
          "Issues a one-time challenge (id + nonce, 300 s) for an agent and an intended action. The agent proves against the nonce; the proof is bound to action and context. With group_id instead of agent_id: a challenge any member of the group answers anonymously with a Semaphore v4 proof (docs/api.md, Groups); for a budgeted group, a budget spend whose context binds amount and currency, paid to one of the key's registered origins (docs/api.md, Budget spends).",
        body: anyChallengeRequest,
        idempotent: true,
        ok: { status: 200, schema: anyChallengeResponse, description: "The challenge", headers: RATE_LIMIT_HEADERS },
        errors: [
          ...JSON_BODY_ERRORS,
          "idempotency_in_progress",
          "idempotency_mismatch",
          "too_many_pending",
          "rate_limited",
          "group_not_found",
          "group_challenger_forbidden",
          "group_empty",
          "key_no_origin",
          "origin_not_registered",
        ],
        headers: { 429: RATE_LIMIT_HEADERS },
      }),
    },
  );
