// The agent's tree of a group (the shared LeanTree, src/groups/lean-tree.ts),
// built from a first sync's leaves. Hides nothing, reveals nothing: the
// leaves are public and every member builds the same tree.
//
// A group's first sync hashes every leaf once (n − 1 Poseidon hashes: ≈ 0.05 ms
// each on one core here, docs/performance.md): the bulk of the first proof in
// a large group. The tree splits into aligned subtrees that need nothing of
// each other below their own roots, so each share is hashed on its own thread
// (tree-thread.ts) and only the few levels above them here. A share that
// cannot run on a thread (no Workers, a compiled binary without the module)
// is hashed on this one: the same tree, slower.
import { availableParallelism } from "node:os";
import { LeanTree, buildLevels, depthOf, levelCount, NODE_BYTES } from "../../groups/lean-tree";
import { threadModule } from "../../thread-module";

/** Below this many leaves a thread costs more to start than it saves. */
export const PARALLEL_MIN_LEAVES = 1 << 14;

/** The thread's module, wherever this code runs (src/thread-module.ts). */
const THREAD_MODULE = threadModule(import.meta.url, "agent/group", "tree.ts", "tree-thread");

/**
 * A thread that has not answered by then will not (its module never loaded):
 * its share is hashed on the calling thread. Long, because the calling
 * thread hashes its own share meanwhile and handles no message until done.
 */
const ANSWER_TIMEOUT_MS = 60_000;

/** Levels 1…upTo of one share, on a thread; null when the thread could not do it (the caller hashes it itself). */
function onThread(leaves: Uint8Array, count: number, upTo: number): Promise<Uint8Array[] | null> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(THREAD_MODULE);
    } catch {
      return resolve(null);
    }
    const timer = setTimeout(() => done(null), ANSWER_TIMEOUT_MS);
    function done(levels: Uint8Array[] | null) {
      clearTimeout(timer);
      worker.terminate();
      resolve(levels);
    }
    worker.onmessage = (event: MessageEvent<{ levels?: Uint8Array[]; error?: string }>) => done(event.data.levels ?? null);
    worker.onerror = () => done(null);
    // Sent at once, not on a "ready" from the thread: the calling thread is about to hash its own share
    // synchronously and would handle that message only afterwards — the shares ran one after the other.
    // A message sent before the module loaded waits in the thread's queue.
    worker.postMessage({ leaves, count, upTo });
  });
}

/**
 * The tree over `leaves` (count × 32 bytes, big-endian), hashed in up to
 * `threads` aligned shares at once (default the machine's cores, at most 8).
 */
export async function buildTree(
  leaves: Uint8Array,
  count: number,
  threads = Math.min(availableParallelism(), 8),
  minLeaves = PARALLEL_MIN_LEAVES,
): Promise<LeanTree> {
  const depth = depthOf(count);
  // Shares: a power of two no larger than the threads asked for, each an aligned subtree of 2^k leaves (the last one partial).
  const shares = count < minLeaves || threads < 2 ? 1 : 2 ** Math.min(Math.floor(Math.log2(threads)), depth);
  if (shares === 1) return LeanTree.fromLevels(count, [leaves]);
  const k = depth - Math.log2(shares);
  const span = 2 ** k;
  const jobs: Promise<Uint8Array[]>[] = [];
  for (let share = 0; share * span < count; share++) {
    const first = share * span;
    const n = Math.min(span, count - first);
    const slice = leaves.slice(first * NODE_BYTES, (first + n) * NODE_BYTES);
    // The last share is this thread's own (it would otherwise wait idle).
    const own = (share + 1) * span >= count;
    jobs.push(own ? Promise.resolve(buildLevels(slice, n, k)) : onThread(slice, n, k).then((levels) => levels ?? buildLevels(slice, n, k)));
  }
  const parts = await Promise.all(jobs);
  const levels: Uint8Array[] = [leaves];
  for (let level = 1; level <= k; level++) {
    const joined = new Uint8Array(levelCount(count, level) * NODE_BYTES);
    let at = 0;
    for (const part of parts) {
      joined.set(part[level - 1]!, at);
      at += part[level - 1]!.length;
    }
    levels.push(joined);
  }
  return LeanTree.fromLevels(count, levels);
}
