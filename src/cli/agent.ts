#!/usr/bin/env bun
// zkagent, the agent's commands only: the `zkagent` bin of the @zkagent/agent
// package (bundled for Node by scripts/pack.ts, it runs under Node ≥ 20 with
// no Bun). Nothing here reaches the server or the store; the full CLI
// (src/cli/index.ts, the `zkagent` package) has these commands and the
// service's.
import { loadConfig } from "../config";
import { say, UsageError } from "./args";
import { runCli } from "./run";
import { agentCommandsSummary } from "./agent-commands";
import { budgetCommand, budgetHelp } from "./budget";
import { directoryCommand, directoryHelp } from "./directory";
import { fetchCommand, fetchHelp } from "./fetch";
import { identityCommand, identityHelp } from "./identity";
import { mcpCommand, mcpHelp } from "./mcp";
import { proveCommand, proveHelp, signCommand, signHelp } from "./prove";
import { receiptCommand, receiptHelp } from "./receipt";
import { verifyCommand, verifyHelp } from "./verify";
import { VERSION } from "../version";

const help = `zkagent — the agent's side of zkagent (the @zkagent/agent package)

Usage: zkagent <command> [options]     (zkagent <command> --help for details)
       zkagent --version

${agentCommandsSummary}

The service and its administration (serve, keys, circuits, …) are in the zkagent package.`;

const commands: Record<string, { help: string; run: (argv: string[]) => Promise<number> }> = {
  identity: { help: identityHelp, run: identityCommand },
  prove: { help: proveHelp, run: (argv) => proveCommand(argv, loadConfig()) },
  budget: { help: budgetHelp, run: (argv) => budgetCommand(argv, loadConfig()) },
  sign: { help: signHelp, run: signCommand },
  fetch: { help: fetchHelp, run: fetchCommand },
  mcp: { help: mcpHelp, run: mcpCommand },
  directory: { help: directoryHelp, run: directoryCommand },
  receipt: { help: receiptHelp, run: receiptCommand },
  verify: { help: verifyHelp, run: verifyCommand },
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    const topic = rest[0] === undefined ? undefined : commands[rest[0]];
    say(topic ? topic.help : help);
    return command ? 0 : 2;
  }
  if (command === "--version") return (say(`zkagent ${VERSION} (@zkagent/agent)`), 0);
  const chosen = commands[command];
  if (!chosen) throw new UsageError(`unknown command "${command}" (the agent's commands: ${Object.keys(commands).join(", ")})`);
  return chosen.run(rest);
}

runCli(main);
