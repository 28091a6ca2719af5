// The group trees on a worker thread (thread-main.ts runs a GroupTrees):
// applying a batch of 10,000 additions hashes for seconds (the project's
// WebAssembly Poseidon, src/groups/poseidon.ts, ≈ 50–80 µs per hash here),
// and on the event loop that stalled
// every other key's requests (issue 32: another key's challenge p99 4.9 s).
// Here the event loop only sends the leaves and receives the new root and
// nodes; the hashing runs on another core. One thread per process: the
// changes it runs are already one per group (exclusive) and one per key
// (the service's queue of additions), so a key's batches wait behind each
// other, and another key's change behind at most one of them.
import type { Leaf } from "./tree";
import { Queues, type TreeCache, type TreeChange, type TreePlan, type TreeSnapshot } from "./cache";
import { fromWirePlan, toWireChange, type WireChange, type WirePlan } from "./thread-wire";
import { spawnThread, threadModule } from "../thread-module";

/** The thread's module, wherever this code runs (src/thread-module.ts). */
const THREAD_MODULE = threadModule(import.meta.url, "groups", "thread.ts", "thread-main");

/** A call to the thread, by method; answered in order (the thread is one loop). */
export type ThreadCall =
  | { method: "replayFrom"; groupId: string; version: number }
  | { method: "load"; groupId: string; snapshot: TreeSnapshot }
  | { method: "plan"; groupId: string; version: number; missed: Leaf[]; change: WireChange }
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
    const { worker, started } = spawnThread<{ id?: number; result?: unknown; error?: string }>(
      THREAD_MODULE,
      "group tree thread",
      { budgetBytes: this.budgetBytes },
      {
        message: (data) => {
          const call = this.pending.get(data.id!);
          this.pending.delete(data.id!);
          if (data.error !== undefined) call?.reject(new Error(`group tree thread: ${data.error}`));
          else call?.resolve(data.result);
        },
        died: (error) => this.restart(error),
      },
    );
    this.worker = worker;
    return started;
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

  async plan(groupId: string, version: number, missed: Leaf[], change: TreeChange): Promise<TreePlan> {
    return fromWirePlan(await this.call<WirePlan>({ method: "plan", groupId, version, missed, change: toWireChange(change) }));
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
