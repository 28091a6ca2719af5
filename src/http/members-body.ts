// The body of POST /v1/groups/{id}/members, read off the event loop (issue
// 37): a batch of 10,000 commitments is ≈ 800 KB of JSON, and decoding it,
// scanning it as I-JSON and checking every commitment against r took
// 20–400 ms of the event loop per batch (the more, the busier the machine),
// during which no other key's request was answered. Its bytes are moved
// (transferred, not copied) to one thread per process, which does all of it
// and answers with the commitments as one string. The answers and their
// order are those of readJsonObject and validate (the same functions run there).
import { ApiError } from "../errors";
import { MEMBERS_BODY_LIMIT_BYTES, membersExplanations, membersRefinements, membersRequest } from "../modules/groups/model";
import { spawnThread, threadModule } from "../thread-module";
import { jsonObjectOf, readJsonBytes } from "./body";
import { validate } from "./validate";

/** The thread's module, wherever this code runs (src/thread-module.ts). */
const THREAD_MODULE = threadModule(import.meta.url, "http", "members-body.ts", "members-body-main");

/** Below this a body is read on the event loop: ≈ 800 commitments take about a millisecond, less than a round trip to the thread. */
export const OFF_LOOP_BYTES = 64 * 1024;

/** The commitments of a members body (bytes as received): the 400 of readJsonObject or validate otherwise. */
export function membersOf(bytes: Uint8Array): string[] {
  return validate(membersRequest, jsonObjectOf(bytes), membersRefinements, membersExplanations).identity_commitments;
}

/** What the thread answers: the commitments joined by commas (decimals: none holds one), or the ApiError to throw. */
export type MembersAnswer =
  | { id: number; commitments: string }
  | { id: number; error: { kind: ApiError["kind"]; body: Record<string, unknown>; details: ApiError["details"] } }
  | { id: number; fault: string };

class MembersBodyThread {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: string[]) => void; reject: (error: unknown) => void }>();

  private constructor(private readonly worker: Worker) {}

  static async start(): Promise<MembersBodyThread> {
    let thread: MembersBodyThread | undefined;
    const { worker, started } = spawnThread<MembersAnswer>(
      THREAD_MODULE,
      "members body thread",
      {},
      {
        message: (answer) => thread?.answered(answer),
        died: (error) => thread?.died(error),
      },
    );
    thread = new MembersBodyThread(worker);
    await started;
    return thread;
  }

  parse(bytes: Uint8Array): Promise<string[]> {
    // Only a buffer of its own is moved: a view into a shared one (Buffer's pool) is copied first.
    const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, bytes: own }, [own.buffer as ArrayBuffer]);
    });
  }

  private answered(answer: MembersAnswer): void {
    const call = this.pending.get(answer.id);
    this.pending.delete(answer.id);
    if ("error" in answer) call?.reject(new ApiError(answer.error.kind, answer.error.body, answer.error.details));
    else if ("fault" in answer) call?.reject(new Error(`members body thread: ${answer.fault}`));
    else call?.resolve(answer.commitments.split(","));
  }

  /** A thread that died fails its calls; the next body starts a new one. */
  private died(error: Error): void {
    for (const call of this.pending.values()) call.reject(error);
    this.pending.clear();
    this.worker.terminate();
    if (shared === started) shared = null;
  }
}

let shared: Promise<MembersBodyThread | null> | null = null;
let started: Promise<MembersBodyThread | null> | null = null;

/** The process's thread, started on first use; null when it cannot start (the bodies are then read on the event loop). */
function membersThread(): Promise<MembersBodyThread | null> {
  if (shared === null) {
    shared = MembersBodyThread.start().catch(() => null);
    started = shared;
  }
  return shared;
}

/** The commitments of a POST members request: content type, size, JSON, I-JSON and every commitment checked, a large body off the event loop. */
export async function readMembers(request: Request): Promise<string[]> {
  const bytes = await readJsonBytes(request, MEMBERS_BODY_LIMIT_BYTES);
  const thread = bytes.byteLength < OFF_LOOP_BYTES ? null : await membersThread();
  return thread === null ? membersOf(bytes) : thread.parse(bytes);
}
