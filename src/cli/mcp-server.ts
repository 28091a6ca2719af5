// The MCP server behind `zkagent mcp` (see mcp.ts for what it offers and
// why no secret can come out of it). Imported only by that command.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import pkg from "../../package.json";
import { answerChallenge, type FetchIdentity, type ZkAgentChallenge, zkagentFetch } from "../agent";
import { shown } from "./args";
import { httpUrl } from "./fetch";

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
  const text = (value: unknown, isError = false) => ({
    content: [{ type: "text" as const, text: redact(typeof value === "string" ? value : JSON.stringify(value, null, 2)) }],
    ...(isError ? { isError: true } : {}),
  });
  const failed = (error: unknown) => text(`zkagent: ${shown(error instanceof Error ? error.message : String(error))}`, true);
  const send = zkagentFetch(options);

  const server = new McpServer({ name: "zkagent", version: pkg.version });

  server.registerTool(
    "zkagent_identity",
    {
      description: "The agent's public identity: agent_id (or group_id), identity_commitment, signing_key. Secrets are never returned.",
      inputSchema: z.object({}).strict(),
    },
    async () =>
      text({
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
        "An HTTP(S) request as this agent. When the server answers 401 with a ZKAgent challenge, the agent proves it is who it claims for exactly this request (action and context shown in the challenge) and repeats it once. Returns status, headers and body.",
      inputSchema: z
        .object({
          url: z.string().describe("http:// or https:// URL"),
          method: z
            .string()
            .regex(/^[A-Za-z]+$/)
            .optional()
            .describe("GET by default, POST when a body is given"),
          headers: z.record(z.string(), z.string()).optional(),
          body: z.string().optional().describe("the request body; Content-Type defaults to application/json"),
        })
        .strict(),
    },
    async ({ url, method, headers, body }) => {
      try {
        const target = httpUrl(url);
        const outgoing = new Headers(headers);
        if (body !== undefined && !outgoing.has("content-type")) outgoing.set("content-type", "application/json");
        const response = await send(target, { method: method?.toUpperCase() ?? (body === undefined ? "GET" : "POST"), headers: outgoing, body });
        let responseBody = await response.text();
        if (responseBody.length > MAX_BODY) responseBody = `${responseBody.slice(0, MAX_BODY)}… (truncated)`;
        return text({ status: response.status, headers: Object.fromEntries(response.headers), body: responseBody });
      } catch (error) {
        return failed(error);
      }
    },
  );

  server.registerTool(
    "zkagent_prove",
    {
      description:
        'The credentials for a ZKAgent challenge (the "challenge" member of a 401 body): returns {authorization}, the Authorization header value to repeat the request with.',
      inputSchema: z
        .object({
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
    },
    async ({ challenge }) => {
      try {
        const { challenge_id, nonce, action, context, circuit_id, circuit } = challenge;
        const params: Record<string, string> = {};
        for (const [name, value] of Object.entries(challenge)) if (typeof value !== "object") params[name] = String(value);
        const parsed: ZkAgentChallenge = { challenge_id, nonce, action, context: context ?? {}, circuit_id, circuit, params };
        return text({ authorization: await answerChallenge(parsed, options) });
      } catch (error) {
        return failed(error);
      }
    },
  );
  return server;
}
