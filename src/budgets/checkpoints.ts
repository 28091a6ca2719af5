// Notes checkpoints (docs/protocol.md, "Roots: the newest the agent synced"):
// every BUDGET_CHECKPOINT_S seconds each node records, for each budgeted
// group whose notes grew, the notes tree's root at its current size under
// the next sequence number. Nodes racing for one sequence agree through the
// store's unique (group, sequence) key: the first insert stands and the
// others drop theirs (both roots are of the same append-only tree, so
// either is sound). A spend names one of the newest W checkpoints, so agents
// in a window name one of a few roots and a root does not date an agent's
// last sync.
import type { BudgetsStore, Checkpoint } from "../store/budgets/records";
import { LeanTree } from "../groups/lean-tree";
import { NOTES_GENESIS_LEAF } from "./encoding";

/** A group's first checkpoint, from its creation: the tree of the genesis leaf alone (a one-leaf LeanIMT's root is its leaf). */
export const genesisCheckpoint = (at: number): Checkpoint => ({ sequence: 0, size: 1, root: NOTES_GENESIS_LEAF.toString(), at });

const PAGE = 1_000;

/** The checkpointer of one node: its notes trees are kept between ticks and grown by the notes appended since. */
export class NotesCheckpointer {
  private readonly trees = new Map<string, LeanTree>();

  constructor(
    private readonly store: BudgetsStore,
    private readonly now: () => number,
  ) {}

  /** The notes tree of the group's first `size` leaves. */
  async treeAt(groupId: string, size: number): Promise<LeanTree> {
    let tree = this.trees.get(groupId);
    if (!tree || tree.size > size) {
      tree = LeanTree.fromLeaves([NOTES_GENESIS_LEAF]);
      this.trees.set(groupId, tree);
    }
    while (tree.size < size) {
      const notes = await this.store.budgetNotes(groupId, tree.size, Math.min(PAGE, size - tree.size));
      if (notes.length === 0 || notes[0]!.index !== tree.size) throw new Error(`notes of ${groupId} missing from index ${tree.size}`);
      tree.apply(notes.map((note) => ({ index: note.index, value: BigInt(note.commitment) })));
    }
    // A node that read fewer notes than asked (size read first, notes after) never overshoots: apply added exactly those indices.
    return tree;
  }

  /** One round: a checkpoint for every budgeted group that grew (its genesis one for a group without any). Returns how many this node recorded. */
  async tick(): Promise<number> {
    let recorded = 0;
    for (const grown of await this.store.grownGroups()) {
      const checkpoint =
        grown.sequence < 0
          ? genesisCheckpoint(this.now())
          : { sequence: grown.sequence + 1, size: grown.size, root: (await this.treeAt(grown.groupId, grown.size)).root.toString(), at: this.now() };
      if (await this.store.recordCheckpoint(grown.groupId, checkpoint)) recorded++;
    }
    return recorded;
  }
}
