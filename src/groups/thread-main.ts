// The inside of the group tree thread (thread.ts starts it): a GroupTrees.
// The first message is { budgetBytes }; after it, { id, method, … } is
// answered with { id, result } or { id, error }.
import { GroupTrees } from "./cache";
import type { ThreadCall } from "./thread";
import { fromWireChange, toWirePlan } from "./thread-wire";

declare const self: Worker;

let trees: GroupTrees | undefined;

const run = (trees: GroupTrees, call: ThreadCall): unknown => {
  switch (call.method) {
    case "replayFrom":
      return trees.replayFromNow(call.groupId, call.version);
    case "load":
      return trees.loadNow(call.groupId, call.snapshot);
    case "plan":
      return toWirePlan(trees.planNow(call.groupId, call.version, call.missed, fromWireChange(call.change)));
    case "forget":
      return trees.forget(call.groupId);
  }
};

self.onmessage = (event: MessageEvent<{ budgetBytes: number } | ({ id: number } & ThreadCall)>) => {
  const data = event.data;
  if (!("id" in data)) {
    trees = new GroupTrees(data.budgetBytes);
    self.postMessage({ ready: true });
    return;
  }
  try {
    const result = run(trees!, data);
    if (data.method === "plan") {
      const { plan, transfer } = result as ReturnType<typeof toWirePlan>;
      self.postMessage({ id: data.id, result: plan }, transfer);
    } else self.postMessage({ id: data.id, result });
  } catch (error) {
    // The tree may be half-changed: drop it, the store is the truth.
    trees!.forget(data.groupId);
    self.postMessage({ id: data.id, error: error instanceof Error ? error.message : String(error) });
  }
};
