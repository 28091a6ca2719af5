// Verification batching under load, behind the same verify() the proof
// service awaits (docs/scaling.md, "Verification batching under load").
//
// A Groth16 check of n proofs against one key can share its expensive tail:
// verifyBatch folds them into one randomised pairing equation (n + 3 Miller
// loops, one final exponentiation) and bisects when it fails, so every item
// still gets exactly the verdict verify() would give it. Batching only pays
// when proofs are actually waiting, so:
//
// - an idle engine verifies a lone submission at once (idle latency unchanged);
// - while an engine is busy, submissions queue; when it finishes, the queue
//   (at most `maxBatch`) goes to it as one verifyBatch;
// - after a synchronous (in-thread) verification the engine stays "busy" for
//   one more event-loop turn (setImmediate): the submissions whose requests
//   arrived while it held the thread are dispatched in that turn and join the
//   next batch instead of each taking the thread alone.
//
// The batch size therefore follows the load by itself: at 1 request in flight
// it is 1, at 30 in flight it approaches 30. Each verdict goes back to its own
// caller, which decides its own challenge with its own conditional update.
//
// An engine that throws (a crashed verifier thread, a fault in the module) has
// given no verdict: its callers' promises reject, the proof service answers
// 500 and the challenge stays pending for a retry. A server fault must never
// decide a challenge `failed` and burn a valid proof.
//
// Fairness between tenants (issue 18): the queue is one queue per tenant
// (the API key whose challenge the proof is for), served round-robin. A
// batch, or in single mode the next item, takes one item from each tenant in
// turn, so a key with 200 proofs queued delays another key's lone proof by at
// most one proof (single mode) or shares a batch with it, instead of putting
// it behind all 200. Proofs without a tenant share one queue.
//
// A batch that fails is bisected by verifyBatch: cheap when one proof in 32
// is bad, but a flood of bad proofs would make every batch fail and bisect
// down to single checks, costing more than verifying them singly in the first
// place. So the batcher follows the share of failed verdicts (a moving
// average) and, while it is above FAILING_SHARE, verifies queued items one by
// one, one per loop turn; the verdicts are the same either way, only the cost
// differs.
import type { SnarkjsProof, Verifier, VerifyOptions, VerifyResult } from "./types";

export interface BatchItem {
  proof: SnarkjsProof | string;
  publicSignals: readonly (string | bigint)[];
}

/** What the batcher runs verifications on: an in-thread Groth16Verifier or a verifier thread. */
export interface VerifyEngine extends Verifier {
  verifyBatch(items: readonly BatchItem[]): VerifyResult[] | Promise<VerifyResult[]>;
  /** Releases what the engine holds (a thread); absent when there is nothing to release. */
  close?(): void;
}

/** Counts for /metrics, logs and the bench: how large the batches became. */
export interface BatchStats {
  /** Verifications run alone (an idle engine, or a queue of one). */
  singles: number;
  /** verifyBatch calls with two or more items. */
  batches: number;
  /** Items verified inside those batches. */
  batchedItems: number;
  largestBatch: number;
}

export interface BatchingOptions {
  /** Upper bound on one verifyBatch; larger queues are split. */
  maxBatch?: number;
  /** Called with the size of every verification run (1 for a single). */
  onRun?: (size: number) => void;
}

/** Large enough that the shared tail is a small share per proof, small enough to bound a batch's latency. */
export const DEFAULT_MAX_BATCH = 32;

/**
 * Above this share of failing verdicts, queued items are verified singly:
 * with b bad items among k, bisection runs about 2·b·log2(k/b) smaller batch
 * equations before its b single checks, which outweighs the shared tail once
 * more than about one item in eight fails.
 */
export const FAILING_SHARE = 1 / 8;
/** Weight of one verdict in the moving share of failures (about the last 64 verdicts). */
const FAILURE_WEIGHT = 1 / 64;

interface Waiting {
  item: BatchItem;
  resolve: (result: VerifyResult) => void;
  reject: (error: unknown) => void;
}

export class BatchingVerifier implements Verifier {
  private readonly idle: VerifyEngine[];
  /** One queue per tenant, in round-robin order: a tenant served moves to the back. */
  private readonly queues = new Map<string, Waiting[]>();
  /** Items in all queues. */
  private waiting = 0;
  private readonly maxBatch: number;
  private readonly onRun?: (size: number) => void;
  readonly stats: BatchStats = { singles: 0, batches: 0, batchedItems: 0, largestBatch: 0 };
  /** Moving share of verdicts that were failures. */
  private failing = 0;

  constructor(
    private readonly engines: readonly VerifyEngine[],
    options: BatchingOptions = {},
  ) {
    if (engines.length === 0) throw new Error("BatchingVerifier needs at least one engine");
    this.idle = [...engines];
    this.maxBatch = Math.max(1, options.maxBatch ?? DEFAULT_MAX_BATCH);
    this.onRun = options.onRun;
  }

  verify(proof: SnarkjsProof | string, publicSignals: readonly (string | bigint)[], options: VerifyOptions = {}): VerifyResult | Promise<VerifyResult> {
    const engine = this.waiting === 0 ? this.idle.pop() : undefined;
    if (engine) return this.runSingle(engine, { proof, publicSignals });
    return new Promise((resolve, reject) => this.enqueue(options.tenant ?? "", { item: { proof, publicSignals }, resolve, reject }));
  }

  private enqueue(tenant: string, waiting: Waiting): void {
    const queue = this.queues.get(tenant);
    if (queue) queue.push(waiting);
    else this.queues.set(tenant, [waiting]);
    this.waiting++;
  }

  /**
   * Up to `n` items, one per tenant in turn. A Map iterates in insertion
   * order and visits entries added during the iteration, so deleting a
   * tenant and setting it again moves it to the back of the rotation.
   */
  private take(n: number): Waiting[] {
    const taken: Waiting[] = [];
    for (const [tenant, queue] of this.queues) {
      if (taken.length >= n) break;
      taken.push(queue.shift()!);
      this.waiting--;
      this.queues.delete(tenant);
      if (queue.length > 0) this.queues.set(tenant, queue);
    }
    return taken;
  }

  /** The idle path: verified now, in this call when the engine is synchronous. */
  private runSingle(engine: VerifyEngine, item: BatchItem): VerifyResult | Promise<VerifyResult> {
    this.count(1);
    let result: VerifyResult | Promise<VerifyResult>;
    try {
      result = engine.verify(item.proof, item.publicSignals);
    } catch (error) {
      this.release(engine);
      throw error;
    }
    if (result instanceof Promise) {
      return result.then(
        (r) => (this.observe([r]), this.release(engine), r),
        (error) => {
          this.release(engine);
          throw error;
        },
      );
    }
    this.observe([result]);
    this.release(engine);
    return result;
  }

  private observe(results: readonly VerifyResult[]): void {
    for (const r of results) this.failing += ((r.ok ? 0 : 1) - this.failing) * FAILURE_WEIGHT;
  }

  private verifyOne(engine: VerifyEngine, item: BatchItem): VerifyResult[] | Promise<VerifyResult[]> {
    const result = engine.verify(item.proof, item.publicSignals);
    return result instanceof Promise ? result.then((r) => [r]) : [result];
  }

  /** The engine is free again after one more loop turn, in which waiting submissions can arrive. */
  private release(engine: VerifyEngine): void {
    setImmediate(() => this.drain(engine));
  }

  private drain(engine: VerifyEngine): void {
    if (this.waiting === 0) {
      this.idle.push(engine);
      return;
    }
    // While failures dominate, one item per turn, exactly as without batching:
    // its caller is answered before the next proof takes the thread.
    const singly = this.waiting === 1 || this.failing > FAILING_SHARE;
    const taken = this.take(singly ? 1 : this.maxBatch);
    const items = taken.map((w) => w.item);
    this.count(taken.length);
    const settle = (results: readonly VerifyResult[]) => {
      this.observe(results);
      taken.forEach((w, i) => w.resolve(results[i]!));
      this.release(engine);
    };
    const fault = (error: unknown) => {
      for (const w of taken) w.reject(error);
      this.release(engine);
    };
    let results: VerifyResult[] | Promise<VerifyResult[]>;
    try {
      results = singly ? this.verifyOne(engine, items[0]!) : engine.verifyBatch(items);
    } catch (error) {
      fault(error);
      return;
    }
    if (results instanceof Promise) results.then(settle, fault);
    else settle(results);
  }

  /** Closes the engines; call once nothing is verifying any more (after the server drained). */
  close(): void {
    for (const engine of this.engines) engine.close?.();
  }

  private count(size: number): void {
    if (size === 1) this.stats.singles++;
    else {
      this.stats.batches++;
      this.stats.batchedItems += size;
      this.stats.largestBatch = Math.max(this.stats.largestBatch, size);
    }
    this.onRun?.(size);
  }
}
