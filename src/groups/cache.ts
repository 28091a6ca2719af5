// The group trees a process keeps, and the one interface the store's
// optimistic change (src/store/groups/change.ts) uses them through. Two
// implementations: GroupTrees here (in the calling thread; tests and tools),
// and ThreadTreeCache (thread.ts), which runs the same GroupTrees on a worker
// thread so that the Poseidon hashing of a change never runs on the event
// loop that serves other keys' requests.
//
// Memory is bounded: the trees are kept least recently used first within a
// byte budget (GROUP_TREE_CACHE_MB, which src/config.ts holds to fit the
// largest group allowed: ./tree-budget.ts). A tree dropped for room is loaded again
// from its stored leaves and internal nodes (no hashing), its root checked
// against the stored root, the next time its group changes.
import { GroupTree, type Leaf, type TreeNode, type TreeState } from "./tree";

export { TREE_BYTES_PER_LEAF } from "./tree-budget";
import { TREE_BYTES_PER_LEAF } from "./tree-budget";

/** The stored tree, as the store reads it in one consistent read. */
export interface TreeSnapshot {
  version: number;
  root: string;
  leaves: string[];
  levels: string[][];
}

export type TreeChange = { kind: "add"; commitments: string[] } | { kind: "remove"; commitment: string };

/** A change applied to the cached tree (not stored yet): the tree it leaves, and the leaves and internal nodes to write. */
export type TreePlan =
  | { outcome: "planned"; state: TreeState; active: number; leaves: Leaf[]; nodes: TreeNode[] }
  | { outcome: "invalid"; index: number; problem: string }
  | { outcome: "not_member" };

export interface TreeCache {
  /** Runs `work` after every change of this group already queued in this process: one change of a cached tree at a time. */
  exclusive<T>(groupId: string, work: () => Promise<T>): Promise<T>;
  /**
   * The version the cached tree must replay from to reach a group stored at
   * `version` (0: no tree here), or null when it is there. A tree ahead of
   * the store (a change that never committed) is dropped.
   */
  replayFrom(groupId: string, version: number): Promise<number | null>;
  /** Installs the stored tree when its leaves and nodes give its stored root; false (nothing installed) otherwise. */
  load(groupId: string, snapshot: TreeSnapshot): Promise<boolean>;
  /**
   * Replays `missed` (the leaves written after the cached version) to reach
   * `version`, then applies `change` as version + 1. The caller stores it or
   * calls forget.
   */
  plan(groupId: string, version: number, missed: Leaf[], change: TreeChange): Promise<TreePlan>;
  /** Drops the group's tree (a change that did not commit: the tree may be ahead of the store). */
  forget(groupId: string): void;
}

/** Serialises async work per name: what GroupTrees.exclusive and the per-key queue of additions share. */
export class Queues {
  private readonly queues = new Map<string, Promise<unknown>>();

  run<T>(name: string, work: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(name) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => {});
    this.queues.set(name, settled);
    settled.then(() => {
      if (this.queues.get(name) === settled) this.queues.delete(name);
    });
    return next;
  }
}

/** The trees, by group id, in this thread, least recently used first, within `budgetBytes` (0: unbounded). */
export class GroupTrees implements TreeCache {
  private readonly trees = new Map<string, GroupTree>();
  private readonly queues = new Queues();

  constructor(private readonly budgetBytes = 0) {}

  exclusive<T>(groupId: string, work: () => Promise<T>): Promise<T> {
    return this.queues.run(groupId, work);
  }

  async replayFrom(groupId: string, version: number): Promise<number | null> {
    return this.replayFromNow(groupId, version);
  }

  replayFromNow(groupId: string, version: number): number | null {
    const tree = this.trees.get(groupId);
    if (!tree) return 0;
    if (tree.version > version) {
      this.trees.delete(groupId);
      return 0;
    }
    return tree.version === version ? null : tree.version;
  }

  async load(groupId: string, snapshot: TreeSnapshot): Promise<boolean> {
    return this.loadNow(groupId, snapshot);
  }

  loadNow(groupId: string, snapshot: TreeSnapshot): boolean {
    const loaded = GroupTree.load(snapshot.leaves, snapshot.levels, snapshot.version);
    if (loaded.state.root !== snapshot.root) return false;
    this.touch(groupId, loaded);
    return true;
  }

  async plan(groupId: string, version: number, missed: Leaf[], change: TreeChange): Promise<TreePlan> {
    return this.planNow(groupId, version, missed, change);
  }

  planNow(groupId: string, version: number, missed: Leaf[], change: TreeChange): TreePlan {
    let tree = this.trees.get(groupId);
    if (!tree) tree = new GroupTree();
    this.touch(groupId, tree);
    if (tree.version !== version) tree.replay(missed, version);
    let leaves: Leaf[];
    if (change.kind === "add") {
      const added = tree.add(change.commitments);
      if (!added.ok) return { outcome: "invalid", index: added.index, problem: added.problem };
      leaves = added.leaves;
    } else {
      const removed = tree.remove(change.commitment);
      if (!removed) return { outcome: "not_member" };
      leaves = [removed];
    }
    tree.version = version + 1;
    const plan: TreePlan = { outcome: "planned", state: tree.state, active: tree.active, leaves, nodes: tree.nodesAbove(leaves) };
    this.evict(groupId);
    return plan;
  }

  forget(groupId: string): void {
    this.trees.delete(groupId);
  }

  /** Whether the group's tree is cached here (tests: the LRU dropped it). */
  has(groupId: string): boolean {
    return this.trees.has(groupId);
  }

  /** The bytes the cached trees are counted as. */
  get bytes(): number {
    let total = 0;
    for (const tree of this.trees.values()) total += tree.tree.size * TREE_BYTES_PER_LEAF;
    return total;
  }

  /** Most recently used last. */
  private touch(groupId: string, tree: GroupTree): void {
    this.trees.delete(groupId);
    this.trees.set(groupId, tree);
  }

  /**
   * Drops the least recently used trees until the rest fit the budget; the
   * one just used is kept, unless it alone is over the budget: then it alone
   * goes (its group's next change loads it from the store) and the others stay.
   */
  private evict(current: string): void {
    if (this.budgetBytes <= 0) return;
    const own = this.trees.get(current);
    // A tree over the budget by itself goes alone: dropping every other tree first would not make it fit.
    if (own !== undefined && own.tree.size * TREE_BYTES_PER_LEAF > this.budgetBytes) {
      this.trees.delete(current);
      return;
    }
    let total = this.bytes;
    for (const [groupId, tree] of this.trees) {
      if (total <= this.budgetBytes) return;
      if (groupId === current) continue;
      this.trees.delete(groupId);
      total -= tree.tree.size * TREE_BYTES_PER_LEAF;
    }
  }
}
