// Whom a session is about (issue 34, "one rule names a session's subject"):
// a domain rule, apart from the challenge module, because the receipts'
// claims and the webhook events use it as well as the API answers, and the
// agent's package carries the receipts' verifier but none of the service.

/** What the rule reads of a challenge (a stored ChallengeRecord is one): its agent, its group, the pseudonym its decision found. */
export interface SubjectOf {
  agentId: string;
  groupId?: string | null;
  /** Set for a budget spend's challenge (issue 40): its subject is the spend, never a member. */
  budget?: unknown;
  evidence?: { group?: { pseudonym: string | null } | null; spend?: SpendSubject | null } | null;
}

/** A verified budget spend as answers name it: the one-time nullifier, the new note, what was paid and to whom. */
export interface SpendSubject {
  nullifier: string;
  commitment: string;
  amount: string;
  currency: string;
  payee: string;
}

/** Whom a session is about, as every answer, receipt and webhook event names it. */
export type SessionSubject =
  | { agent_id: string }
  | {
      /** The pseudonym, or "" while no proof gave one: clients written for agent sessions keep reading a string. */
      agent_id: string;
      group_id: string;
      /** The proof's nullifier (this member at this platform); null until a proof was read that far. */
      pseudonym: string | null;
    }
  | {
      /** The spend's one-time nullifier, or "" before a spend verified: never a member, a leaf or a pseudonym. */
      agent_id: string;
      group_id: string;
      /** The verified spend; null until one verified. */
      spend: SpendSubject | null;
    };

/**
 * The one rule that names a session's subject: an agent session's agent id;
 * for a group session the group and the member's pseudonym, never its
 * commitment (the proof answer, the status, the receipt's `sub` and the
 * webhook events all take it from here).
 */
export function sessionSubject(challenge: SubjectOf): SessionSubject {
  if (!challenge.groupId) return { agent_id: challenge.agentId };
  if (challenge.budget) {
    const spend = challenge.evidence?.spend ?? null;
    return { agent_id: spend?.nullifier ?? "", group_id: challenge.groupId, spend };
  }
  const pseudonym = challenge.evidence?.group?.pseudonym ?? null;
  return { agent_id: pseudonym ?? "", group_id: challenge.groupId, pseudonym };
}
