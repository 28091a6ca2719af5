// `zkagent agents register|show|revoke`: an agent under the merchant's API key,
// through the service's API (src/cli/remote.ts).
import type { Config } from "../config";
import { parse, printJson, readJsonObjectFile, say, shown, UsageError } from "./args";
import { REMOTE_OPTIONS, type Remote, remoteCall, remoteHelp, remoteOf } from "./remote";

export const agentsHelp = `zkagent agents — agents registered under an API key, through the service

  zkagent agents register --identity FILE [--agent-id ID] [--mandate FILE] [--unsigned]
      Registers the agent whose identity FILE holds (the JSON of
      \`zkagent identity new --json\`; its identity_commitment and
      signing_key are sent, never its secrets). --agent-id defaults to the
      file's "agent_id"; --mandate: a JSON file with the mandate
      (docs/mandates.md); --unsigned: register no signing_key.
  zkagent agents show ID        The agent, its mandate and spend
  zkagent agents revoke ID      Its proofs fail from now on

${remoteHelp}`;

export async function agentsCommand(argv: string[], config: Config): Promise<number> {
  const { values, positionals } = parse(
    argv,
    { ...REMOTE_OPTIONS, identity: { type: "string" }, "agent-id": { type: "string" }, mandate: { type: "string" }, unsigned: { type: "boolean" } },
    true,
  );
  const [sub, id] = positionals;
  if (values.help || !sub) {
    say(agentsHelp);
    return values.help ? 0 : 2;
  }
  if (!["register", "show", "revoke"].includes(sub)) throw new UsageError(`unknown agents command "${shown(sub)}"`);
  if (sub !== "register" && !id) throw new UsageError(`agents ${sub} needs the agent ID`);
  if (sub === "register" && positionals.length > 1) throw new UsageError("agents register takes --agent-id, not a positional ID");
  const body = sub === "register" ? registration(values) : undefined;
  const remote = await remoteOf(values, config);
  const path = `/v1/agents/${encodeURIComponent(id ?? "")}`;
  switch (sub) {
    case "register":
      return done(remote, await remoteCall(remote, "POST", "/v1/agents", body), (a) => `Registered agent ${shown(String(a.agent_id))}.`);
    case "show":
      return done(remote, await remoteCall(remote, "GET", path), (a) => JSON.stringify(a, null, 2));
    default:
      return done(remote, await remoteCall(remote, "DELETE", path), (a) => `Revoked agent ${shown(String(a.agent_id ?? id))}.`);
  }
}

/** The registration body from the identity file: its public parts only. */
function registration(values: { identity?: string; "agent-id"?: string; mandate?: string; unsigned?: boolean }) {
  if (!values.identity) throw new UsageError("--identity is required");
  const identity = readJsonObjectFile(values.identity, "identity");
  const text = (name: string) => (typeof identity[name] === "string" && identity[name] !== "" ? (identity[name] as string) : undefined);
  const agentId = values["agent-id"] ?? text("agent_id");
  if (!agentId) throw new UsageError(`--agent-id is required (${values.identity} has no "agent_id")`);
  const commitment = text("identity_commitment");
  if (!commitment) throw new UsageError(`--identity: ${values.identity} has no "identity_commitment"`);
  const signingKey = values.unsigned ? undefined : text("signing_key");
  const mandate = values.mandate === undefined ? undefined : readJsonObjectFile(values.mandate, "mandate");
  return {
    agent_id: agentId,
    identity_commitment: commitment,
    ...(signingKey ? { signing_key: signingKey } : {}),
    ...(mandate ? { mandate } : {}),
  };
}

function done(remote: Remote, answer: Record<string, unknown> | null, line: (answer: Record<string, unknown>) => string): number {
  if (answer === null) return 1;
  if (remote.json) printJson(answer);
  else say(line(answer));
  return 0;
}
