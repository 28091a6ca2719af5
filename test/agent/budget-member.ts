// A member of a budgeted group as its owner's enrolment answer hands it over
// (the 201 of POST /v1/groups/{id}/enrolments, docs/api.md), built from the
// same terms as test/support/budget-spend.ts: what the agent's budget tests
// start from.
import { H1 } from "../../src/budgets/hash";
import { type BudgetTerms, budgetLeaf, packTerms } from "../../src/budgets/terms";
import { baseTerms, secret as defaultSecret } from "../support/budget-spend";

export const GROUP = "grp_budget";

/** The enrolment answer for `secret` with `terms`, as the service's enrolment route writes it. */
export function enrolmentAnswer(terms: BudgetTerms = baseTerms, secret: bigint = defaultSecret, salt = 0xfeed_beefn, leafIndex = 0) {
  const packed = packTerms(terms);
  const idc = H1(secret);
  return {
    group_id: GROUP,
    identity_commitment: idc.toString(),
    leaf: budgetLeaf(idc, packed.hash, salt).toString(),
    leaf_index: leafIndex,
    salt: salt.toString(),
    terms: {
      currency: terms.currency,
      min_amount: terms.min.toString(),
      max_amount: terms.max.toString(),
      budget: terms.budget.toString(),
      period: terms.kind === "lifetime" ? null : terms.kind,
      one_time: terms.once,
      payees: terms.payees === null ? null : [...terms.payees],
      expires_at: new Date(terms.expiresAt * 1000).toISOString(),
    },
    statement: { ta: packed.TA.toString(), tm: packed.TM.toString(), payees: packed.payees.map(String), mandate: terms.mandate.toString() },
    merkle_tree_root: "0",
    size: 1,
  };
}
