// The budgets demo's agent (demo.ts): a process of its own, on the agent SDK
// (src/agent: zkagent/agent), never on the service's or the shops' code.
//
//   bun examples/budgets/agent.ts keep --service URL --enrolment FILE --secret-file FILE --dir DIR
//       keeps the membership: the owner's enrolment answer and the member's
//       secret, the leaf recomputed and checked (membershipOf);
//   bun examples/budgets/agent.ts buy URL --body JSON --service URL --group ID --dir DIR
//       sends the order; on the shop's 401 claims the budget group, checks
//       the challenge against the request it sends, spends (spendBudget:
//       the member's own terms and budget checked first, the proof made by
//       the project's prover from the pinned artifacts, the wallet kept in
//       DIR), and sends the order again with the proof.
//
// `buy` prints one JSON line: {status, body} (the shop's last answer) and,
// when the agent refused to spend, refused: {code, message}. Exit 0 for a
// 2xx, 1 otherwise.
//
// TEST_CLOCK_FILE (with HOST=127.0.0.1, as the service takes it): the
// agent's clock is the service's test clock, so a challenge made a day
// ahead is within the agent's clock too. Tests and demos only.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { type BudgetSpendProof, membershipOf, type SpendOutcome, saveMembership, loadMembership, spendBudget } from "../../src/agent/budget";
import { BudgetSpendError } from "../../src/agent/budget/error";
import { ChallengeError, checkChallenge, outgoingRequest } from "../../src/agent/checks";
import { clockFor } from "../../src/clock";
import { loadConfig } from "../../src/config";
import { formatAuth, parseAuth, toBase64url } from "../../src/http-auth/scheme";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  allowPositionals: true,
  options: {
    service: { type: "string" },
    enrolment: { type: "string" },
    "secret-file": { type: "string" },
    dir: { type: "string" },
    body: { type: "string" },
    group: { type: "string" },
  },
});
const [command, url] = positionals;
const required = (name: keyof typeof values): string => {
  const value = values[name];
  if (typeof value !== "string") {
    process.stderr.write(`agent: --${name} is required\n`);
    process.exit(2);
  }
  return value;
};

const clock = clockFor(loadConfig());
const print = (line: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(line)}\n`);

if (command === "keep") {
  const membership = membershipOf(
    required("service"),
    JSON.parse(readFileSync(required("enrolment"), "utf8")),
    readFileSync(required("secret-file"), "utf8").trim(),
  );
  if (!saveMembership(required("dir"), membership)) {
    process.stderr.write("agent: the membership could not be written\n");
    process.exit(1);
  }
  print({ kept: membership.file.group_id, leaf_index: membership.file.leaf_index });
} else if (command === "buy" && url) {
  process.exit(await buy(url));
} else {
  process.stderr.write("usage: agent.ts keep … | agent.ts buy URL …\n");
  process.exit(2);
}

async function buy(target: string): Promise<number> {
  const service = required("service");
  const group = required("group");
  const dir = required("dir");
  const body = required("body");
  const order = JSON.parse(body) as Record<string, unknown>;
  const send = (authorization?: string) =>
    fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
      body,
    });
  const answerOf = async (response: Response) => ({ status: response.status, body: await response.json().catch(() => null) });
  const offers = (response: Response) => parseAuth(response.headers.get("www-authenticate") ?? "") ?? [];

  let last = await answerOf(await send());
  if (last.status !== 401) return done(last);
  // The shop's 401 asks for a claim; this agent pays from its budget when the shop offers the group.
  const first = await send(formatAuth({ budget: group }));
  last = await answerOf(first);
  const challenge = (last.body as { challenge?: Record<string, unknown> } | null)?.challenge;
  if (last.status !== 401 || !challenge) return done(last, offers(first).length === 0 ? null : undefined);

  const membership = loadMembership(dir, service, group);
  if (!membership) return done(last, { code: "no_membership", message: `no membership of ${group} at ${service} is kept in ${dir}` });
  try {
    // The challenge must bind exactly this request (method, origin, target, the body's fields) and this order's price.
    checkChallenge(challenge as never, outgoingRequest("POST", target, "application/json", body));
    const context = challenge.context as Record<string, unknown>;
    if (context.amount !== order.amount || context.currency !== order.currency)
      throw new ChallengeError(
        "request_mismatch",
        `the challenge charges ${context.amount} ${context.currency}, the order is ${order.amount} ${order.currency}: refused`,
        "amount",
      );
    const answered: { last?: { status: number; body: unknown } } = {};
    await spendBudget(
      {
        membership,
        challenge,
        service,
        origin: new URL(target).origin,
        action: challenge.action as string,
        context: context as never,
        now: clock.now(),
        send: async (proof: BudgetSpendProof): Promise<SpendOutcome> => {
          const credentials = formatAuth({ budget: group, challenge_id: String(challenge.challenge_id), proof: toBase64url(JSON.stringify(proof)) });
          const reply = await answerOf(await send(credentials));
          answered.last = reply;
          if (reply.status >= 200 && reply.status < 300) return "accepted";
          const reason = (reply.body as { reason?: string } | null)?.reason;
          return reason === "already_spent" ? "already_spent" : reply.status === 403 ? "refused" : "unknown";
        },
      },
      { dir, allowInsecureLoopback: true, now: () => clock.now(), checkpointPollMs: 500 },
    );
    return done(answered.last ?? last);
  } catch (error) {
    if (error instanceof BudgetSpendError || error instanceof ChallengeError) return done(last, { code: error.code, message: error.message });
    throw error;
  }
}

function done(answer: { status: number; body: unknown }, refused?: { code: string; message: string } | null): number {
  print({ status: answer.status, body: answer.body, ...(refused ? { refused } : {}) });
  return answer.status >= 200 && answer.status < 300 ? 0 : 1;
}
