// What a group's tree costs a process that keeps it (src/groups/cache.ts),
// and so how much room the tree cache needs for the largest group allowed:
// src/config.ts refuses a GROUP_TREE_CACHE_MB below it for GROUP_MAX_MEMBERS,
// so a group at the limit is never dropped and reloaded at every change.
//
// Per leaf of the byte-backed tree (src/groups/lean-tree.ts): every level's
// nodes, ≈ 2 × 32 bytes, with at most 25 % room to grow (80); its commitment
// index, 8–16 bytes (src/groups/tree.ts). Rounded up: 96. Measured by
// test/groups/tree-budget.test.ts on a tree grown by additions.
export const TREE_BYTES_PER_LEAF = 96;

/** The tree cache, in MiB, that holds one group of `maxMembers` leaves. */
export const treeCacheMbFor = (maxMembers: number): number => Math.ceil((maxMembers * TREE_BYTES_PER_LEAF) / 2 ** 20);
