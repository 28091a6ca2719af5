pragma circom 2.1.6;

include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/bitify.circom";
include "circomlib/circuits/comparators.circom";

// LeanImtRoot — the root of a Lean incremental Merkle tree (Poseidon(2),
// the tree @zk-kit/lean-imt builds and src/groups/tree.ts keeps) computed
// from a leaf and its proof, for trees of depth up to MAX_DEPTH.
//
// A LeanIMT carries a lone right-most node up a level unhashed, so its
// proofs list only the levels where the node has a sibling: `length`
// siblings (the rest are ignored), and `index` whose bit i says whether
// the node is the right child at the i-th hashed level — exactly the
// { index, siblings } that LeanIMT.generateProof returns. The root is the
// node after `length` hashes; a `length` above MAX_DEPTH selects no node
// and gives 0, which no acceptable root ever is (the callers' trees start
// non-empty), so such a proof proves nothing.
//
// Per level: 240 constraints for Poseidon(2), 2 for the depth selector,
// 1 to select the node, 1 to order the pair.
template LeanImtRoot(MAX_DEPTH) {
    signal input leaf;
    signal input length;
    signal input index;
    signal input siblings[MAX_DEPTH];
    signal output root;

    // index < 2^MAX_DEPTH; its bits order each pair.
    signal bits[MAX_DEPTH] <== Num2Bits(MAX_DEPTH)(index);

    signal nodes[MAX_DEPTH + 1];
    signal left[MAX_DEPTH];
    signal right[MAX_DEPTH];
    signal picked[MAX_DEPTH + 1];
    signal at_length[MAX_DEPTH + 1];
    nodes[0] <== leaf;
    var sum = 0;
    for (var i = 0; i < MAX_DEPTH; i++) {
        // The node after i hashes is the root when length = i.
        at_length[i] <== IsEqual()([length, i]);
        picked[i] <== at_length[i] * nodes[i];
        sum += picked[i];
        // bit 0: (node, sibling); bit 1: (sibling, node).
        left[i] <== nodes[i] + bits[i] * (siblings[i] - nodes[i]);
        right[i] <== nodes[i] + siblings[i] - left[i];
        nodes[i + 1] <== Poseidon(2)([left[i], right[i]]);
    }
    at_length[MAX_DEPTH] <== IsEqual()([length, MAX_DEPTH]);
    picked[MAX_DEPTH] <== at_length[MAX_DEPTH] * nodes[MAX_DEPTH];
    root <== sum + picked[MAX_DEPTH];
}
