// The member's notes on disk, one record per chain (docs/protocol.md,
// "Agent recovery"), and the state machine that keeps a note from being
// lost or spent twice as new:
//
//   READY ──prepare──▶ PREPARED ──sent──▶ SENT ──▶ CONFIRMED (cm_new in the feed: the next note is READY)
//     ▲   (record written and fsynced                 ├──▶ REFUSED (the service said no: the note stays READY)
//     │    before the proof leaves)                   └──▶ UNKNOWN (no answer)
//     └──────────── RESOLVE: cm_new in the notes feed → CONFIRMED; absent after expires_at + margin → READY
//
// A spend's nullifier is a function of the note alone (H3(4, s, ρ), or
// H3(3, s, χ) for the chain's first spend), so whatever happens, one note
// never shows a second nullifier; what must not be lost is which new note a
// spend made. Every attempt's commitment is kept until one is found in the
// feed or the chain moves on, so a refusal the agent was told falsely (a
// merchant saying "no" to a spend the service accepted) is found again when
// the next attempt meets already_spent. already_spent with none of them in
// the feed means someone else holds the secret: the wallet stops.
//
// One spend per chain is in flight at a time: a new one is refused while an
// attempt is unresolved (its challenge might still be decided), and across
// processes the lock file serialises whole spends (withWalletLock).
//
// What it hides: the notes' openings and the secret's work, from everyone but
// the machine's user (0700 directory, 0600 files). What it reveals to whoever
// reads the directory: the member's spends (amounts, challenges, times).
import { closeSync, constants, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { dirname } from "node:path";
import { readCacheFile } from "../../cache-file";
import { type Note, nextRho, type SpendOutputs, spendOutputs } from "../../budgets/notes";
import { BudgetSpendError } from "./error";
import { type Membership, membershipPaths } from "./membership";

const FORMAT = "zkagent-budget-wallet/1";
const MAX_FILE_BYTES = 4 << 20;
/** After a challenge's expiry, how long before no transaction can decide it any more (default 60 s). */
export const RESOLVE_MARGIN_MS = 60_000;

export type AttemptState = "prepared" | "sent" | "unknown" | "refused";

/** One attempt to spend a chain's note: what it would reveal and leave. */
export interface Attempt {
  state: AttemptState;
  challenge_id: string;
  nullifier: string;
  commitment: string;
  amount: string;
  /** The new note's running total. */
  spent_after: string;
  /** The challenge's expiry, Unix ms: after it (and the margin) it can no longer be decided. */
  expires_at: number;
}

export interface WalletNote {
  spent: string;
  rho: string;
  commitment: string;
  /** Its leaf index in the notes tree, once seen in the feed. */
  index: number | null;
}

export interface ChainRecord {
  /** The chain's open note; null before its first spend. */
  note: WalletNote | null;
  /** The attempt in flight (at most one). */
  pending: Attempt | null;
  /** Earlier attempts from this note that were refused or expired unanswered: looked for in the feed on already_spent. */
  attempts: Attempt[];
}

interface WalletData {
  format: typeof FORMAT;
  service: string;
  group_id: string;
  identity_commitment: string;
  chains: Record<string, ChainRecord>;
  /** Why the wallet stopped (someone else spent its note), or null. */
  stopped: string | null;
}

/** Where a commitment lies in the notes feed (its leaf index), or null when it is not there. */
export type NoteLookup = (commitment: bigint) => number | null;

/** Writes `text` as `path` durably: a file of its own, fsynced, renamed into place, the directory fsynced. */
function writeDurably(path: string, text: string): void {
  const dir = dirname(path);
  const tmp = `${path}.${randomUUID()}.tmp`;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    const bytes = new TextEncoder().encode(text);
    let at = 0;
    while (at < bytes.length) at += writeSync(fd, bytes, at, bytes.length - at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const dirFd = openSync(dir, constants.O_RDONLY);
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}

/** The wallet of one membership: its chains' notes and attempts, every change on disk before it returns. */
export class Wallet {
  private constructor(
    private readonly path: string,
    private readonly membership: Membership,
    private data: WalletData,
  ) {}

  /** The membership's wallet in `dir` (an empty one when there is none yet). */
  static open(dir: string, membership: Membership): Wallet {
    const { file } = membership;
    const path = membershipPaths(dir, file.service, file.group_id).wallet;
    const bytes = readCacheFile(path, MAX_FILE_BYTES);
    const fresh: WalletData = {
      format: FORMAT,
      service: file.service,
      group_id: file.group_id,
      identity_commitment: file.identity_commitment,
      chains: {},
      stopped: null,
    };
    if (bytes === "none") return new Wallet(path, membership, fresh);
    if (typeof bytes === "string") throw new BudgetSpendError("wallet", `the wallet ${path} ${bytes}`);
    let data: WalletData;
    try {
      data = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      throw new BudgetSpendError("wallet", `the wallet ${path} is not JSON: it is kept as it is (move it away only if its notes are known spent)`);
    }
    if (data?.format !== FORMAT || data.service !== file.service || data.group_id !== file.group_id || data.identity_commitment !== file.identity_commitment)
      throw new BudgetSpendError("wallet", `the wallet ${path} is not this membership's`);
    return new Wallet(path, membership, data);
  }

  /** Re-reads the wallet from disk (what a process that crashed here would find). */
  reload(dir: string): Wallet {
    return Wallet.open(dir, this.membership);
  }

  get stopped(): string | null {
    return this.data.stopped;
  }

  /** A copy of every chain's record, by chain. */
  chains(): Record<string, ChainRecord> {
    return structuredClone(this.data.chains);
  }

  /** A copy of a chain's record. */
  chain(chain: bigint): ChainRecord {
    const record = this.data.chains[chain.toString()] ?? { note: null, pending: null, attempts: [] };
    return structuredClone(record);
  }

  private update(chain: bigint, change: (record: ChainRecord) => void): void {
    const key = chain.toString();
    const next = structuredClone(this.data);
    const record = (next.chains[key] ??= { note: null, pending: null, attempts: [] });
    change(record);
    writeDurably(this.path, `${JSON.stringify(next)}\n`);
    this.data = next;
  }

  /** The chain's open note as notes.ts takes it, or null before its first spend. */
  note(chain: bigint): Note | null {
    const note = this.data.chains[chain.toString()]?.note;
    return note ? { chain, spent: BigInt(note.spent), rho: BigInt(note.rho) } : null;
  }

  private refuseIfStopped(): void {
    if (this.data.stopped) throw new BudgetSpendError("compromised", this.data.stopped);
  }

  /**
   * PREPARED: the attempt's record on disk (fsynced) before any proof is
   * made or sent. Refused while another attempt of the chain is unresolved.
   */
  prepare(chain: bigint, attempt: { challengeId: string; amount: bigint; expiresAt: number }): SpendOutputs {
    this.refuseIfStopped();
    const pending = this.data.chains[chain.toString()]?.pending;
    if (pending)
      throw new BudgetSpendError(
        "in_flight",
        `a spend of this chain (challenge ${pending.challenge_id}) is unresolved until ${new Date(pending.expires_at + RESOLVE_MARGIN_MS).toISOString()}: its note cannot be spent again before then`,
      );
    const outputs = spendOutputs(this.membership.secret, chain, this.note(chain), attempt.amount);
    this.update(chain, (record) => {
      record.pending = {
        state: "prepared",
        challenge_id: attempt.challengeId,
        nullifier: outputs.nullifier.toString(),
        commitment: outputs.commitment.toString(),
        amount: attempt.amount.toString(),
        spent_after: outputs.next.spent.toString(),
        expires_at: attempt.expiresAt,
      };
    });
    return outputs;
  }

  /** The pending attempt moves to `state` (sent: the proof left; unknown: no answer came). */
  mark(chain: bigint, state: "sent" | "unknown"): void {
    this.update(chain, (record) => {
      if (record.pending) record.pending.state = state;
    });
  }

  /** REFUSED: the service said no; the note stays, the attempt is kept to be looked for if the next one meets already_spent. */
  refused(chain: bigint): void {
    this.update(chain, (record) => {
      if (!record.pending) return;
      record.attempts.push({ ...record.pending, state: "refused" });
      record.pending = null;
    });
  }

  /**
   * RESOLVE: an attempt whose commitment is in the feed is CONFIRMED (the
   * chain's next note, opened from ρ_new = H3(5, s, nf)); a pending one not
   * in it after its expiry and the margin goes back to READY. Returns
   * "ready", or the time (Unix ms) before which the pending attempt may still
   * be decided.
   */
  resolve(chain: bigint, lookup: NoteLookup, now: number): "ready" | number {
    const record = this.data.chains[chain.toString()];
    if (!record) return "ready";
    if (record.note && record.note.index === null) {
      const index = lookup(BigInt(record.note.commitment));
      if (index !== null) this.update(chain, (r) => void (r.note!.index = index));
    }
    for (const attempt of [...(record.pending ? [record.pending] : []), ...record.attempts]) {
      const index = lookup(BigInt(attempt.commitment));
      if (index !== null) {
        this.confirm(chain, attempt, index);
        return "ready";
      }
    }
    const pending = record.pending;
    if (!pending) return "ready";
    const until = pending.expires_at + RESOLVE_MARGIN_MS;
    if (now <= until) return until;
    this.refused(chain);
    return "ready";
  }

  private confirm(chain: bigint, attempt: Attempt, index: number): void {
    const rho = nextRho(this.membership.secret, BigInt(attempt.nullifier));
    this.update(chain, (record) => {
      record.note = { spent: attempt.spent_after, rho: rho.toString(), commitment: attempt.commitment, index };
      record.pending = null;
      record.attempts = [];
    });
  }

  /**
   * already_spent for the chain's note: an attempt in the feed is CONFIRMED
   * (an answer that was lost or falsely refused); none in it means someone
   * else spent this member's note, and the wallet stops.
   */
  alreadySpent(chain: bigint, lookup: NoteLookup): void {
    const record = this.data.chains[chain.toString()];
    for (const attempt of [...(record?.pending ? [record.pending] : []), ...(record?.attempts ?? [])]) {
      const index = lookup(BigInt(attempt.commitment));
      if (index !== null) {
        this.confirm(chain, attempt, index);
        return;
      }
    }
    const why = `the service says this member's note (chain ${chain}) was spent, and no spend this wallet made is in the notes feed: someone else holds this membership's secret. The wallet stops; ask the group's owner to revoke the leaf`;
    this.data = { ...this.data, stopped: why };
    writeDurably(this.path, `${JSON.stringify(this.data)}\n`);
    throw new BudgetSpendError("compromised", why);
  }
}

/**
 * Runs `fn` holding the wallet's lock file (O_EXCL, its holder's pid inside):
 * one spend of a membership at a time across processes. A lock whose holder
 * is no longer running is taken over; otherwise waits up to `waitMs`.
 */
export async function withWalletLock<T>(path: string, fn: () => Promise<T>, waitMs = 120_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  for (;;) {
    // The pid is written first and the file linked into place, so a lock is never seen without its holder.
    const tmp = `${path}.${randomUUID()}.tmp`;
    try {
      writeFileSync(tmp, `${process.pid}\n`, { mode: 0o600, flag: "wx" });
      linkSync(tmp, path);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw new BudgetSpendError("wallet", `the wallet lock ${path}: ${(error as Error).message}`);
    } finally {
      rmSync(tmp, { force: true });
    }
    if (!holderAlive(path)) {
      rmSync(path, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new BudgetSpendError("in_flight", `another process holds the wallet lock ${path}: one spend at a time`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  try {
    return await fn();
  } finally {
    rmSync(path, { force: true });
  }
}

function holderAlive(path: string): boolean {
  let pid: number;
  try {
    pid = Number.parseInt(readFileSync(path, "utf8"), 10);
  } catch {
    return true; // being written: wait
  }
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
