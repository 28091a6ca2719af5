pragma circom 2.1.6;

include "circomlib/circuits/poseidon.circom";

// AgentIdentity — proves knowledge of the secret behind a registered identity
// commitment, for one challenge and one intended action.
//
// Statement (all four public, rebuilt by the verifying server, never sent by
// the caller):
//   identity_commitment = Poseidon(secret)
//   nonce               the challenge nonce (248 random bits, below r)
//   action_hash         H_action(action)            — see docs/protocol.md
//   context_hash        H_context(JCS(context))     — see docs/protocol.md
//
// Groth16 binds a proof to every public input whose verification-key point
// is non-zero, so each input must appear in a constraint. The commitment is
// constrained by the Poseidon equality; the three intent inputs are
// constrained by squares, the pattern Semaphore uses for its message and
// scope. Without them the optimiser leaves the inputs unconstrained and a
// proof made for one action would verify for every action.
template AgentIdentity() {
    // Private
    signal input secret;

    // Public
    signal input identity_commitment;
    signal input nonce;
    signal input action_hash;
    signal input context_hash;

    // Knowledge of the secret behind the commitment.
    component commit = Poseidon(1);
    commit.inputs[0] <== secret;
    identity_commitment === commit.out;

    // Intent binding: one quadratic constraint per intent input.
    signal nonce_square;
    signal action_square;
    signal context_square;
    nonce_square <== nonce * nonce;
    action_square <== action_hash * action_hash;
    context_square <== context_hash * context_hash;
}

component main {public [identity_commitment, nonce, action_hash, context_hash]} = AgentIdentity();
