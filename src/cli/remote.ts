// The commands that act through a running service's HTTP API with an API key
// (`agents`, `groups`): what they register belongs to that key, exactly as
// if the platform had called the API itself (the same validation, limits,
// ownership and audit trail). Exit 0 done, 1 the service refused (its answer
// shown), 2 usage, 3 the service out of reach.
import type { Config } from "../config";
import { printJson, secretOption, shown, UsageError, warn } from "./args";
import { reach } from "./unreachable";

export const REMOTE_OPTIONS = {
  url: { type: "string" },
  key: { type: "string" },
  "key-file": { type: "string" },
  json: { type: "boolean" },
} as const;

export const remoteHelp = `  --url URL          the zkagent service (default http://localhost:$PORT)
  --key-file PATH    the API key (- = standard input); default $ZKAGENT_API_KEY.
                     What is registered belongs to that key: register agents
                     and groups under the key the merchant's guard uses.
  --key KEY          the same inline (it then shows in process listings)
  --json             print the service's answer as one JSON object`;

export interface Remote {
  url: string;
  key: string;
  json: boolean;
}

export async function remoteOf(values: Record<string, unknown>, config: Config): Promise<Remote> {
  const url = typeof values.url === "string" ? values.url : `http://localhost:${config.port}`;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new UsageError(`--url must be an http(s) URL, not ${url}`);
  const fromEnvironment = process.env.ZKAGENT_API_KEY;
  const key =
    values.key === undefined && values["key-file"] === undefined && fromEnvironment
      ? fromEnvironment
      : await secretOption(values, "key").catch((error: Error) => {
          throw new UsageError(`${error.message} (or set ZKAGENT_API_KEY)`);
        });
  return { url: url.replace(/\/$/, ""), key, json: values.json === true };
}

/**
 * One call with the key: the answer's JSON on success; on a refusal, prints
 * the status and the service's error (or, with --json, {status, ...answer})
 * and returns null.
 */
export async function remoteCall(remote: Remote, method: string, path: string, body?: unknown): Promise<Record<string, unknown> | null> {
  const target = remote.url + path;
  const response = await reach(target, {
    method,
    headers: { "x-api-key": remote.key, accept: "application/json", ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    redirect: "error",
  });
  const text = await response.text();
  let answer: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) answer = parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's error page): the status alone is shown.
  }
  if (response.ok) return answer;
  if (remote.json) printJson({ status: response.status, ...answer });
  else warn(`zkagent: ${method} ${shown(target)}: HTTP ${response.status}${typeof answer.error === "string" ? ` ${shown(answer.error)}` : ""}`);
  return null;
}
