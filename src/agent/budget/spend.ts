// A member's spend for a budget challenge (docs/protocol.md, "Budgets
// across merchants"): one Groth16 proof, made by zkagent's own prover from
// the pinned budget_spend artifacts, that reveals a nullifier and a fresh
// note commitment and nothing else about the member.
//
//   const proof = await spendBudget({ membership, challenge, service, origin: "https://shop-a.example" });
//
// Before it proves, the agent holds the challenge to what it computes itself
// (challenge.ts) and to its own terms (amount range, currency, payees,
// expiry, budget left: a spend the circuit would refuse is refused here,
// naming why). Every choice is a function of public data only, never of the
// member's leaf or note position:
//
// - the enrolment root is the group's current root as the agent's sync
//   shows it (src/agent/group/sync.ts, refusing rewritten history);
// - the notes root is the NEWEST checkpoint the agent synced, never one
//   chosen because it holds the member's note: a note not yet in it is
//   waited for (a checkpoint every few seconds), never proved from an older
//   root that dates the member's last spend.
//
// The wallet (wallet.ts) records the attempt durably before the proof
// exists, under the membership's lock: one spend per membership at a time,
// across processes.
import { chainOf } from "../../budgets/notes";
import { type SpendPublic, spendInput, spendPublicSignals } from "../../budgets/statement";
import type { SnarkjsProof } from "../../verifier/types";
import { type SyncOptions, syncGroupTree } from "../group/sync";
import { proveStatement } from "../group/proof";
import { GroupProofError } from "../group/error";
import { BUDGET_CIRCUIT_ID, type BudgetArtifactSource, type BudgetProverOptions, budgetProver } from "./artifacts";
import { type BudgetChallenge, type BudgetIntent, type CheckedBudgetChallenge, checkBudgetChallenge, parseBudgetChallenge } from "./challenge";
import { BudgetSpendError } from "./error";
import { type FeedOptions, type NotesFeed, syncNotes } from "./feed";
import { defaultBudgetDir, type Membership, membershipPaths } from "./membership";
import { Wallet, withWalletLock } from "./wallet";

/** The proof object of POST /v1/verify/proof for a budget challenge. */
export interface BudgetSpendProof {
  nullifier: string;
  commitment: string;
  enrolment_root: string;
  notes_root: string;
  groth16: SnarkjsProof;
}

/** What the service (or the merchant in front of it) answered, as the wallet needs it. */
export type SpendOutcome = "accepted" | "refused" | "already_spent" | "unknown";

export interface BudgetSpendRequest extends BudgetIntent {
  membership: Membership;
  /** The challenge (the service's answer, or a 401's), with action and context. */
  challenge: BudgetChallenge | unknown;
  /** The zkagent service's base URL: the group's trees are read there. */
  service: string;
  /**
   * Sends the proof and says what came back. Without it the proof is returned
   * as sent (its outcome resolved from the notes feed by the next spend).
   */
  send?: (proof: BudgetSpendProof) => Promise<SpendOutcome>;
}

export interface BudgetSpendOptions extends FeedOptions, BudgetProverOptions {
  /** Where memberships and wallets are kept (default defaultBudgetDir()). */
  dir?: string;
  /** The artifacts' source (directory, cache); the service is the request's. */
  artifacts?: Omit<BudgetArtifactSource, "service" | "fetch" | "allowInsecureLoopback">;
  /** Where the enrolment tree is kept (SyncOptions.treeCache). */
  treeCache?: SyncOptions["treeCache"];
  /** How long to wait for a checkpoint holding the member's last note (default 60 s). */
  checkpointWaitMs?: number;
  /** How often to read the feed while waiting (default 2 s). */
  checkpointPollMs?: number;
  /** How long to wait for another process's spend of this membership (default 120 s). */
  lockWaitMs?: number;
  /** The agent's clock, Unix ms (tests). */
  now?: () => number;
}

/** The spend's terms check: BudgetSpendError "terms" naming what the member's own terms refuse. */
function checkTerms(membership: Membership, c: CheckedBudgetChallenge, spentSoFar: bigint, opened: boolean): void {
  const t = membership.terms;
  const refuse = (what: string) => new BudgetSpendError("terms", `this member's terms refuse the spend: ${what}`);
  if (c.currency !== t.currency) throw refuse(`they are in ${t.currency}, the spend in ${c.currency}`);
  if (c.amount < t.min || c.amount > t.max) throw refuse(`${c.amount} minor units is outside the per-purchase range ${t.min}–${t.max}`);
  if (t.payees !== null && !t.payees.includes(c.payee)) throw refuse(`${c.payee} is not an allowed payee`);
  if (c.periods.minute >= BigInt(Math.floor(t.expiresAt / 60))) throw refuse(`they expired at ${new Date(t.expiresAt * 1000).toISOString()}`);
  if (t.once && opened) throw refuse("a one-time mandate pays once, and it has paid");
  if (spentSoFar + c.amount > t.budget)
    throw refuse(
      `${spentSoFar} of ${t.budget} minor units spent ${t.kind === "lifetime" ? "under this mandate" : `this ${t.kind}`}; ${c.amount} more passes the budget`,
    );
}

function expiryOf(challenge: BudgetChallenge, now: number): number {
  const lifetime = typeof challenge.expires_in === "number" && challenge.expires_in > 0 ? challenge.expires_in * 1000 : 300_000;
  const start = typeof challenge.timestamp === "number" && challenge.timestamp > 0 ? challenge.timestamp * 1000 : now;
  return Math.max(start, now) + lifetime;
}

/** The feed again until its newest checkpoint holds leaf `index`; BudgetSpendError "checkpoint" past the wait. */
async function feedHolding(index: number, feed: NotesFeed, read: () => Promise<NotesFeed>, options: BudgetSpendOptions): Promise<NotesFeed> {
  const deadline = Date.now() + (options.checkpointWaitMs ?? 60_000);
  while (feed.newest.size <= index) {
    if (Date.now() > deadline)
      throw new BudgetSpendError(
        "checkpoint",
        `no checkpoint holds this member's last note (leaf ${index}) yet: the newest holds ${feed.newest.size} notes; try again shortly`,
      );
    await new Promise((resolve) => setTimeout(resolve, options.checkpointPollMs ?? 2_000));
    feed = await read();
  }
  return feed;
}

/**
 * The spend for `challenge`: checked, proved against the current enrolment
 * root and the newest notes checkpoint, recorded in the wallet before it
 * leaves, and (with `send`) resolved from the answer and the feed.
 */
export async function spendBudget(request: BudgetSpendRequest, options: BudgetSpendOptions = {}): Promise<BudgetSpendProof> {
  const { membership, service } = request;
  const challenge = parseBudgetChallenge(request.challenge);
  if (challenge.group_id !== membership.file.group_id)
    throw new BudgetSpendError("challenge", `the challenge is for group ${challenge.group_id}, the membership is of ${membership.file.group_id}`);
  if (challenge.circuit_id !== BUDGET_CIRCUIT_ID)
    throw new BudgetSpendError("challenge", `the challenge names circuit ${challenge.circuit_id}, not the pinned ${BUDGET_CIRCUIT_ID}: refused`);
  const now = options.now ?? Date.now;
  const checked = checkBudgetChallenge(challenge, { ...request, now: request.now ?? now() });
  const terms = membership.terms;
  const chain = chainOf(checked.group, checked.currencyField, terms.kind, checked.periods, terms.mandate);
  const dir = options.dir ?? defaultBudgetDir();
  const net = { fetch: options.fetch, allowInsecureLoopback: options.allowInsecureLoopback, timeoutMs: options.timeoutMs };
  const readFeed = () => syncNotes(service, challenge.group_id, { ...net, notesCache: options.notesCache });
  const { lock } = membershipPaths(dir, service, challenge.group_id);

  return withWalletLock(
    lock,
    async () => {
      const wallet = Wallet.open(dir, membership);
      let feed = await readFeed();
      const resolved = wallet.resolve(chain, feed.indexOf, now());
      if (resolved !== "ready")
        throw new BudgetSpendError(
          "in_flight",
          `the last spend of this chain has no known outcome until ${new Date(resolved).toISOString()} (its challenge may still be decided): its note is not spent again before then`,
        );
      const record = wallet.chain(chain);
      const note = wallet.note(chain);
      checkTerms(membership, checked, note?.spent ?? 0n, note !== null);
      let notesProof = null;
      if (note) {
        const index = record.note!.index!;
        feed = await feedHolding(index, feed, readFeed, options);
        notesProof = feed.tree.pathOf(index, feed.newest.size);
      }
      const synced = await syncGroupTree(service, challenge.group_id, { ...net, treeCache: options.treeCache }).catch((error) => {
        throw error instanceof GroupProofError ? new BudgetSpendError("sync", error.message) : error;
      });
      const leafIndex = synced.tree.indexOf(membership.leaf);
      if (leafIndex < 0) throw new BudgetSpendError("not_member", `this member's leaf is not in group ${challenge.group_id}'s current tree (removed?)`);
      const pub: SpendPublic = {
        group: checked.group,
        rootEnrolment: synced.tree.root,
        rootNotes: feed.newest.root,
        periods: checked.periods,
        amount: checked.amount,
        currency: checked.currencyField,
        payee: checked.payeeField,
        ctx: checked.ctx,
      };
      const built = spendInput(pub, {
        secret: membership.secret,
        salt: membership.salt,
        terms: membership.packed,
        enrolment: synced.tree.pathOf(leafIndex),
        from: note && notesProof ? { note, proof: notesProof } : null,
        chain,
      });
      // PREPARED: on disk before the proof exists.
      const outputs = wallet.prepare(chain, { challengeId: challenge.challenge_id, amount: checked.amount, expiresAt: expiryOf(challenge, now()) });
      if (outputs.nullifier !== built.nullifier || outputs.commitment !== built.commitment)
        throw new BudgetSpendError("statement", "the wallet's and the statement's outputs differ: no proof made");
      let groth16: SnarkjsProof;
      try {
        const prover = await budgetProver({ ...options.artifacts, service, ...net }, options);
        ({ proof: groth16 } = await proveStatement(prover, built.input, spendPublicSignals(built.nullifier, built.commitment, pub)).catch((error) => {
          throw error instanceof GroupProofError ? new BudgetSpendError("statement", error.message) : error;
        }));
      } catch (error) {
        wallet.refused(chain); // no proof left the agent: the note stays
        throw error;
      }
      const proof: BudgetSpendProof = {
        nullifier: built.nullifier.toString(),
        commitment: built.commitment.toString(),
        enrolment_root: pub.rootEnrolment.toString(),
        notes_root: pub.rootNotes.toString(),
        groth16,
      };
      wallet.mark(chain, "sent");
      if (!request.send) return proof;
      const outcome = await request.send(proof).catch(() => "unknown" as const);
      // The feed decides: the service appends the note in the deciding transaction, before it answers.
      const after = await readFeed().catch(() => null);
      if (after && after.indexOf(built.commitment) !== null) {
        wallet.resolve(chain, after.indexOf, now());
        return proof;
      }
      if (outcome === "already_spent" && after) wallet.alreadySpent(chain, after.indexOf);
      else if (outcome === "refused") wallet.refused(chain);
      else wallet.mark(chain, "unknown");
      return proof;
    },
    options.lockWaitMs,
  );
}

export { parseBudgetChallenge };
