// zkagent receipt verify: checks a signed receipt against a JWKS. Apart from
// receipts.ts (the signing keys, in the store): an agent's command, which the
// @zkagent/agent package runs under Node without the store.
import { readFileSync } from "node:fs";
import { InvalidKeySetError, type JsonWebKeySet, parseKeySet, verifyReceipt } from "../receipts/verify";
import { parse, printJson, readStdin, say, shown, UsageError, warn } from "./args";

export const receiptHelp = `zkagent receipt verify RECEIPT|- --jwks URL|FILE [--json]
  Checks a receipt (compact JWS; "-" reads it from stdin) against a JSON Web
  Key Set: a URL (fetched, e.g. https://…/.well-known/jwks.json) or a file.
  Prints the claims. Exit 0 valid, 1 invalid (the reason), 2 usage or input error.`;

export async function receiptCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { jwks: { type: "string" }, json: { type: "boolean" } }, true);
  const [sub, source] = positionals;
  if (values.help || !sub) {
    say(receiptHelp);
    return values.help ? 0 : 2;
  }
  if (sub !== "verify") throw new UsageError(`unknown receipt command "${shown(sub)}"`);
  if (!source) throw new UsageError("receipt verify needs the RECEIPT (or - for stdin)");
  if (!values.jwks) throw new UsageError("--jwks is required");
  const receipt = source === "-" ? (await readStdin()).trim() : source;
  let jwks: JsonWebKeySet;
  try {
    jwks = await loadJwks(values.jwks);
  } catch (error) {
    warn(`zkagent: cannot read the JWKS ${shown(values.jwks)}: ${shown((error as Error).message)}`);
    return 2;
  }
  const result = await verifyReceipt(receipt, jwks);
  if (values.json) printJson(result);
  // The kid and the claims come from the receipt: escaped (say() escapes what JSON.stringify leaves), so a crafted one cannot redraw the terminal.
  else if (result.valid) say(`Valid receipt, signed by ${shown(result.kid)}:\n${JSON.stringify(result.claims, null, 2)}`);
  else warn(`Invalid receipt: ${result.reason}${result.kid ? ` (kid ${shown(result.kid)})` : ""}`);
  return result.valid ? 0 : 1;
}

async function loadJwks(source: string): Promise<JsonWebKeySet> {
  let text: string;
  if (/^https?:\/\//i.test(source)) {
    const response = await fetch(source, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    text = await response.text();
  } else {
    text = readFileSync(source, "utf8");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new InvalidKeySetError("not JSON");
  }
  // The same check verifyReceipt makes, so a malformed set is an input error (exit 2), not an invalid receipt.
  return parseKeySet(parsed);
}
