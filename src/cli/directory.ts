// `zkagent directory`: the Web Bot Auth key directory of an operator's
// agents (docs/http-auth.md, "Signed agents"), from their identity files:
// their public keys only, the key id each signature will name beside each.
import { keyDirectory, keyIdOf } from "../web-bot-auth";
import { DIRECTORY_PATH } from "../web-bot-auth/directory";
import { parse, printJson, readJsonObjectFile, say, UsageError } from "./args";

export const directoryHelp = `zkagent directory --identity FILE [--identity FILE]... [--json]
  The key directory (a JWKS) of these agents' Ed25519 public keys, for an
  operator to serve at ${DIRECTORY_PATH}
  (signed: the SDK's directoryResponse(identities, {origin}) answers it).
  Agents sign with \`zkagent fetch --signature-agent ORIGIN\`; each signature
  names its key by keyid, the key's RFC 7638 thumbprint, listed here.
  Public keys only: no secret is ever printed.
  --identity  what \`zkagent identity new --json\` prints (its signing_key is read)
  --json      the directory document itself, as served`;

function signingKeyOf(path: string): string {
  const key = readJsonObjectFile(path, "identity").signing_key;
  if (typeof key !== "string" || key === "") throw new UsageError(`--identity: ${path} has no "signing_key"`);
  return key;
}

export async function directoryCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { identity: { type: "string", multiple: true }, json: { type: "boolean" } }, true);
  if (values.help) return (await say(directoryHelp), 0);
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  if (!values.identity?.length) throw new UsageError("--identity is required");
  const identities = values.identity.map((path) => ({ signing_key: signingKeyOf(path) }));
  let directory: ReturnType<typeof keyDirectory>;
  try {
    directory = keyDirectory(identities);
  } catch (error) {
    throw new UsageError(`--identity: ${(error as Error).message}`);
  }
  if (values.json) {
    await printJson(directory);
    return 0;
  }
  for (const key of directory.keys) await say(`keyid ${await keyIdOf(key.x)}  (Ed25519 x ${key.x})`);
  await say(`serve it at ${DIRECTORY_PATH}, signed (the SDK's directoryResponse); --json prints the document`);
  return 0;
}
