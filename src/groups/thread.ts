// The group trees on a worker thread (thread-main.ts runs a GroupTrees):
// applying a batch of 10,000 additions hashes for seconds (Poseidon in
// poseidon-lite, ≈ 130 µs per hash here), and on the event loop that stalled
// every other key's requests (issue 32: another key's challenge p99 4.9 s).
// Here the event loop only sends the leaves and receives the new root and
// nodes; the hashing runs on another core. One thread per process: the
// changes it runs are already one per group (exclusive) and one per key
// (the service's queue of additions), so a key's batches wait behind each
// other, and another key's change behind at most one of them.
import type { Leaf } from "./tree";
import { Queues, type TreeCache, type TreeChange, type TreePlan, type TreeSnapshot } from "./cache";

/** As src/verifier/thread.ts: from source this file's neighbour; bundled, under the binary's root. */
const THREAD_MODULE = import.meta.url.endsWith("/groups/thread.ts")
  ? new URL("./thread-main.ts", import.meta.url).href
  : new URL("./groups/thread-main.ts", import.meta.url).href;

const START_TIMEOUT_MS = 30_000;

/** A call to the thread, by method; answered in order (the thread is one loop). */
export type ThreadCall =
  | { method: "replayFrom"; groupId: string; version: number }
  | { method: "load"; groupId: string; snapshot: TreeSnapshot }
  | { method: "plan"; groupId: string; version: number; missed: Leaf[]; change: TreeChange }
  | { method: "forget"; groupId: string };

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class ThreadTreeCache implements TreeCache {
  private worker!: Worker;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly queues = new Queues();
  private closed = false;

  private constructor(private readonly budgetBytes: number) {}

  static async start(budgetBytes = 0): Promise<ThreadTreeCache> {
    const cache = new ThreadTreeCache(budgetBytes);
    await cache.spawn();
    return cache;
  }

  private spawn(): Promise<void> {
    return new Promise((ready, failed) => {
      const worker = new Worker(THREAD_MODULE);
      let started = false;
      const timer = setTimeout(() => {
        worker.terminate();
        failed(new Error(`group tree thread did not start within ${START_TIMEOUT_MS / 1000} s (${THREAD_MODULE})`));
      }, START_TIMEOUT_MS);
      worker.onmessage = (event: MessageEvent<{ ready?: true; id?: number; result?: unknown; error?: string }>) => {
        if (event.data.ready) {
          started = true;
          clearTimeout(timer);
          return ready();
        }
        const call = this.pending.get(event.data.id!);
        this.pending.delete(event.data.id!);
        if (event.data.error !== undefined) call?.reject(new Error(`group tree thread: ${event.data.error}`));
        else call?.resolve(event.data.result);
      };
      worker.onerror = (event) => {
        if (!started) {
          clearTimeout(timer);
          return failed(new Error(`group tree thread failed to start: ${event.message}`));
        }
        this.restart(new Error(`group tree thread died: ${event.message}`));
      };
      (worker as Worker & { unref(): void }).unref();
      this.worker = worker;
      worker.postMessage({ budgetBytes: this.budgetBytes });
    });
  }

  /**
   * A thread that died takes its trees with it: its calls fail (each change
   * is then refused whole, nothing stored) and a new, empty thread loads the
   * trees again from the store as their groups change.
   */
  private restart(error: Error): void {
    if (this.closed) return;
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
    this.worker.terminate();
    this.spawn().catch(() => {});
  }

  private call<T>(message: ThreadCall): Promise<T> {
    if (this.closed) return Promise.reject(new Error("group tree thread closed"));
    return new Promise<T>((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.worker.postMessage({ id, ...message });
    });
  }

  exclusive<T>(groupId: string, work: () => Promise<T>): Promise<T> {
    return this.queues.run(groupId, work);
  }

  replayFrom(groupId: string, version: number): Promise<number | null> {
    return this.call({ method: "replayFrom", groupId, version });
  }

  load(groupId: string, snapshot: TreeSnapshot): Promise<boolean> {
    return this.call({ method: "load", groupId, snapshot });
  }

  plan(groupId: string, version: number, missed: Leaf[], change: TreeChange): Promise<TreePlan> {
    return this.call({ method: "plan", groupId, version, missed, change });
  }

  forget(groupId: string): void {
    // Calls are answered in order: a later call of this group sees the tree gone.
    this.call({ method: "forget", groupId }).catch(() => {});
  }

  close(): void {
    this.closed = true;
    this.worker.terminate();
    for (const call of this.pending.values()) call.reject(new Error("group tree thread closed"));
    this.pending.clear();
  }
}
