import { readFileSync } from "node:fs";
import { signMandate } from "../agent";
import { nonNegativeInteger, parse, printJson, requireString, say, UsageError } from "./args";

export const mandateHelp = `zkagent mandate sign --principal-secret-file F --key-id KEY --agent-id ID --commitment C --mandate JSON [--iat SECONDS] [--json]
  Signs a mandate for one agent, registered under the platform's API key KEY
  (its public id: zka_<KEY>_…), with the principal's key. Prints the compact
  JWS to register as {"mandate_jws": "…"} (with --json: {"mandate_jws": "…"}).
  F holds the principal_secret, or the JSON that "zkagent principal new --json"
  printed. The secret is read from a file so it never shows in the process list.
  --iat defaults to now; a replacement must be issued later than the mandate it replaces.`;

/** The secret from a file: bare base64url, or principal new's JSON. */
function readPrincipalSecret(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8").trim();
  } catch (error) {
    throw new UsageError(`cannot read --principal-secret-file: ${(error as Error).message}`);
  }
  if (text.startsWith("{")) {
    try {
      const secret = (JSON.parse(text) as { principal_secret?: unknown }).principal_secret;
      if (typeof secret === "string") return secret;
    } catch {}
    throw new UsageError("--principal-secret-file holds JSON without a principal_secret string");
  }
  return text;
}

export async function mandateCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      "principal-secret-file": { type: "string" },
      "key-id": { type: "string" },
      "agent-id": { type: "string" },
      commitment: { type: "string" },
      mandate: { type: "string" },
      iat: { type: "string" },
      json: { type: "boolean" },
    },
    true,
  );
  const [sub] = positionals;
  if (values.help || sub !== "sign") {
    say(mandateHelp);
    if (values.help) return 0;
    throw new UsageError(sub ? `unknown mandate command "${sub}"` : "mandate needs a command: sign");
  }
  let mandate: unknown;
  try {
    mandate = JSON.parse(requireString(values, "mandate"));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError("--mandate must be a JSON object");
  }
  let mandate_jws: string;
  try {
    mandate_jws = await signMandate({
      principalSecret: readPrincipalSecret(requireString(values, "principal-secret-file")),
      keyId: requireString(values, "key-id"),
      agentId: requireString(values, "agent-id"),
      identityCommitment: requireString(values, "commitment"),
      mandate,
      iat: nonNegativeInteger(values.iat, "iat"),
    });
  } catch (error) {
    if (error instanceof RangeError || (error instanceof Error && /secret/.test(error.message))) throw new UsageError(error.message);
    throw error;
  }
  if (values.json) printJson({ mandate_jws });
  else say(mandate_jws);
  return 0;
}
