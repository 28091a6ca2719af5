// The core guard's types (types.test.ts compiles this under strict tsc): the
// session follows `accept`, onError gets a GuardProblem. Each
// `@ts-expect-error` line must stay an error.
import { type GuardProblem, type SignatureSession, type VerifiedSession, zkagentGuard } from "zkagent/merchant";

const service = { url: "https://zkagent.example.com", apiKey: "zka_x" };
const problems: GuardProblem[] = [];

const proofs = zkagentGuard({ ...service, action: "purchase", onError: (problem) => problems.push(problem) });
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
  const reason: "service_rejected_key" | "verifier_unavailable" | "internal_error" | "body_already_read" | "no_origin" | undefined = problems[0]?.reason;
  return Response.json({ agent: session.agent_id, signed, reason });
}
