// `zkagent groups create|show|add|remove`: Semaphore groups (private
// verification, docs/privacy.md) owned by an API key, through the service's
// API (src/cli/remote.ts).
import type { Config } from "../config";
import { parse, printJson, readJsonObjectFile, say, shown, UsageError } from "./args";
import { REMOTE_OPTIONS, remoteCall, remoteHelp, remoteOf } from "./remote";

export const groupsHelp = `zkagent groups — groups owned by an API key, through the service

  zkagent groups create GROUP_ID [--mandate FILE]
      An empty group owned by the key; --mandate: a JSON file with the
      mandate each member holds separately (docs/mandates.md).
  zkagent groups show GROUP_ID
      Its size, active members and root.
  zkagent groups add GROUP_ID (COMMITMENT... | --identity FILE)
      Adds members: identity commitments, or the one in FILE (the JSON of
      \`zkagent identity new --semaphore --json\`; only its commitment is sent).
  zkagent groups remove GROUP_ID COMMITMENT
      Removes a member: its proofs stop verifying at once.

${remoteHelp}`;

export async function groupsCommand(argv: string[], config: Config): Promise<number> {
  const { values, positionals } = parse(argv, { ...REMOTE_OPTIONS, mandate: { type: "string" }, identity: { type: "string" } }, true);
  const [sub, groupId, ...rest] = positionals;
  if (values.help || !sub) {
    say(groupsHelp);
    return values.help ? 0 : 2;
  }
  if (!["create", "show", "add", "remove"].includes(sub)) throw new UsageError(`unknown groups command "${shown(sub)}"`);
  if (!groupId) throw new UsageError(`groups ${sub} needs the GROUP_ID`);
  const group = `/v1/groups/${encodeURIComponent(groupId)}`;
  let request: { method: string; path: string; body?: unknown };
  switch (sub) {
    case "create": {
      if (rest.length > 0) throw new UsageError("groups create takes one GROUP_ID");
      const mandate = values.mandate === undefined ? undefined : readJsonObjectFile(values.mandate, "mandate");
      request = { method: "POST", path: "/v1/groups", body: { group_id: groupId, ...(mandate ? { mandate } : {}) } };
      break;
    }
    case "show":
      request = { method: "GET", path: group };
      break;
    case "add": {
      const fromFile = values.identity === undefined ? [] : [commitmentOf(values.identity)];
      const commitments = [...rest, ...fromFile];
      if (commitments.length === 0) throw new UsageError("groups add needs identity commitments, or --identity FILE");
      request = { method: "POST", path: `${group}/members`, body: { identity_commitments: commitments } };
      break;
    }
    default: {
      if (rest.length !== 1) throw new UsageError("groups remove needs the GROUP_ID and one COMMITMENT");
      request = { method: "DELETE", path: `${group}/members/${encodeURIComponent(rest[0]!)}` };
    }
  }
  const remote = await remoteOf(values, config);
  const answer = await remoteCall(remote, request.method, request.path, request.body);
  if (answer === null) return 1;
  if (remote.json) printJson(answer);
  else
    say(
      `Group ${shown(String(answer.group_id ?? groupId))}: ${answer.active_members ?? 0} active member(s), size ${answer.size ?? 0}, root ${answer.merkle_tree_root ?? "0"}.`,
    );
  return 0;
}

function commitmentOf(path: string): string {
  const identity = readJsonObjectFile(path, "identity");
  const commitment = identity.identity_commitment;
  if (typeof commitment !== "string" || commitment === "") throw new UsageError(`--identity: ${path} has no "identity_commitment"`);
  return commitment;
}
