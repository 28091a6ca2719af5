// A verification engine on its own thread (a Bun Worker running
// thread-main.ts), so the event loop that serves HTTP and talks to the
// database keeps running while proofs are verified. Measured against the
// in-thread engine in docs/performance.md.
import type { BatchItem, VerifyEngine } from "./batching";
import { verificationKey } from "./circuit-key";
import type { SnarkjsProof, SnarkjsVerificationKey, VerifyResult } from "./types";
import { spawnThread, threadModule } from "../thread-module";

/** The thread's module, wherever this code runs (src/thread-module.ts). */
const THREAD_MODULE = threadModule(import.meta.url, "verifier", "thread.ts", "thread-main");

/** A thread that has not loaded its verifier by then will not; start-up fails rather than hang. */

interface Call {
  items: BatchItem[];
  resolve: (results: VerifyResult[]) => void;
  reject: (error: unknown) => void;
}

export class ThreadEngine implements VerifyEngine {
  private worker!: Worker;
  private nextId = 1;
  private readonly calls = new Map<number, Call>();
  private closed = false;

  private constructor(private readonly key: SnarkjsVerificationKey) {}

  /** A thread verifying against `key` (a circuit's verification key; the thread loads it first). */
  static async start(key: SnarkjsVerificationKey = verificationKey): Promise<ThreadEngine> {
    const engine = new ThreadEngine(key);
    await engine.spawn();
    return engine;
  }

  private spawn(): Promise<void> {
    const { worker, started } = spawnThread<{ id?: number; results?: VerifyResult[] }>(
      THREAD_MODULE,
      "verifier thread",
      { key: this.key },
      {
        message: (data) => {
          const call = this.calls.get(data.id!);
          this.calls.delete(data.id!);
          call?.resolve(data.results!);
        },
        died: () => this.restart(),
      },
    );
    this.worker = worker;
    return started;
  }

  /** A thread that died takes its calls with it: start a new one and send them again. */
  private restart(): void {
    if (this.closed) return;
    const pending = [...this.calls.values()];
    this.calls.clear();
    this.worker.terminate();
    this.spawn().then(
      () => pending.forEach((call) => this.send(call)),
      (error) => pending.forEach((call) => call.reject(error)),
    );
  }

  private send(call: Call): void {
    const id = this.nextId++;
    this.calls.set(id, call);
    this.worker.postMessage({ id, items: call.items });
  }

  private run(items: BatchItem[]): Promise<VerifyResult[]> {
    return new Promise((resolve, reject) => this.send({ items, resolve, reject }));
  }

  verify(proof: SnarkjsProof | string, publicSignals: readonly (string | bigint)[]): Promise<VerifyResult> {
    return this.run([{ proof, publicSignals }]).then((results) => results[0]!);
  }

  verifyBatch(items: readonly BatchItem[]): Promise<VerifyResult[]> {
    return this.run([...items]);
  }

  close(): void {
    this.closed = true;
    this.worker.terminate();
    for (const call of this.calls.values()) call.reject(new Error("verifier thread closed"));
    this.calls.clear();
  }
}
