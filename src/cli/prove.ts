import { CircuitSourceError, loadCircuit, prove, sign } from "../agent";
import { isValidSecret, SECRET_RANGE } from "../identity/commitment";
import { parseFieldElement } from "../identity/field";
import type { Config } from "../config";
import { proveGroupCommand, proveGroupHelp } from "./prove-group";
import { proveBudgetCommand, proveBudgetHelp } from "./budget";
import {
  parse,
  inCliTerms,
  parseContext,
  printJson,
  requireString,
  say,
  secretOption,
  shown,
  TABLE_OPTIONS,
  tableChoice,
  tableOptionsHelp,
  UsageError,
  warn,
} from "./args";

export const proveHelp = `zkagent prove (--secret S | --secret-file PATH) --nonce N --action A [--context JSON] [--circuit SOURCE [--cache-dir DIR] [--allow-insecure-loopback]] [--table-cache DIR | --no-table-cache] [--threads N] [--json]
  Proves knowledge of the identity secret for one challenge, bound to its
  nonce, the action and the context. Prints the string to submit as "proof"
  (with --json: {"proof": "…", "circuit_id": "…"}). The secret is a decimal field element in
  ${SECRET_RANGE}; --secret-file reads it from a file (- = standard input), which
  keeps it out of shell history and process listings.
  --circuit: the circuit the challenge names (its circuit_id), as a URL
  https://…/v1/circuits/{id} (artifacts checked against the SHA-256 the service
  publishes, cached in --cache-dir, default ~/.cache/zkagent/circuits, and
  checked again when read from it) or a ceremony directory. Whatever the
  source, the witness wasm must be one this build pins and the zkey must be
  for that circuit, with a key hashing to the circuit's vk_hash.
  --allow-insecure-loopback: accept an http:// URL to this machine
  (localhost, 127.0.0.0/8, ::1); other http:// URLs are always refused.
  Default: the development circuit built in.
${tableOptionsHelp}

${proveGroupHelp}

${proveBudgetHelp}`;

export async function proveCommand(argv: string[], config: Config): Promise<number> {
  // A challenge for a group is answered with a Semaphore proof: another set of options.
  if (argv.some((arg) => arg === "--group-challenge" || arg.startsWith("--group-challenge="))) return proveGroupCommand(argv, config);
  if (argv.some((arg) => arg === "--budget-challenge" || arg.startsWith("--budget-challenge="))) return proveBudgetCommand(argv, config);
  const { values } = parse(argv, {
    secret: { type: "string" },
    "secret-file": { type: "string" },
    nonce: { type: "string" },
    action: { type: "string" },
    context: { type: "string" },
    circuit: { type: "string" },
    "cache-dir": { type: "string" },
    "allow-insecure-loopback": { type: "boolean" },
    ...TABLE_OPTIONS,
    json: { type: "boolean" },
  });
  if (values.help) return (say(proveHelp), 0);
  const secret = parseFieldElement(await secretOption(values, "secret"));
  // 0 is refused like any value outside the range: Poseidon(0) is public, anyone can prove it.
  if (secret === null || !isValidSecret(secret)) throw new UsageError(`the secret must be a decimal field element in ${SECRET_RANGE}`);
  let circuit: Awaited<ReturnType<typeof loadCircuit>>;
  try {
    circuit = await loadCircuit(values.circuit, { cacheDir: values["cache-dir"], allowInsecureLoopback: values["allow-insecure-loopback"] === true });
  } catch (error) {
    if (!(error instanceof CircuitSourceError)) throw error;
    warn(`zkagent: ${shown(inCliTerms(error.message))}`);
    return 1;
  }
  // One proof per process: no window tables (they pay back only over several proofs).
  const proof = await prove(
    {
      secret,
      nonce: requireString(values, "nonce"),
      action: requireString(values, "action"),
      context: parseContext(values.context),
      circuit,
    },
    tableChoice(values),
  );
  if (values.json) printJson({ proof, circuit_id: circuit.id });
  else say(proof);
  return 0;
}

export const signHelp = `zkagent sign (--signing-secret K | --signing-secret-file PATH) --challenge-id ID --nonce N --action A [--context JSON] [--json]
  Signs the canonical challenge message with the agent's Ed25519 key. Prints
  the "agent_signature" to submit with the proof (with --json:
  {"agent_signature": "…"}). --signing-secret-file reads the key from a file
  (- = standard input).`;

export async function signCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, {
    "signing-secret": { type: "string" },
    "signing-secret-file": { type: "string" },
    "challenge-id": { type: "string" },
    nonce: { type: "string" },
    action: { type: "string" },
    context: { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help) return (say(signHelp), 0);
  const agent_signature = sign({
    signingSecret: await secretOption(values, "signing-secret"),
    challengeId: requireString(values, "challenge-id"),
    nonce: requireString(values, "nonce"),
    action: requireString(values, "action"),
    context: parseContext(values.context),
  });
  if (values.json) printJson({ agent_signature });
  else say(agent_signature);
  return 0;
}
