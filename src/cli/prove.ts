import { prove, sign } from "../agent";
import { parse, parseContext, printJson, requireString, say } from "./args";

export const proveHelp = `zkagent prove --secret S --nonce N --action A [--context JSON] [--json]
  Proves knowledge of the identity secret for one challenge, bound to its
  nonce, the action and the context. Prints the string to submit as "proof"
  (with --json: {"proof": "…"}).`;

export async function proveCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, { secret: { type: "string" }, nonce: { type: "string" }, action: { type: "string" }, context: { type: "string" }, json: { type: "boolean" } });
  if (values.help) return say(proveHelp), 0;
  const proof = await prove({
    secret: requireString(values, "secret"),
    nonce: requireString(values, "nonce"),
    action: requireString(values, "action"),
    context: parseContext(values.context),
  });
  if (values.json) printJson({ proof });
  else say(proof);
  return 0;
}

export const signHelp = `zkagent sign --signing-secret K --challenge-id ID --nonce N --action A [--context JSON] [--json]
  Signs the canonical challenge message with the agent's Ed25519 key. Prints
  the "agent_signature" to submit with the proof (with --json:
  {"agent_signature": "…"}).`;

export async function signCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    "signing-secret": { type: "string" },
    "challenge-id": { type: "string" },
    nonce: { type: "string" },
    action: { type: "string" },
    context: { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help) return say(signHelp), 0;
  const agent_signature = sign({
    signingSecret: requireString(values, "signing-secret"),
    challengeId: requireString(values, "challenge-id"),
    nonce: requireString(values, "nonce"),
    action: requireString(values, "action"),
    context: parseContext(values.context),
  });
  if (values.json) printJson({ agent_signature });
  else say(agent_signature);
  return 0;
}
