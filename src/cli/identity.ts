import { createIdentity, createSemaphoreIdentity } from "../agent";
import { parse, printJson, say, UsageError } from "./args";

export const identityHelp = `zkagent identity new [--semaphore] [--json]
  Creates an agent identity: a secret field element (uniform in [1, r), never
  0, whose commitment Poseidon(0) is public), its Poseidon identity
  commitment (register this), and an Ed25519 signing key pair (base64url).
  Keep "secret" and "signing_secret" on the agent; they are never sent.
  --semaphore: a Semaphore v4 identity for private verification instead:
  "private_key" (base64; keep it on the agent, e.g. --json > identity.json for
  zkagent prove --group-challenge) and "identity_commitment" (the group's
  owner adds it as a member).`;

export async function identityCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { json: { type: "boolean" }, semaphore: { type: "boolean" } }, true);
  const [sub] = positionals;
  if (values.help || sub !== "new") {
    say(identityHelp);
    if (values.help) return 0;
    throw new UsageError(sub ? `unknown identity command "${sub}"` : "identity needs a command: new");
  }
  const identity = values.semaphore ? createSemaphoreIdentity() : await createIdentity();
  if (values.json) printJson(identity);
  else for (const [name, value] of Object.entries(identity)) say(`${name.padEnd(20)} ${value}`);
  return 0;
}
