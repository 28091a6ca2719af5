// `zkagent budget join|show` and `zkagent prove --budget-challenge`: the
// member's side of budget spends (src/agent/budget/) as commands.
import { readFileSync } from "node:fs";
import { BudgetSpendError, ChallengeError, loadMembership, membershipOf, saveMembership, spendBudget } from "../agent";
import { defaultBudgetDir } from "../agent/budget/membership";
import { Wallet } from "../agent/budget/wallet";
import type { Config } from "../config";
import { isValidSecret } from "../identity/commitment";
import type { JsonObject } from "../identity/encoding";
import { parseFieldElement } from "../identity/field";
import { inCliTerms, parse, parseContext, printJson, readJsonObjectFile, say, shown, TABLE_OPTIONS, tableChoice, UsageError, warn } from "./args";
import { EXIT_UNREACHABLE, unreachable } from "./unreachable";

export const budgetHelp = `zkagent budget join --enrolment FILE --identity FILE [--service URL] [--budget-dir DIR] [--json]
zkagent budget show --group ID [--service URL] [--budget-dir DIR]
  join: keeps a membership of a budgeted group: the JSON the group's owner
  received from POST /v1/groups/{id}/enrolments (leaf, leaf_index, salt,
  terms, statement) and the member's identity (the JSON of zkagent identity
  new --json, or a bare secret), whose identity_commitment the owner
  enrolled. The leaf is recomputed, H3(H1(secret), H4(ta, tm, H8(payees),
  mandate), salt), and the terms in words held to the statement: anything
  else is refused (exit 1). Kept 0600 in --budget-dir (default
  $XDG_CACHE_HOME/zkagent/budgets, else ~/.cache/zkagent/budgets), one file
  per service and group, beside the wallet that records its spends.
  show: the membership's terms and its wallet (notes spent so far per
  period, spends in flight), never the secret.
  --service: the zkagent service the group lives on (default
  http://localhost:$PORT).`;

export const proveBudgetHelp = `zkagent prove --budget-challenge FILE --origin URL [--action NAME] [--context JSON] [--service URL [--allow-insecure-loopback]] [--budget-dir DIR] [--checkpoint-wait SECONDS] [--table-cache DIR | --no-table-cache] [--threads N]
  Proves a budget spend for a challenge made for a budgeted group (its JSON
  as the service returned it, or the "challenge" member of a ZKAgent 401)
  with the membership zkagent budget join kept for --service and the
  challenge's group. Prints the proof object to submit as "proof".
  Before proving it recomputes what the challenge says: the payee from
  --origin (the merchant paid), amount and currency from the context, ctx
  from the nonce, action and context, the periods from its own clock (±1);
  and holds the spend to the member's terms (range, currency, payees,
  expiry, budget left). A spend is recorded in the wallet before the proof
  is printed; its outcome is read from the group's notes feed by the next
  spend (a spend whose answer never came is settled after its challenge
  expired), so two spends of one period follow each other only once the
  first's note is in a checkpoint (--checkpoint-wait, default 60 s).`;

function secretOf(text: string): string {
  const trimmed = text.trim();
  let secret = trimmed;
  if (trimmed.startsWith("{")) {
    const value = JSON.parse(trimmed) as { secret?: unknown };
    if (typeof value.secret !== "string") throw new UsageError('--identity: the JSON has no "secret" (zkagent identity new --json writes it)');
    secret = value.secret;
  }
  const parsed = parseFieldElement(secret);
  if (parsed === null || !isValidSecret(parsed)) throw new UsageError("--identity: no valid secret (a decimal field element in [1, r))");
  return secret;
}

export async function budgetCommand(argv: string[], config: Config): Promise<number> {
  const [sub, ...rest] = argv;
  const { values } = parse(rest, {
    enrolment: { type: "string" },
    identity: { type: "string" },
    service: { type: "string" },
    group: { type: "string" },
    "budget-dir": { type: "string" },
    json: { type: "boolean" },
  });
  if (values.help || sub === undefined || sub === "--help") return (say(budgetHelp), sub === undefined ? 2 : 0);
  const service = values.service ?? `http://localhost:${config.port}`;
  const dir = values["budget-dir"] ?? defaultBudgetDir();
  try {
    if (sub === "join") {
      if (!values.enrolment || !values.identity) throw new UsageError("--enrolment and --identity are required");
      const enrolment = readJsonObjectFile(values.enrolment, "enrolment");
      let identityText: string;
      try {
        identityText = readFileSync(values.identity, "utf8");
      } catch (error) {
        throw new UsageError(`--identity: cannot read ${values.identity} (${(error as NodeJS.ErrnoException).code})`);
      }
      const membership = membershipOf(service, enrolment, secretOf(identityText));
      if (!saveMembership(dir, membership)) throw new UsageError(`--budget-dir: cannot write ${dir}`);
      const { secret: _, salt: __, ...shownFile } = membership.file;
      if (values.json) printJson({ ...shownFile, dir });
      else
        say(
          `kept the membership of ${shown(membership.file.group_id)} at ${shown(membership.file.service)} (leaf ${membership.file.leaf_index}) in ${shown(dir)}`,
        );
      return 0;
    }
    if (sub === "show") {
      if (!values.group) throw new UsageError("--group is required");
      const membership = loadMembership(dir, service, values.group);
      if (!membership) throw new BudgetSpendError("no_membership", `no membership of ${values.group} at ${service} is kept in ${dir}`);
      const wallet = Wallet.open(dir, membership);
      const { secret: _, salt: __, ...shownFile } = membership.file;
      printJson({ ...shownFile, wallet: { stopped: wallet.stopped, chains: wallet.chains() } });
      return 0;
    }
    throw new UsageError(`unknown subcommand "${sub}" (join, show)`);
  } catch (error) {
    if (!(error instanceof BudgetSpendError)) throw error;
    warn(`zkagent: ${shown(error.message)}`);
    return 1;
  }
}

export async function proveBudgetCommand(argv: string[], config: Config): Promise<number> {
  const { values } = parse(argv, {
    "budget-challenge": { type: "string" },
    origin: { type: "string" },
    action: { type: "string" },
    context: { type: "string" },
    service: { type: "string" },
    "allow-insecure-loopback": { type: "boolean" },
    "budget-dir": { type: "string" },
    "checkpoint-wait": { type: "string" },
    json: { type: "boolean" },
    ...TABLE_OPTIONS,
  });
  if (values.help) return (say(proveBudgetHelp), 0);
  if (!values["budget-challenge"]) throw new UsageError("--budget-challenge is required");
  if (!values.origin || !/^https?:\/\/[^/]/.test(values.origin)) throw new UsageError("--origin: the http(s) origin the payment is for is required");
  const challenge = readJsonObjectFile(values["budget-challenge"], "budget-challenge");
  const service = values.service ?? `http://localhost:${config.port}`;
  const dir = values["budget-dir"] ?? defaultBudgetDir();
  let checkpointWaitMs: number | undefined;
  if (values["checkpoint-wait"] !== undefined) {
    if (!/^[0-9]{1,5}$/.test(values["checkpoint-wait"])) throw new UsageError("--checkpoint-wait must be a whole number of seconds");
    checkpointWaitMs = Number(values["checkpoint-wait"]) * 1000;
  }
  try {
    const groupId = typeof challenge.group_id === "string" ? challenge.group_id : "";
    const membership = loadMembership(dir, service, groupId);
    if (!membership)
      throw new BudgetSpendError("no_membership", `no membership of ${groupId || "(no group_id)"} at ${service} is kept in ${dir} (zkagent budget join)`);
    const proof = await spendBudget(
      {
        membership,
        challenge,
        service,
        origin: values.origin,
        action: values.action,
        context: parseContext(values.context) as JsonObject | undefined,
      },
      {
        dir,
        allowInsecureLoopback: values.service === undefined || values["allow-insecure-loopback"] === true,
        checkpointWaitMs,
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
    const down = unreachable(error);
    if (down) {
      warn(`zkagent: ${shown(down.message)}`);
      return EXIT_UNREACHABLE;
    }
    if (!(error instanceof BudgetSpendError)) throw error;
    warn(`zkagent: refused to spend (${error.code}): ${shown(inCliTerms(error.message))}`);
    return 1;
  }
}
