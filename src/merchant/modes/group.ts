// A group claim (`Authorization: ZKAgent group="…"`): an anonymous member of
// a group proves it means this request; the service names it by a
// pseudonym. Any key can create a group and enrol its own identities, so a
// member proves only what the group's owner vouched for: the guard admits
// the groups the merchant listed (`groups`) and nothing else, and checks
// the group again at each step: the claim before a challenge is created,
// the challenge's group before the proof is spent, the answer's after. The
// session's scheme is `group`.
import { groupNotAccepted, requestMismatch, verifierUnavailable } from "../respond";
import { isBudgetStatus } from "./budget";
import type { ClaimKind } from "./types";

export function groupClaim(groups: readonly string[]): ClaimKind {
  const accepted = new Set(groups);
  return {
    scheme: "group",
    param: "group",
    field: "group_id",
    admit: (claimed) => (accepted.has(claimed) ? null : groupNotAccepted(claimed)),
    // A budgeted group's member spends (budget.ts): its challenge is not a group claim's.
    checkChallenge: (created, claimed) =>
      created.budget === undefined ? null : `group "${claimed}" is a budgeted group at the service: list it in budgets (and accept "budget"), not groups`,
    owns: (status) => status.group_id !== undefined && !isBudgetStatus(status),
    checkStatus(status, claimed) {
      const group = status.group_id;
      if (typeof group !== "string") return verifierUnavailable();
      if (claimed !== undefined && group !== claimed) return requestMismatch("the challenge was issued for another group");
      // Credentials that name no claim present a challenge of whichever group it was made for.
      if (!accepted.has(group)) return groupNotAccepted(group);
      return null;
    },
    session(verified, status, proved) {
      const group = verified.group_id;
      if (typeof group !== "string" || typeof verified.pseudonym !== "string") return verifierUnavailable();
      if (!accepted.has(group)) return groupNotAccepted(group);
      // The service verified the challenge's group; an answer naming another is not one the guard understands.
      if (group !== status.group_id) return verifierUnavailable();
      return { ok: true, session: { scheme: "group", ...proved, pseudonym: verified.pseudonym, group_id: group } };
    },
  };
}
