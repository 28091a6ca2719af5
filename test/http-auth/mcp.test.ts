// `zkagent mcp` driven by the official MCP client over stdio, against a real
// zkagent server and the example shop: it lists its tools, places an order
// through zkagent_fetch, proves through zkagent_prove (for the request the
// challenge was issued for, never a bare challenge), refuses what a
// confused model might ask, and no tool output, error or log line carries
// the identity's secrets.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CLI, startWorld, type World } from "./support";

setDefaultTimeout(30_000);

let world: World;
let shopper: Awaited<ReturnType<World["agent"]>>;
let client: Client;
let transport: StdioClientTransport;
const captured: string[] = [];

beforeAll(async () => {
  world = await startWorld("mcp");
  shopper = await world.agent("mcp-shopper");
  transport = new StdioClientTransport({
    command: CLI[0]!,
    args: [...CLI.slice(1), "mcp", "--identity", shopper.file],
    stderr: "pipe",
    env: { ...process.env, LOG_LEVEL: "info" } as Record<string, string>,
  });
  transport.stderr?.on("data", (chunk: Buffer) => captured.push(chunk.toString("utf8")));
  client = new Client({ name: "zkagent-test", version: "1.0.0" });
  await client.connect(transport);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await world?.stop();
});

/** The tool's text, recorded for the secret check. */
async function tool(name: string, args: Record<string, unknown>) {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  const text = content.map((c) => c.text).join("");
  captured.push(JSON.stringify(result));
  // An answer is also structuredContent (clients reading the tool's outputSchema), the same object as the text; a refusal is text only.
  expect(result.structuredContent).toEqual(result.isError ? undefined : JSON.parse(text));
  return { text, isError: result.isError === true };
}

test("lists its tools, each with an input schema that takes no path and no secret", async () => {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(["zkagent_fetch", "zkagent_identity", "zkagent_prove"]);
  const fetchTool = tools.find((t) => t.name === "zkagent_fetch")!;
  expect(Object.keys(fetchTool.inputSchema.properties ?? {}).sort()).toEqual(["action", "body", "headers", "method", "url"]);
  expect(fetchTool.inputSchema.required).toEqual(["url"]);
  const proveTool = tools.find((t) => t.name === "zkagent_prove")!;
  expect(Object.keys(proveTool.inputSchema.properties ?? {}).sort()).toEqual(["action", "body", "challenge", "headers", "method", "url"]);
  expect(proveTool.inputSchema.required?.sort()).toEqual(["challenge", "url"]);
  // Each declares the shape of its answer (structuredContent).
  expect(Object.fromEntries(tools.map((t) => [t.name, Object.keys(t.outputSchema?.properties ?? {}).sort()]))).toEqual({
    zkagent_identity: ["agent_id", "group_id", "identity_commitment", "signing_key"],
    zkagent_fetch: ["body", "headers", "proved", "status"],
    zkagent_prove: ["authorization", "proved"],
  });
  const schemas = JSON.stringify(tools);
  expect(schemas).not.toMatch(/secret|identity_file|"path"/);
  captured.push(schemas);
});

test("zkagent_identity: the public identity only", async () => {
  const { text } = await tool("zkagent_identity", {});
  expect(JSON.parse(text)).toEqual({
    agent_id: "mcp-shopper",
    group_id: null,
    identity_commitment: shopper.identity.identity_commitment,
    signing_key: shopper.identity.signing_key,
  });
});

test("zkagent_fetch places an order: 201 from the verified session", async () => {
  const { text, isError } = await tool("zkagent_fetch", {
    url: `${world.shopUrl}/orders`,
    method: "POST",
    body: JSON.stringify({ amount: 12, currency: "EUR" }),
  });
  expect(isError).toBe(false);
  const answer = JSON.parse(text);
  expect(answer.status).toBe(201);
  expect(JSON.parse(answer.body)).toMatchObject({ agent_id: "mcp-shopper", amount: 12, currency: "EUR" });
  // What was proved: the challenge, its action and the context it bound.
  expect(answer.proved).toMatchObject({ action: "purchase", context: { amount: 12, currency: "EUR", "@request": { method: "POST", target: "/orders" } } });
});

test("zkagent_prove answers a challenge given with the request it was issued for: the credentials place the order", async () => {
  const body = JSON.stringify({ amount: 4, currency: "EUR" });
  const first = await fetch(`${world.shopUrl}/orders`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: 'ZKAgent agent="mcp-shopper"' },
    body,
  });
  const { challenge } = await first.json();
  const { text, isError } = await tool("zkagent_prove", { url: `${world.shopUrl}/orders`, method: "POST", body, challenge });
  expect(isError).toBe(false);
  const { authorization, proved } = JSON.parse(text);
  expect(proved).toEqual({ challenge_id: challenge.challenge_id, action: "purchase", context: challenge.context });
  expect(authorization).toStartWith('ZKAgent agent="mcp-shopper", challenge_id="');
  const placed = await fetch(`${world.shopUrl}/orders`, { method: "POST", headers: { "content-type": "application/json", authorization }, body });
  expect(placed.status).toBe(201);
});

test("refuses a non-http URL, another identity file, and a malformed challenge, with errors that name the problem", async () => {
  const file = await tool("zkagent_fetch", { url: "file:///etc/passwd" });
  expect(file).toEqual({ isError: true, text: "zkagent: only http and https URLs are fetched, not file:" });
  const identity = await tool("zkagent_fetch", { url: `${world.shopUrl}/orders`, identity: "/tmp/other.json" });
  expect(identity.isError).toBe(true);
  expect(identity.text).toContain("identity");
  const bad = await tool("zkagent_prove", { url: `${world.shopUrl}/orders`, challenge: { challenge_id: "ch_x", nonce: "not-a-nonce", action: "purchase" } });
  expect(bad.isError).toBe(true);
  expect(bad.text).toContain("field @request");
});

test("no tool output, error or log line holds a secret", async () => {
  // Give the server a moment to flush its standard error.
  await Bun.sleep(100);
  const all = captured.join("\n");
  expect(all.length).toBeGreaterThan(500);
  expect(all).not.toContain(shopper.identity.secret);
  expect(all).not.toContain(shopper.identity.signing_secret);
});
