import type { Config } from "../config";
import { systemClock } from "../clock";
import { createKey, keyPrefix, keyView, usageView } from "../modules/keys/service";
import { serializeOrigin } from "../budgets/encoding";
import { openStore } from "../store";
import { nonNegativeInteger, parse, printJson, say, shown, UsageError, warn } from "./args";

export const keysHelp = `zkagent keys — manage API keys (uses DATABASE_URL, also while the server runs)

  zkagent keys create --name NAME [--rate-limit PER_MINUTE] [--agent-rate-limit PER_MINUTE] [--json]
      Creates a key and prints it once; only its hash is stored.
      --rate-limit: challenge creations per minute, 0 = unlimited (default from DEFAULT_RATE_LIMIT, 1000)
      --agent-rate-limit: agent registrations per minute, 0 = unlimited
                          (default: the server's DEFAULT_AGENT_RATE_LIMIT, 1000)
  zkagent keys list [--json]            Lists keys by id and prefix (never the key)
  zkagent keys revoke ID [--json]       Revokes at once, on every node
  zkagent keys usage ID [--json]        Challenge and verification counters
  zkagent keys set-limit ID [--rate-limit PER_MINUTE] [--agent-rate-limit PER_MINUTE|default] [--json]
      At least one of them; "default" returns the key to DEFAULT_AGENT_RATE_LIMIT.
  zkagent keys set-origins ID ORIGIN... [--json]   The origins this key's merchant is paid at
  zkagent keys set-origins ID --clear [--json]     (http(s) origins, e.g. https://shop-a.example:
      a budget spend's payee is one of them; --clear removes them all). ID: the id or zka_ prefix.`;

/** A bound only against mistakes: a merchant is paid at a few origins. */
const MAX_ORIGINS = 64;

export async function keysCommand(argv: string[], config: Config): Promise<number> {
  const { values, positionals: words } = parse(
    argv,
    {
      name: { type: "string" },
      "rate-limit": { type: "string" },
      "agent-rate-limit": { type: "string" },
      clear: { type: "boolean" },
      json: { type: "boolean" },
    },
    true,
  );
  const [sub, ...positionals] = words;
  if (values.help || !sub) {
    say(keysHelp);
    return values.help ? 0 : 2;
  }
  const store = await openStore(config.databaseUrl, { sqliteSynchronous: config.sqliteSynchronous });
  try {
    const id = positionals[0];
    const needId = () => {
      if (!id) throw new UsageError(`keys ${sub} needs the key ID`);
      return id;
    };
    switch (sub) {
      case "create": {
        if (!values.name) throw new UsageError("--name is required");
        const rateLimit = nonNegativeInteger(values["rate-limit"], "rate-limit") ?? config.defaultRateLimit;
        const agentRateLimit = nonNegativeInteger(values["agent-rate-limit"], "agent-rate-limit");
        let { record, key } = await createKey(store, systemClock, values.name, rateLimit);
        if (agentRateLimit !== undefined) {
          await store.setAgentRateLimit(record.id, agentRateLimit);
          record = (await store.getKey(record.id))!;
        }
        if (values.json) printJson({ ...keyView(record), key });
        else
          say(
            `Created key ${record.id} (${shown(values.name)}), ${rateLimit || "unlimited"} challenges/min.\n\n  ${key}\n\nStore it now: it is not shown again.`,
          );
        return 0;
      }
      case "list": {
        const keys = (await store.listKeys()).map(keyView);
        if (values.json) printJson({ keys });
        else
          for (const k of keys)
            say(
              `${k.id}  ${k.prefix}_…  ${shown(k.name)}  ${k.rate_limit_per_minute || "unlimited"}/min  ${k.revoked_at ? `revoked ${k.revoked_at}` : "active"}`,
            );
        return 0;
      }
      case "revoke": {
        const revoked = await store.revokeKey(needId(), Date.now());
        const record = await store.getKey(needId());
        if (!record) return fail(`no key ${id}`, values.json);
        if (values.json) printJson(keyView(record));
        else say(revoked ? `Revoked ${keyPrefix(record.id)}.` : `${keyPrefix(record.id)} was already revoked.`);
        return 0;
      }
      case "usage": {
        const record = await store.getKey(needId());
        if (!record) return fail(`no key ${id}`, values.json);
        const usage = usageView(record, (await store.usage(record.id))!);
        if (values.json) printJson(usage);
        else
          say(
            `${keyPrefix(record.id)} (${shown(record.name)}): ${usage.challenges} challenges, ${usage.verifications.verified} verified, ${usage.verifications.failed} failed`,
          );
        return 0;
      }
      case "set-limit": {
        const rateLimit = nonNegativeInteger(values["rate-limit"], "rate-limit");
        const agentText = values["agent-rate-limit"];
        const agentRateLimit = agentText === "default" ? null : nonNegativeInteger(agentText, "agent-rate-limit");
        if (rateLimit === undefined && agentRateLimit === undefined) throw new UsageError("--rate-limit or --agent-rate-limit is required");
        if (!(await store.getKey(needId()))) return fail(`no key ${id}`, values.json);
        if (rateLimit !== undefined) await store.setRateLimit(needId(), rateLimit);
        if (agentRateLimit !== undefined) await store.setAgentRateLimit(needId(), agentRateLimit);
        const record = (await store.getKey(needId()))!;
        if (values.json) printJson(keyView(record));
        else
          say(`${keyPrefix(record.id)}: ${record.rateLimit || "unlimited"} challenges/min, ${agentLimitText(record.agentRateLimit)} agent registrations/min.`);
        return 0;
      }
      case "set-origins": {
        const keyId = needId().replace(/^zka_/, "");
        const given = positionals.slice(1);
        if (values.clear && given.length > 0) throw new UsageError("give origins or --clear, not both");
        if (!values.clear && given.length === 0) throw new UsageError("keys set-origins needs at least one origin (or --clear)");
        const origins = originList(given);
        if (!(await store.setOrigins(keyId, origins))) return fail(`no key ${id}`, values.json);
        const record = (await store.getKey(keyId))!;
        if (values.json) printJson(keyView(record));
        else say(`${keyPrefix(record.id)}: ${origins.length === 0 ? "no registered origin" : `origins ${origins.join(", ")}`}.`);
        return 0;
      }
      default:
        throw new UsageError(`unknown keys command "${sub}"`);
    }
  } finally {
    await store.close();
  }
}

/** The origins as given, each in its RFC 6454 serialization; one that is not an http(s) origin (a path, a query) is a usage error naming it. */
function originList(given: readonly string[]): string[] {
  const origins: string[] = [];
  for (const text of given) {
    const serialized = serializeOrigin(text);
    if (!serialized.ok) throw new UsageError(`${shown(text)} ${serialized.error}, such as https://shop-a.example`);
    const url = new URL(text);
    if (url.pathname !== "/" || url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "")
      throw new UsageError(`${shown(text)} is a URL with more than an origin: give scheme, host and port only, such as ${serialized.value}`);
    if (!origins.includes(serialized.value)) origins.push(serialized.value);
  }
  if (origins.length > MAX_ORIGINS) throw new UsageError(`at most ${MAX_ORIGINS} origins per key`);
  return origins;
}

function fail(message: string, json: boolean | undefined): number {
  if (json) printJson({ error: message });
  else warn(`zkagent: ${shown(message)}`);
  return 1;
}

const agentLimitText = (limit: number | undefined) => (limit === undefined ? "default" : limit === 0 ? "unlimited" : String(limit));
