import { createPrincipal } from "../agent";
import { parse, printJson, say, UsageError } from "./args";

export const principalHelp = `zkagent principal new [--json]
  Creates a principal's Ed25519 key pair (base64url): "principal_key" to
  register with the agent, "principal_secret" to sign its mandates with
  (zkagent mandate sign). Keep the secret with the principal, in a file only
  it can read.`;

export async function principalCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { json: { type: "boolean" } }, true);
  const [sub] = positionals;
  if (values.help || sub !== "new") {
    say(principalHelp);
    if (values.help) return 0;
    throw new UsageError(sub ? `unknown principal command "${sub}"` : "principal needs a command: new");
  }
  const principal = createPrincipal();
  if (values.json) printJson(principal);
  else for (const [name, value] of Object.entries(principal)) say(`${name.padEnd(18)} ${value}`);
  return 0;
}
