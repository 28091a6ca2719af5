// `zkagent mcp`: the agent's side of zkagent as an MCP server on standard
// input and output, for agent runtimes. Three tools: zkagent_identity (the
// public identity), zkagent_fetch (an HTTP request that answers ZKAgent
// challenges) and zkagent_prove (the credentials for a challenge, given with
// the request it was issued for). Both prove only a challenge that binds
// exactly that request (src/agent/checks.ts): a model cannot be talked into
// proving a challenge some site relayed.
//
// The identity file is read once, at start, from the command line: no tool
// takes a path or a secret, the input schemas are strict (an unknown member
// such as "identity" is refused), and every text a tool returns, success or
// error, passes through redact(), which removes the secrets should a server
// ever echo them. Standard output is the protocol's; nothing else is written
// there.
import { GROUP_OPTIONS, groupChoice, groupOptionsHelp, parse, say, TABLE_OPTIONS, tableChoice, tableOptionsHelp, UsageError } from "./args";
import { AGENT_OPTIONS, agentChoice, agentOptionsHelp, httpUrl, readIdentityFile, signatureAgentOption } from "./fetch";

export const mcpHelp = `zkagent mcp --identity FILE [--action NAME] [--max-amount AMOUNT --currency C] [--timeout SECONDS] [--trust URL]... [--allow-insecure-loopback] [--unsigned] [--min-anonymity N] [--signature-agent ORIGIN] [--table-cache DIR | --no-table-cache] [--threads N]
  An MCP server on standard input and output (the official MCP SDK) for
  agent runtimes, acting as the agent in FILE (the JSON that \`zkagent
  identity new --json\` prints with "agent_id" added; {"budget_group": ID}
  to spend from a budgeted group's membership, zkagent budget join). Tools:
    zkagent_identity   the agent's public identity (never its secrets)
    zkagent_fetch      {url, method?, headers?, body?, action?}
                       → {status, headers, body, proved}, answering ZKAgent
                       challenges as \`zkagent fetch\` does
    zkagent_prove      {url, method?, headers?, body?, action?, challenge}
                       → {authorization, proved}: the credentials for a
                       challenge, only if it binds exactly that request
  A challenge that binds another request, or breaks the limits below, is a
  tool error naming the field: nothing is proved. \`proved\` names the
  challenge id, action and context a proof was made for.
  Secrets are read from FILE only; no tool takes a path or returns a secret.
  --trust, --allow-insecure-loopback, --unsigned and --signature-agent
  (sign every request zkagent_fetch sends, Web Bot Auth) as for \`zkagent fetch\`.
${agentOptionsHelp}
${groupOptionsHelp}
${tableOptionsHelp}`;

export async function mcpCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      identity: { type: "string" },
      trust: { type: "string", multiple: true },
      "allow-insecure-loopback": { type: "boolean" },
      "cache-dir": { type: "string" },
      unsigned: { type: "boolean" },
      "signature-agent": { type: "string" },
      ...AGENT_OPTIONS,
      ...GROUP_OPTIONS,
      ...TABLE_OPTIONS,
    },
    true,
  );
  if (values.help) return (say(mcpHelp), 0);
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  if (!values.identity) throw new UsageError("--identity is required");
  const identity = readIdentityFile(values.identity);
  for (const service of values.trust ?? []) httpUrl(service);
  const options = {
    identity,
    ...signatureAgentOption(values["signature-agent"], identity),
    trustedServices: values.trust,
    allowInsecureLoopback: values["allow-insecure-loopback"] === true,
    cacheDir: values["cache-dir"],
    sign: !values.unsigned,
    ...agentChoice(values),
    ...groupChoice(values),
    ...tableChoice(values),
  };
  // The MCP SDK is loaded only here: its import costs ≈ 0.3–0.6 s, which no other command should pay.
  const { serveMcp } = await import("./mcp-server");
  const server = await serveMcp(identity, options);
  // Serve until the client closes standard input.
  await new Promise<void>((resolve) => {
    process.stdin.on("close", resolve);
    process.stdin.on("end", resolve);
  });
  await server.close();
  return 0;
}
