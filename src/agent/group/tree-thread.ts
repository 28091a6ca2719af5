// One share of a group tree's first build, on a thread (tree.ts starts
// it): levels 1…upTo over a run of leaves, posted back as transferred buffers.
// Public leaves in, public nodes out: nothing of the member crosses the thread.
import { buildLevels } from "../../groups/lean-tree";

declare const self: Worker;

self.onmessage = (event: MessageEvent<{ leaves: Uint8Array; count: number; upTo: number }>) => {
  const { leaves, count, upTo } = event.data;
  try {
    const levels = buildLevels(leaves, count, upTo);
    self.postMessage(
      { levels },
      levels.map((level) => level.buffer as ArrayBuffer),
    );
  } catch (error) {
    self.postMessage({ error: (error as Error).message });
  }
};
