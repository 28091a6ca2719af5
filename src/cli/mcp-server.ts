// The MCP server behind `zkagent mcp` (see mcp.ts for what it offers and
// why no secret can come out of it). Imported only by that command.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { answerChallenge, type FetchIdentity, type ZkAgentChallenge, zkagentFetch } from "../agent";
import { checkChallenge, outgoingRequest } from "../agent/checks";
import type { JsonObject } from "../identity/encoding";
import { shown } from "./args";
import { httpUrl, refusal } from "./fetch";
import { VERSION } from "../version";

/** The largest response body a tool returns (the model's context is not a download). */
const MAX_BODY = 256 * 1024;

/** The server, connected to standard input and output. */
export async function serveMcp(identity: FetchIdentity, options: Parameters<typeof zkagentFetch>[0]): Promise<McpServer> {
  const server = createMcpServer(identity, options);
  await server.connect(new StdioServerTransport());
  return server;
}

export function createMcpServer(identity: FetchIdentity, options: Parameters<typeof zkagentFetch>[0]) {
  const secrets = [identity.secret, identity.private_key, identity.signing_secret].filter((s): s is string => typeof s === "string" && s.length > 0);
  const redact = (text: string) => secrets.reduce((out, secret) => out.split(secret).join("[redacted]"), text);
  /** A refusal: one line of text, marked as an error (no structuredContent: an error's shape is not the tool's output). */
  const refused = (line: string) => ({ content: [{ type: "text" as const, text: redact(line) }], isError: true });
  /**
   * A tool's answer: the object as JSON text (what every client shows the
   * model) and as structuredContent (what a client that reads the tool's
   * outputSchema takes without parsing text), both redacted alike.
   */
  const result = (value: Record<string, unknown>) => {
    const json = redact(JSON.stringify(value, null, 2));
    return { content: [{ type: "text" as const, text: json }], structuredContent: JSON.parse(json) as Record<string, unknown> };
  };
  const failed = (error: unknown, url?: URL) =>
    refused((url && refusal(error, url)) ?? `zkagent: ${shown(error instanceof Error ? error.message : String(error))}`);
  /** What a proof was made for, as the answers report it. */
  const proved = (challenge: ZkAgentChallenge) => ({ challenge_id: challenge.challenge_id, action: challenge.action, context: challenge.context });
  /** The request a tool describes, as fetch takes it (Content-Type JSON by default when there is a body). */
  const requestOf = (input: { url: string; method?: string; headers?: Record<string, string>; body?: string }) => {
    const url = httpUrl(input.url);
    const headers = new Headers(input.headers);
    if (input.body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
    return { url, method: input.method?.toUpperCase() ?? (input.body === undefined ? "GET" : "POST"), headers, body: input.body };
  };
  /** The action a tool call means: the operator's --action binds every call; a call may name one only within it. */
  const actionOf = (asked: string | undefined): string | undefined => {
    if (asked !== undefined && options.action !== undefined && asked !== options.action)
      throw new TypeError(`this server proves only the action "${options.action}" (--action), not "${asked}"`);
    return asked ?? options.action;
  };
  const requestShape = {
    url: z.string().describe("http:// or https:// URL"),
    method: z
      .string()
      .regex(/^[A-Za-z]+$/)
      .optional()
      .describe("GET by default, POST when a body is given"),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.string().optional().describe("the request body; Content-Type defaults to application/json"),
    action: z.string().min(1).optional().describe("the action the agent means (e.g. purchase): a challenge for another action is refused"),
  };

  const provedShape = z.object({ challenge_id: z.string(), action: z.string(), context: z.record(z.string(), z.unknown()) });
  const server = new McpServer({ name: "zkagent", version: VERSION });

  server.registerTool(
    "zkagent_identity",
    {
      description: "The agent's public identity: agent_id (or group_id), identity_commitment, signing_key. Secrets are never returned.",
      inputSchema: z.object({}).strict(),
      outputSchema: z.object({
        agent_id: z.string().nullable(),
        group_id: z.string().nullable(),
        identity_commitment: z.string().nullable(),
        signing_key: z.string().nullable(),
      }),
    },
    async () =>
      result({
        agent_id: identity.agent_id ?? null,
        group_id: identity.group_id ?? null,
        identity_commitment: identity.identity_commitment ?? null,
        signing_key: identity.signing_key ?? null,
      }),
  );

  server.registerTool(
    "zkagent_fetch",
    {
      description:
        "An HTTP(S) request as this agent. When the server answers 401 with a ZKAgent challenge, the agent proves it is who it claims only if the challenge binds exactly this request (method, origin, target, the body's fields, the action) and is within the agent's limits, and repeats it once. Returns status, headers, body, and `proved` (the challenge id, action and context the proof was made for; null when none was). A refused challenge is an error naming the field; nothing is proved or sent.",
      inputSchema: z.object(requestShape).strict(),
      outputSchema: z.object({ status: z.number().int(), headers: z.record(z.string(), z.string()), body: z.string(), proved: provedShape.nullable() }),
    },
    async (input) => {
      let url: URL | undefined;
      try {
        const request = requestOf(input);
        url = request.url;
        let made: ZkAgentChallenge | null = null;
        const send = zkagentFetch({ ...options, action: actionOf(input.action), onProof: (challenge) => (made = challenge) });
        const response = await send(request.url, { method: request.method, headers: request.headers, body: request.body });
        let responseBody = await response.text();
        if (responseBody.length > MAX_BODY) responseBody = `${responseBody.slice(0, MAX_BODY)}… (truncated)`;
        return result({
          status: response.status,
          headers: Object.fromEntries(response.headers),
          body: responseBody,
          proved: made === null ? null : proved(made),
        });
      } catch (error) {
        return failed(error, url);
      }
    },
  );

  server.registerTool(
    "zkagent_prove",
    {
      description:
        'The credentials for a ZKAgent challenge, for the request it was issued for: give that request (url, method, headers, body) and the "challenge" member of its 401 body. Refused (an error naming the field) unless the challenge binds exactly this request and is within the agent\'s limits. Returns {authorization, proved}: the Authorization header value to repeat the request with, and the challenge id, action and context it proves.',
      inputSchema: z
        .object({
          ...requestShape,
          challenge: z
            .object({
              challenge_id: z.string().min(1),
              nonce: z.string().min(1),
              action: z.string().min(1),
              context: z.record(z.string(), z.unknown()).optional(),
              circuit_id: z.string().optional(),
              circuit: z.string().optional(),
            })
            .passthrough(),
        })
        .strict(),
      outputSchema: z.object({ authorization: z.string(), proved: provedShape }),
    },
    async (input) => {
      let url: URL | undefined;
      try {
        const request = requestOf(input);
        url = request.url;
        const { challenge_id, nonce, action, context, circuit_id, circuit } = input.challenge;
        const params: Record<string, string> = {};
        for (const [name, value] of Object.entries(input.challenge)) if (typeof value !== "object") params[name] = String(value);
        const parsed: ZkAgentChallenge = { challenge_id, nonce, action, context: (context ?? {}) as JsonObject, circuit_id, circuit, params };
        checkChallenge(
          { ...parsed, message: params.message, group: identity.agent_id === undefined && identity.group_id !== undefined },
          outgoingRequest(request.method, request.url, request.headers.get("content-type"), request.body ?? null),
          { action: actionOf(input.action), maxAmount: options.maxAmount },
        );
        // A budget challenge's `budget` object is read from the challenge given (answerChallenge's body: the 401's JSON).
        return result({ authorization: await answerChallenge(parsed, options, { challenge: input.challenge }), proved: proved(parsed) });
      } catch (error) {
        return failed(error, url);
      }
    },
  );
  return server;
}
