// An agent claim (`Authorization: ZKAgent agent="…"`): a registered agent
// proves it is that agent and means this request. The session's scheme is
// `zkagent`.
import { requestMismatch, verifierUnavailable } from "../respond";
import type { ClaimKind } from "./types";

export function agentClaim(): ClaimKind {
  return {
    scheme: "zkagent",
    param: "agent",
    field: "agent_id",
    // Whether the agent is registered (and not revoked) is the service's to say.
    admit: () => null,
    owns: (status) => status.group_id === undefined,
    checkStatus(status, claimed) {
      if (claimed !== undefined && status.agent_id !== claimed) return requestMismatch("the challenge was issued for another agent");
      return null;
    },
    session(verified, status, proved) {
      // The service verified the challenge's agent; an answer naming another, or a group, is not one the guard understands.
      if (verified.group_id !== undefined || verified.agent_id !== status.agent_id) return verifierUnavailable();
      return { ok: true, session: { scheme: "zkagent", ...proved } };
    },
  };
}
