#!/usr/bin/env bun
// zkagent, the agent's commands only: the `zkagent` bin of the @zkagent/agent
// package (bundled for Node by scripts/pack.ts, it runs under Node ≥ 20 with
// no Bun). Nothing here reaches the server or the store; the full CLI
// (src/cli/index.ts, the `zkagent` package) has these commands and the
// service's.
import { loadConfig } from "../config";
import { say, UsageError } from "./args";
import { runCli } from "./run";
import { directoryCommand, directoryHelp } from "./directory";
import { fetchCommand, fetchHelp } from "./fetch";
import { identityCommand, identityHelp } from "./identity";
import { mcpCommand, mcpHelp } from "./mcp";
import { proveCommand, proveHelp, signCommand, signHelp } from "./prove";
import { receiptCommand, receiptHelp } from "./receipt";
import { verifyCommand, verifyHelp } from "./verify";

const help = `zkagent — the agent's side of zkagent (the @zkagent/agent package)

Usage: zkagent <command> [options]     (zkagent <command> --help for details)

  identity new           create an agent identity (secret, commitment, signing keys; --semaphore: for groups)
  prove                  prove an identity for a challenge (nonce, action, context), or group membership (--group-challenge)
  sign                   sign a challenge with the agent's Ed25519 key
  fetch                  an HTTP request that answers ZKAgent challenges (a curl for agents)
  mcp                    an MCP server (stdio) with the agent's tools: identity, fetch, prove
  directory              the Web Bot Auth key directory (public keys) of agents' identities
  receipt verify         check a signed verification receipt against a JWKS
  verify                 verify a snarkjs Groth16 proof (drop-in for snarkjs groth16 verify)

The service and its administration (serve, keys, circuits, …) are in the zkagent package.`;

const commands: Record<string, { help: string; run: (argv: string[]) => Promise<number> }> = {
  identity: { help: identityHelp, run: identityCommand },
  prove: { help: proveHelp, run: (argv) => proveCommand(argv, loadConfig()) },
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
  const chosen = commands[command];
  if (!chosen) throw new UsageError(`unknown command "${command}" (the agent's commands: ${Object.keys(commands).join(", ")})`);
  return chosen.run(rest);
}

runCli(main);
