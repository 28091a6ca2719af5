// Budget spends, the agent's side (docs/protocol.md, "Budgets across
// merchants"): a membership of a budgeted group (membership.ts), the group's
// notes feed (feed.ts), the wallet that keeps the member's notes and
// recovers a lost answer (wallet.ts), what the agent checks of a challenge
// (challenge.ts), the pinned artifacts (artifacts.ts) and the spend (spend.ts).
// Each file's header says what it hides and reveals.
export { BUDGET_CIRCUIT_ID, BUDGET_PINS, type BudgetArtifactSource, loadBudgetArtifacts } from "./artifacts";
export { type BudgetChallenge, type BudgetIntent, checkBudgetChallenge, parseBudgetChallenge } from "./challenge";
export { BudgetSpendError, type BudgetSpendErrorCode } from "./error";
export { type Checkpoint, type FeedOptions, type NotesFeed, syncNotes } from "./feed";
export {
  defaultBudgetDir,
  type EnrolmentTerms,
  loadMembership,
  type Membership,
  type MembershipFile,
  membershipOf,
  saveMembership,
} from "./membership";
export { type BudgetSpendOptions, type BudgetSpendProof, type BudgetSpendRequest, type SpendOutcome, spendBudget } from "./spend";
export { RESOLVE_MARGIN_MS, Wallet, withWalletLock } from "./wallet";
