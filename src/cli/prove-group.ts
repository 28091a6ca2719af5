// `zkagent prove --group-challenge`: the agent's side of private verification
// (src/agent/group/) as a command: the flags say what the agent means to
// prove (--action, --context, --origin) and the SDK holds the challenge to them.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { constants } from "node:fs";
import { ChallengeError, GroupProofError, parseGroupChallenge, proveGroupChallenge, SemaphoreArtifactError } from "../agent";
import type { Config } from "../config";
import type { JsonObject } from "../identity/encoding";
import {
  GROUP_OPTIONS,
  groupChoice,
  groupOptionsHelp,
  inCliTerms,
  parse,
  parseContext,
  printJson,
  say,
  shown,
  TABLE_OPTIONS,
  tableChoice,
  tableOptionsHelp,
  UsageError,
  warn,
  readStdin,
} from "./args";
import { EXIT_UNREACHABLE, unreachable } from "./unreachable";

export const proveGroupHelp = `zkagent prove --group-challenge FILE --identity FILE [--action NAME] [--context JSON] [--origin URL] [--service URL [--allow-insecure-loopback]] [--artifacts DIR] [--min-anonymity N] [--table-cache DIR | --no-table-cache] [--threads N] [--json]
  Proves, for a challenge made for a group (its JSON as the service returned
  it, or the "challenge" member of a ZKAgent 401), that the Semaphore
  identity is one of the group's members, without saying which. Prints the
  Semaphore v4 proof object (JSON, the same with --json) to submit as the
  proof.
  The proof binds the challenge's "message", which is checked first: it must
  be the one the service derives from the challenge's nonce, the action and
  the context, or nothing is proved (exit 1, message_mismatch). The action
  and context are the challenge file's "action" and "context" (a 401 carries
  them) or --action and --context (what the service's challenge answer does
  not repeat); given both ways they must be equal. No action either way is a
  usage error; no context means the empty one.
  The scope (the member's pseudonym's domain) is checked too: a challenge
  that binds an origin (a 401's, "@request" in its context) is proved only
  for --origin, the platform the proof is for, and only with that origin's
  scope (exit 1, scope_mismatch, otherwise); a challenge asked of the service
  directly binds none and carries its asking key's scope, which cannot be
  checked: prove such challenges only for the platform you asked yourself.
  --identity: the JSON of zkagent identity new --semaphore --json, or the
  bare base64 private key. Either file may be - (standard input), not both.
  --service: the zkagent service the group lives on (default
  http://localhost:$PORT); the group's tree is synced from
  /v1/groups/{group_id}/members without an API key and checked against the
  root it serves; the proof is for that current root, whatever the
  challenge's merkle_tree_root and size say (they are advisory). An http://
  --service is accepted only to this machine with --allow-insecure-loopback
  (the default, this machine's own service, needs no flag).
  --artifacts: a directory holding semaphore-<depth>.wasm and .zkey; default
  the installed @zk-kit/semaphore-artifacts, else the cache
  ($XDG_CACHE_HOME/zkagent/semaphore-artifacts), else downloaded from
  --service (/v1/circuits/{circuit_id}/wasm and /zkey) and cached. Whatever
  the source, each file must have the SHA-256 pinned in zkagent, or it is
  refused before it is used.
  The group's tree is kept in $XDG_CACHE_HOME/zkagent/group-trees (else
  ~/.cache/zkagent/group-trees): a later run asks only for the changes since.
${groupOptionsHelp}
${tableOptionsHelp}`;

// Both files are a few hundred bytes; anything far larger is not one of them.
const MAX_INPUT_BYTES = 1 << 20;

async function readInput(path: string, option: string): Promise<string> {
  if (path === "-") {
    const text = await readStdin();
    if (text.length > MAX_INPUT_BYTES) throw new UsageError(`--${option}: standard input holds more than ${MAX_INPUT_BYTES} bytes`);
    return text;
  }
  let fd: number;
  try {
    // Not blocking: a FIFO is refused below rather than waited on.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new UsageError(`--${option}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UsageError(`--${option}: ${path} is not a regular file`);
    if (stat.size > MAX_INPUT_BYTES) throw new UsageError(`--${option}: ${path} has more than ${MAX_INPUT_BYTES} bytes`);
    const bytes = Buffer.alloc(stat.size);
    let offset = 0;
    while (offset < bytes.length) {
      const read = readSync(fd, bytes, offset, bytes.length - offset, offset);
      if (read === 0) break;
      offset += read;
    }
    return bytes.subarray(0, offset).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** The private key from the identity file: `{"private_key": …}` (identity new --semaphore --json) or the bare key. */
function privateKeyOf(text: string): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{")) return trimmed;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    throw new UsageError("--identity: the file is neither JSON nor a bare private key");
  }
  const key = (value as { private_key?: unknown }).private_key;
  if (typeof key !== "string") throw new UsageError('--identity: the JSON has no "private_key" string (zkagent identity new --semaphore --json writes it)');
  return key;
}

export async function proveGroupCommand(argv: string[], config: Config): Promise<number> {
  const { values } = parse(argv, {
    "group-challenge": { type: "string" },
    identity: { type: "string" },
    service: { type: "string" },
    "allow-insecure-loopback": { type: "boolean" },
    artifacts: { type: "string" },
    action: { type: "string" },
    context: { type: "string" },
    origin: { type: "string" },
    ...GROUP_OPTIONS,
    ...TABLE_OPTIONS,
    json: { type: "boolean" },
  });
  if (values.help) return (say(proveGroupHelp), 0);
  const challengePath = values["group-challenge"];
  const identityPath = values.identity;
  if (!challengePath) throw new UsageError("--group-challenge is required");
  if (!identityPath) throw new UsageError("--identity is required");
  if (challengePath === "-" && identityPath === "-") throw new UsageError("only one of --group-challenge and --identity can be standard input");
  let challengeJson: unknown;
  try {
    challengeJson = JSON.parse(await readInput(challengePath, "group-challenge"));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError("--group-challenge: the file is not JSON");
  }
  if (typeof challengeJson !== "object" || challengeJson === null || Array.isArray(challengeJson))
    throw new UsageError("--group-challenge: the file is not a JSON object");
  const challenge = challengeJson as Record<string, unknown>;
  const flagContext = parseContext(values.context) as JsonObject | undefined;
  const privateKey = privateKeyOf(await readInput(identityPath, "identity"));
  if (values.origin !== undefined && !/^https?:\/\/[^/]/.test(values.origin))
    throw new UsageError(`--origin: ${shown(values.origin)} is not an http(s) origin`);
  try {
    // A file that is no group challenge is named as such first (exit 1), before what the flags must add to it.
    parseGroupChallenge(challenge);
    if (values.action === undefined && typeof challenge.action !== "string")
      throw new UsageError(
        '--group-challenge: the challenge has no "action" and no --action is given: the message it binds cannot be checked, so nothing is proved',
      );
    // The SDK holds the challenge to what the flags say is meant (action, context, origin): the same checks as the SDK's callers get.
    const proof = await proveGroupChallenge(
      {
        privateKey,
        challenge: challenge as never,
        service: values.service ?? `http://localhost:${config.port}`,
        action: values.action,
        context: flagContext,
        origin: values.origin,
      },
      {
        artifactsDir: values.artifacts,
        // The default service is this machine's own, named by the CLI itself; a --service given over http needs the flag.
        allowInsecureLoopback: values.service === undefined || values["allow-insecure-loopback"] === true,
        ...groupChoice(values),
        ...tableChoice(values),
      },
    );
    printJson(proof);
    return 0;
  } catch (error) {
    if (error instanceof ChallengeError) {
      warn(`zkagent: refused to prove (${error.code}${error.field ? `, field ${error.field}` : ""}): ${shown(error.message)}`);
      return 1;
    }
    // The members could not be read because the service is out of reach: its URL, exit 3.
    const down = unreachable(error);
    if (down) {
      warn(`zkagent: ${shown(down.message)}`);
      return EXIT_UNREACHABLE;
    }
    if (!(error instanceof GroupProofError || error instanceof SemaphoreArtifactError)) throw error;
    warn(`zkagent: ${shown(inCliTerms(error.message))}`);
    return 1;
  }
}
