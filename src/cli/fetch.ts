import {
  type AgentFetchOptions,
  BudgetSpendError,
  ChallengeError,
  CircuitSourceError,
  type FetchIdentity,
  GroupProofError,
  SemaphoreArtifactError,
  zkagentFetch,
} from "../agent";
import { parseMaxAmount } from "../agent/checks";
import { clockFor } from "../clock";
import type { Config } from "../config";
import { parseAuth } from "../http-auth/scheme";
import { isValidSecret } from "../identity/commitment";
import { parseFieldElement } from "../identity/field";
import {
  GROUP_OPTIONS,
  groupChoice,
  groupOptionsHelp,
  inCliTerms,
  parse,
  shown,
  TABLE_OPTIONS,
  tableChoice,
  tableOptionsHelp,
  UsageError,
  warn,
  writeStdout,
  readStdin,
  readJsonObjectFile,
} from "./args";
import { EXIT_UNREACHABLE, unreachable } from "./unreachable";

export const agentOptionsHelp = `  --action NAME
               the action the agent means (e.g. purchase): a challenge for
               another action is refused
  --max-amount AMOUNT --currency C
               refuse a challenge whose context amount is above AMOUNT
               (exact decimal), whose currency is not C, or that names a
               currency but no amount; a challenge binding neither amount
               nor currency (a catalog) binds no payment and is answered
  --timeout SECONDS
               how long each request (to the merchant, and to the zkagent
               service for circuits and members) may take; default 30`;

export const fetchHelp = `zkagent fetch URL [-X METHOD] [-H 'Name: value']... [-d BODY] (--identity FILE | --budget GROUP [--budget-dir DIR]) [--action NAME] [--max-amount AMOUNT --currency C] [--timeout SECONDS] [--trust URL]... [--allow-insecure-loopback] [--announce] [--unsigned] [--min-anonymity N] [--signature-agent ORIGIN] [--table-cache DIR | --no-table-cache] [--threads N]
  A curl for agents: sends the request and answers a ZKAgent challenge
  (docs/http-auth.md) by itself: claims the identity's agent_id, proves for
  the challenge's nonce, action and exact context, signs it, repeats once.
  It proves only a challenge that binds exactly this request (method,
  origin, target, the body's fields; a group challenge's message recomputed)
  and that passes the limits below; otherwise it proves and sends nothing
  and exits 1 saying which field differed.
  The response body goes to standard output; exit 0 for a 2xx answer, else 1
  with the status on standard error; exit 3 when a URL cannot be reached
  (refused, unknown host, no answer in time), naming it.
  --budget GROUP
               spend from budgeted group GROUP (instead of --identity): the
               membership \`zkagent budget join\` kept for the --trust service
               and GROUP proves, its wallet records the spend before it
               leaves (--budget-dir DIR: where they are kept; default
               $XDG_CACHE_HOME/zkagent/budgets)
  --identity   the JSON that \`zkagent identity new --json\` prints, with an
               "agent_id" member added (the id the merchant registered); or,
               for private verification, what \`zkagent identity new
               --semaphore --json\` prints with "group_id" added (the
               members are then read from the --trust service)
  -d BODY      the body (- = standard input); Content-Type defaults to
               application/json when a body is given
  --trust URL  a zkagent service whose circuits may be downloaded when a
               challenge names a circuit other than the built-in one, and
               whose group members a group claim reads (https; http to this
               machine only with --allow-insecure-loopback)
  --announce   claim the agent on the first request (one round trip fewer;
               every URL then learns the agent id)
  --unsigned   do not sign (the agent registered no signing_key)
  --signature-agent ORIGIN
               also sign every request sent (Web Bot Auth, RFC 9421) with the
               identity's Ed25519 key, naming ORIGIN, the operator whose key
               directory lists it (\`zkagent directory\`); a signature the
               server refuses is said on standard error, with the proof the
               agent answers with instead
  -v, --verbose
               one line on standard error per request sent and answer
               received (the claim or challenge answered, never a secret)
${agentOptionsHelp}
${groupOptionsHelp}
${tableOptionsHelp}`;

/** The options of `zkagent fetch` and `zkagent mcp` that say what the agent agrees to prove, and how long it waits. */
export const AGENT_OPTIONS = {
  action: { type: "string" },
  "max-amount": { type: "string" },
  currency: { type: "string" },
  timeout: { type: "string" },
} as const;

/** AGENT_OPTIONS as zkagentFetch options; UsageError naming the flag when one is malformed. */
export function agentChoice(values: {
  action?: string;
  "max-amount"?: string;
  currency?: string;
  timeout?: string;
}): Pick<AgentFetchOptions, "action" | "maxAmount" | "timeoutMs"> {
  const choice: Pick<AgentFetchOptions, "action" | "maxAmount" | "timeoutMs"> = {};
  if (values.action !== undefined) {
    if (values.action === "") throw new UsageError("--action must not be empty");
    choice.action = values.action;
  }
  if ((values["max-amount"] === undefined) !== (values.currency === undefined))
    throw new UsageError("--max-amount and --currency go together: an amount means nothing without its currency");
  if (values["max-amount"] !== undefined && values.currency !== undefined) {
    const maxAmount = { amount: values["max-amount"], currency: values.currency };
    try {
      parseMaxAmount(maxAmount);
    } catch (error) {
      throw new UsageError(`--max-amount/--currency: ${(error as Error).message.replace(/^maxAmount\.(amount|currency)/, "the $1")}`);
    }
    choice.maxAmount = maxAmount;
  }
  if (values.timeout !== undefined) {
    const seconds = Number(values.timeout);
    if (!/^[0-9]+(\.[0-9]+)?$/.test(values.timeout) || !(seconds > 0) || seconds > 86_400)
      throw new UsageError("--timeout must be a number of seconds above 0 (at most 86400)");
    choice.timeoutMs = seconds * 1000;
  }
  return choice;
}

/** The identity file: secrets are read here and never printed, even in an error. */
export function readIdentityFile(path: string): FetchIdentity {
  const identity = readJsonObjectFile(path, "identity");
  const text = (name: string) => (typeof identity[name] === "string" && identity[name] !== "" ? (identity[name] as string) : undefined);
  const agent_id = text("agent_id");
  const group_id = text("group_id");
  const secret = text("secret");
  const private_key = text("private_key");
  const budget_group = text("budget_group");
  // A budget claim's secret is in the membership zkagent budget join kept, not in this file.
  if (!agent_id && !group_id && budget_group) return { budget_group };
  if (!agent_id && !group_id) throw new UsageError(`--identity: ${path} has no "agent_id" (add the id the merchant registered)`);
  const common = { agent_id, group_id, identity_commitment: text("identity_commitment") };
  // A group claim (private verification) proves with a Semaphore identity, an agent claim with the agent's secret.
  if (!agent_id) {
    if (private_key === undefined) throw new UsageError(`--identity: ${path} has "group_id" but no Semaphore "private_key"`);
    return { ...common, private_key };
  }
  const parsed = secret === undefined ? null : parseFieldElement(secret);
  if (parsed === null || !isValidSecret(parsed)) throw new UsageError(`--identity: ${path} has no valid "secret"`);
  return { ...common, secret: secret!, signing_key: text("signing_key"), signing_secret: text("signing_secret") };
}

/** `--signature-agent ORIGIN`: an http(s) origin, and an identity that can sign. */
export function signatureAgentOption(value: string | undefined, identity: FetchIdentity): { signatureAgent?: string } {
  if (value === undefined) return {};
  const url = httpUrl(value);
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "")
    throw new UsageError(`--signature-agent must be an origin (https://host[:port]), not ${value}`);
  if (!identity.signing_key || !identity.signing_secret)
    throw new UsageError("--signature-agent: the identity has no signing_key and signing_secret to sign with");
  return { signatureAgent: url.origin };
}

/** http(s) only: a confused caller must not make the agent read file: or data: URLs. */
export function httpUrl(text: string): URL {
  if (!URL.canParse(text)) throw new UsageError(`not a URL: ${text}`);
  const url = new URL(text);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`only http and https URLs are fetched, not ${url.protocol}`);
  return url;
}

/** The test clock's readings (TEST_CLOCK_FILE: tests and demos only, config.ts refuses it elsewhere). */
function testClock(config: Pick<Config, "testClockFile">): () => number {
  const clock = clockFor(config);
  return () => clock.now();
}

export async function fetchCommand(argv: string[], config?: Pick<Config, "testClockFile">): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      request: { type: "string", short: "X" },
      header: { type: "string", short: "H", multiple: true },
      data: { type: "string", short: "d" },
      identity: { type: "string" },
      budget: { type: "string" },
      "budget-dir": { type: "string" },
      trust: { type: "string", multiple: true },
      "allow-insecure-loopback": { type: "boolean" },
      "cache-dir": { type: "string" },
      announce: { type: "boolean" },
      unsigned: { type: "boolean" },
      "signature-agent": { type: "string" },
      verbose: { type: "boolean", short: "v" },
      ...AGENT_OPTIONS,
      ...GROUP_OPTIONS,
      ...TABLE_OPTIONS,
    },
    true,
  );
  if (values.help) return (process.stdout.write(`${fetchHelp}\n`), 0);
  if (positionals.length !== 1) throw new UsageError("fetch needs exactly one URL");
  const url = httpUrl(positionals[0]!);
  if ((values.identity === undefined) === (values.budget === undefined)) throw new UsageError("one of --identity and --budget is required");
  const identity: FetchIdentity = values.identity ? readIdentityFile(values.identity) : { budget_group: values.budget };
  const headers = new Headers();
  for (const line of values.header ?? []) {
    const colon = line.indexOf(":");
    if (colon <= 0) throw new UsageError(`-H must be 'Name: value', not ${line}`);
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      throw new UsageError(`-H: not a valid header: ${line}`);
    }
  }
  const body = values.data === undefined ? undefined : values.data === "-" ? await readStdin() : values.data;
  if (body !== undefined && !headers.has("content-type")) headers.set("content-type", "application/json");
  const method = values.request ?? (body === undefined ? "GET" : "POST");
  for (const service of values.trust ?? []) httpUrl(service);
  const send = zkagentFetch({
    ...signatureAgentOption(values["signature-agent"], identity),
    identity,
    trustedServices: values.trust,
    allowInsecureLoopback: values["allow-insecure-loopback"] === true,
    cacheDir: values["cache-dir"],
    announce: values.announce,
    sign: !values.unsigned,
    ...agentChoice(values),
    ...groupChoice(values),
    ...tableChoice(values),
    fetch: observed(values.verbose === true),
    budget: {
      ...(values["budget-dir"] === undefined ? {} : { dir: values["budget-dir"] }),
      // TEST_CLOCK_FILE (tests and demos): the spend's periods are checked against the service's test clock.
      ...(config?.testClockFile ? { now: testClock(config) } : {}),
    },
    onProof: values.verbose ? (challenge) => warn(`zkagent: proved challenge ${shown(challenge.challenge_id)} (action ${shown(challenge.action)})`) : undefined,
  });
  let response: Response;
  let bytes: Uint8Array;
  try {
    response = await send(url, { method, headers, body });
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    // Out of reach (refused, unknown host, no answer in time): the URL, exit 3.
    if (error instanceof ChallengeError && error.code === "timeout") {
      warn(`zkagent: ${shown(error.message)}`);
      return EXIT_UNREACHABLE;
    }
    const down = unreachable(error, url.href);
    if (down) {
      warn(`zkagent: ${shown(down.message)}`);
      return EXIT_UNREACHABLE;
    }
    const problem = refusal(error, url);
    if (problem === null) throw error;
    warn(problem);
    return 1;
  }
  await writeStdout(bytes);
  if (response.ok) return 0;
  warn(`zkagent: HTTP ${response.status}${explained(refusalBody(bytes))}`);
  return 1;
}

/** The `{error, reason, message, detail}` a guard or the service answers with, when the body is such JSON. */
interface RefusalBody {
  error?: string;
  reason?: string;
  message?: string;
  detail?: string;
}

function refusalBody(bytes: Uint8Array): RefusalBody | null {
  if (bytes.byteLength > 64 * 1024) return null;
  try {
    const body = JSON.parse(new TextDecoder().decode(bytes));
    if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
    const text = (name: string) => (typeof body[name] === "string" && body[name] !== "" ? (body[name] as string) : undefined);
    return { error: text("error"), reason: text("reason"), message: text("message"), detail: text("detail") };
  } catch {
    return null;
  }
}

/** ": <error> (<reason>, detail <detail>): <message>" from what the server said, each part only when it said it. */
function explained(body: RefusalBody | null): string {
  if (body === null) return "";
  const codes = [body.reason, body.detail && `detail ${body.detail}`].filter(Boolean).join(", ");
  const said = `${body.error ? `: ${body.error}` : ""}${codes ? ` (${codes})` : ""}`;
  return shown(`${said}${body.message ? `: ${body.message}` : ""}`);
}

/** A refusal's JSON body from a copy of the response, read no further than 64 KiB (a 401 of any size must not be buffered whole). */
async function headOf(copy: Response): Promise<RefusalBody | null> {
  const reader = copy.body?.getReader();
  if (!reader) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size > 64 * 1024) return null;
    }
  } catch {
    return null;
  } finally {
    reader.cancel().catch(() => {});
  }
  return refusalBody(Buffer.concat(chunks));
}

/** What an Authorization or WWW-Authenticate value says, without its proof or signature bytes. */
function authSummary(header: string | null): string {
  if (header === null) return "";
  const params = parseAuth(header)?.[0];
  if (!params) return "";
  const named = ["agent", "group", "budget", "realm", "challenge_id", "action"].filter((name) => params[name] !== undefined);
  const proof = params.proof === undefined ? "" : ", with a proof";
  return ` ZKAgent ${named.map((name) => `${name}=${shown(params[name]!)}`).join(" ")}${proof}`;
}

/**
 * The fetch under zkagentFetch, as `zkagent fetch` uses it: with --verbose a
 * line per request and answer; always, the line saying that a signed request
 * was refused (the agent then answers with a proof when the route offers one,
 * so without it the fallback would go unseen).
 */
function observed(verbose: boolean): (request: Request) => Promise<Response> {
  let told = false;
  return async (request) => {
    const signed = request.headers.has("signature");
    if (verbose) warn(`zkagent: > ${request.method} ${shown(request.url)}${signed ? " (signed)" : ""}${authSummary(request.headers.get("authorization"))}`);
    const response = await fetch(request);
    const refused = (signed && response.status === 401) || (verbose && !response.ok) ? await headOf(response.clone()) : null;
    if (verbose) {
      const challenge = authSummary(response.headers.get("www-authenticate"));
      warn(`zkagent: < ${response.status}${challenge ? ` WWW-Authenticate:${challenge}` : ""}${response.ok ? "" : explained(refused)}`);
    }
    if (refused?.error === "Signature refused" && !told) {
      told = true;
      const offered = authSummary(response.headers.get("www-authenticate")) !== "";
      warn(
        `zkagent: the signature was refused${explained({ reason: refused.reason, message: refused.message })}; ${offered ? "answering with a ZKAgent proof instead" : "the server offers no proof instead"}`,
      );
    }
    return response;
  };
}

/**
 * The line `zkagent fetch` and `zkagent mcp` report for an error of the
 * exchange (a refused challenge, a timeout, a circuit or member list that
 * cannot be had, a network error), or null for an error of the program.
 */
export function refusal(error: unknown, url: URL): string | null {
  if (error instanceof ChallengeError) {
    if (error.code === "timeout") return `zkagent: ${shown(error.message)}`;
    const where = error.field === undefined ? error.code : `${error.code}, field ${error.field}`;
    return `zkagent: refused to prove (${shown(where)}): ${shown(error.message)}`;
  }
  if (error instanceof CircuitSourceError || error instanceof GroupProofError || error instanceof SemaphoreArtifactError)
    return `zkagent: cannot answer the challenge: ${shown(inCliTerms(error.message))}`;
  if (error instanceof BudgetSpendError) return `zkagent: refused to spend (${error.code}): ${shown(inCliTerms(error.message))}`;
  // The response body is read under the request's timeout too.
  if (error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError"))
    return `zkagent: ${url.href}: the answer did not arrive in time`;
  if (error instanceof TypeError) return `zkagent: ${url.href}: ${shown(error.message)}`;
  return null;
}
