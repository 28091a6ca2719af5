#!/usr/bin/env bun
// zkagent — one entry point for the server, key management and the agent side.
import { useBuiltInBudgetArtifacts } from "../agent/budget/artifacts";
import { budgetFilePath } from "../circuits/budget-files";
import { loadConfig } from "../config";
import { say, UsageError } from "./args";
import { agentsCommand, agentsHelp } from "./agents";
import { auditCommand, auditHelp } from "./audit";
import { budgetCommand, budgetHelp } from "./budget";
import { ceremonyCommand, ceremonyHelp } from "./ceremony";
import { circuitsCommand, circuitsHelp } from "./circuits";
import { demoCommand, demoHelp } from "./demo";
import { directoryCommand, directoryHelp } from "./directory";
import { fetchCommand, fetchHelp } from "./fetch";
import { groupsCommand, groupsHelp } from "./groups";
import { identityCommand, identityHelp } from "./identity";
import { keysCommand, keysHelp } from "./keys";
import { mandateCommand, mandateHelp } from "./mandate";
import { mcpCommand, mcpHelp } from "./mcp";
import { principalCommand, principalHelp } from "./principal";
import { proveCommand, proveHelp, signCommand, signHelp } from "./prove";
import { receiptCommand, receiptHelp, receiptsCommand, receiptsHelp } from "./receipts";
import { serveCommand, serveHelp } from "./serve";
import { runCli } from "./run";
import { agentCommandsSummary } from "./agent-commands";
import { verifyCommand, verifyHelp } from "./verify";
import { webhooksCommand, webhooksHelp } from "./webhooks";
import { VERSION } from "../version";

const help = `zkagent — zero-knowledge identity verification for AI agents

Usage: zkagent <command> [options]     (zkagent <command> --help for details)
       zkagent --version

  serve                  run the HTTP service
  keys create|list|revoke|usage|set-limit   manage API keys
  agents register|show|revoke               agents under an API key (through the service)
  groups create|show|add|remove             groups for private verification (through the service)
  receipts list|rotate|retire               manage the receipt signing keys
  ceremony init|contribute|beacon|verify    phase 2 of the trusted setup (docs/trust.md)
  circuits list|add|activate|retire         manage the circuit versions agents prove with
  webhooks list|deliveries|redeliver        webhook endpoints and deliveries (docs/webhooks.md)
${agentCommandsSummary}
  principal new          create a principal's Ed25519 key pair (signs the agent's mandates)
  mandate sign           sign a mandate for an agent with the principal's key
  demo                   run the whole flow against a running server
  audit                  export the audit trail as JSON lines`;

const helps: Record<string, string> = {
  serve: serveHelp,
  keys: keysHelp,
  agents: agentsHelp,
  groups: groupsHelp,
  identity: identityHelp,
  prove: proveHelp,
  budget: budgetHelp,
  sign: signHelp,
  fetch: fetchHelp,
  mcp: mcpHelp,
  directory: directoryHelp,
  demo: demoHelp,
  audit: auditHelp,
  verify: verifyHelp,
  receipts: receiptsHelp,
  receipt: receiptHelp,
  principal: principalHelp,
  mandate: mandateHelp,
  ceremony: ceremonyHelp,
  circuits: circuitsHelp,
  webhooks: webhooksHelp,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    say(rest[0] && helps[rest[0]] ? helps[rest[0]]! : help);
    return command ? 0 : 2;
  }
  if (command === "--version") return (say(`zkagent ${VERSION}`), 0);
  const config = loadConfig();
  switch (command) {
    case "serve":
      return serveCommand(rest, config);
    case "keys":
      return keysCommand(rest, config);
    case "agents":
      return agentsCommand(rest, config);
    case "groups":
      return groupsCommand(rest, config);
    case "identity":
      return identityCommand(rest);
    case "prove":
      return proveCommand(rest, config);
    case "budget":
      return budgetCommand(rest, config);
    case "sign":
      return signCommand(rest);
    case "fetch":
      return fetchCommand(rest, config);
    case "mcp":
      return mcpCommand(rest);
    case "directory":
      return directoryCommand(rest);
    case "verify":
      return verifyCommand(rest);
    case "principal":
      return principalCommand(rest);
    case "mandate":
      return mandateCommand(rest);
    case "demo":
      return demoCommand(rest, config);
    case "audit":
      return auditCommand(rest, config);
    case "receipts":
      return receiptsCommand(rest, config);
    case "receipt":
      return receiptCommand(rest);
    case "ceremony":
      return ceremonyCommand(rest);
    case "circuits":
      return circuitsCommand(rest, config);
    case "webhooks":
      return webhooksCommand(rest, config);
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

// The whole CLI (the compiled binary among its builds) carries the budget circuit's files: its agent commands prove from them.
useBuiltInBudgetArtifacts(budgetFilePath);
runCli(main);
