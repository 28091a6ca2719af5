// The core guard's types (types.test.ts compiles this under strict tsc): the
// session follows `accept`, onError gets a GuardProblem. Each
// `@ts-expect-error` line must stay an error.
import { type BudgetSession, type GuardProblem, type SignatureSession, type VerifiedSession, zkagentGuard } from "zkagent/merchant";

const service = { url: "https://zkagent.example.com", apiKey: "zka_x" };
const problems: GuardProblem[] = [];

const proofs = zkagentGuard({ ...service, action: "purchase", onError: (problem) => problems.push(problem) });
const spends = zkagentGuard({ ...service, action: "purchase", accept: ["budget", "zkagent"], budgets: ["household-budget"] });
const both = zkagentGuard({ ...service, action: "browse", accept: ["web-bot-auth", "zkagent", "group"], signatures: { signatureAgents: [] } });

export async function handle(request: Request): Promise<Response> {
  const proved = await proofs.verify(request);
  if (!proved.ok) return proved.response;
  const session: VerifiedSession = proved.session;
  // @ts-expect-error a proof guard never yields a signature's session
  const signed: SignatureSession = proved.session;
  const either = await both.verify(request);
  if (!either.ok) return either.response;
  // @ts-expect-error narrow on scheme first
  either.session.context;
  const reason: "service_rejected_key" | "verifier_unavailable" | "internal_error" | "body_already_read" | "no_origin" | "budget_context" | undefined =
    problems[0]?.reason;
  const spent = await spends.verify(request);
  if (!spent.ok) return spent.response;
  // @ts-expect-error narrow on scheme before reading a budget spend's amount
  spent.session.amount;
  if (spent.session.scheme === "budget") {
    const budget: BudgetSession = spent.session;
    // @ts-expect-error a budget session names no member
    const who: string = budget.pseudonym;
    return Response.json({ amount: budget.amount, currency: budget.currency, nullifier: budget.spend.nullifier, who });
  }
  return Response.json({ agent: session.agent_id, signed, reason });
}
