// What crosses between the event loop and the group tree thread (thread.ts,
// thread-main.ts) for a change, in a form that is cheap to cross (issue 37):
// structured cloning copies every string and object one by one, and a batch
// of 10,000 commitments out and its leaves and nodes back cost the event
// loop 20–60 ms a batch. Strings joined into one and numbers in typed arrays
// (moved, not copied) cost it a millisecond or two.
import type { TreeChange, TreePlan } from "./cache";
import type { TreeState } from "./tree";

/**
 * A change as it crosses to the thread: a batch's commitments as one string
 * (decimals joined by commas). Ten thousand strings cost the event loop
 * 10–30 ms to clone; one string of 800 KB is copied in well under one.
 */
export type WireChange = { kind: "add"; commitments: string } | { kind: "remove"; commitment: string };

/**
 * A plan as it comes back: the leaves' and nodes' numbers in typed arrays
 * (moved, not copied) and their values as one string, for the same reason.
 */
export type WirePlan =
  | Exclude<TreePlan, { outcome: "planned" }>
  | {
      outcome: "planned";
      state: TreeState;
      active: number;
      leafIndexes: Float64Array;
      leafValues: string;
      nodeLevels: Uint8Array;
      nodeIndexes: Float64Array;
      nodeValues: string;
    };

export const toWireChange = (change: TreeChange): WireChange => (change.kind === "add" ? { kind: "add", commitments: change.commitments.join(",") } : change);

export const fromWireChange = (change: WireChange): TreeChange =>
  change.kind === "add" ? { kind: "add", commitments: change.commitments === "" ? [] : change.commitments.split(",") } : change;

/** The plan as the thread sends it, and the buffers it moves. */
export function toWirePlan(plan: TreePlan): { plan: WirePlan; transfer: ArrayBuffer[] } {
  if (plan.outcome !== "planned") return { plan, transfer: [] };
  const { state, active, leaves, nodes } = plan;
  const wire = {
    outcome: "planned" as const,
    state,
    active,
    leafIndexes: Float64Array.from(leaves, (leaf) => leaf.index),
    leafValues: leaves.map((leaf) => leaf.value).join(","),
    nodeLevels: Uint8Array.from(nodes, (node) => node.level),
    nodeIndexes: Float64Array.from(nodes, (node) => node.index),
    nodeValues: nodes.map((node) => node.value).join(","),
  };
  return { plan: wire, transfer: [wire.leafIndexes.buffer, wire.nodeLevels.buffer, wire.nodeIndexes.buffer] };
}

export function fromWirePlan(plan: WirePlan): TreePlan {
  if (plan.outcome !== "planned") return plan;
  const values = plan.leafValues === "" ? [] : plan.leafValues.split(",");
  const nodeValues = plan.nodeValues === "" ? [] : plan.nodeValues.split(",");
  return {
    outcome: "planned",
    state: plan.state,
    active: plan.active,
    leaves: values.map((value, i) => ({ index: plan.leafIndexes[i]!, value })),
    nodes: nodeValues.map((value, i) => ({ level: plan.nodeLevels[i]!, index: plan.nodeIndexes[i]!, value })),
  };
}
