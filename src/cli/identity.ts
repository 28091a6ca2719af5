import { createIdentity, createSemaphoreIdentity } from "../agent";
import { identifierProblem } from "../identity/identifiers";
import { parse, printJson, say, UsageError } from "./args";

export const identityHelp = `zkagent identity new [--semaphore] [--agent-id ID | --group-id ID] [--json]
  Creates an agent identity: a secret field element (uniform in [1, r), never
  0, whose commitment Poseidon(0) is public), its Poseidon identity
  commitment (register this), and an Ed25519 signing key pair (base64url).
  Keep "secret" and "signing_secret" on the agent; they are never sent.
  --agent-id ID: add "agent_id" (the id the merchant registers it under), so
  the file is ready for zkagent fetch --identity and zkagent mcp --identity.
  --semaphore: a Semaphore v4 identity for private verification instead:
  "private_key" (base64; keep it on the agent, e.g. --json > identity.json for
  zkagent prove --group-challenge) and "identity_commitment" (the group's
  owner adds it as a member); --group-id ID adds "group_id" (the group it
  claims with zkagent fetch).`;

/** An id given on the command line, held to the service's rules for agent_id (1–256 characters, no NUL, not a dot segment). */
function idOption(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const problem = value.length === 0 || value.length > 256 ? "must be 1 to 256 characters" : identifierProblem("agent_id", value);
  if (problem) throw new UsageError(`--${flag} ${problem}`);
  return value;
}

export async function identityCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { json: { type: "boolean" }, semaphore: { type: "boolean" }, "agent-id": { type: "string" }, "group-id": { type: "string" } },
    true,
  );
  const [sub] = positionals;
  if (values.help || sub !== "new") {
    say(identityHelp);
    if (values.help) return 0;
    throw new UsageError(sub ? `unknown identity command "${sub}"` : "identity needs a command: new");
  }
  // An agent claim proves with the agent identity, a group claim with the Semaphore one: the other pairing names nothing it could prove.
  if (values.semaphore && values["agent-id"] !== undefined) throw new UsageError("--agent-id names an agent identity; a --semaphore identity takes --group-id");
  if (!values.semaphore && values["group-id"] !== undefined) throw new UsageError("--group-id goes with --semaphore (a group member's identity)");
  const agent_id = idOption("agent-id", values["agent-id"]);
  const group_id = idOption("group-id", values["group-id"]);
  const identity = values.semaphore
    ? { ...(group_id === undefined ? {} : { group_id }), ...createSemaphoreIdentity() }
    : { ...(agent_id === undefined ? {} : { agent_id }), ...(await createIdentity()) };
  if (values.json) printJson(identity);
  else for (const [name, value] of Object.entries(identity)) say(`${name.padEnd(20)} ${value}`);
  return 0;
}
