pragma circom 2.1.6;

include "circomlib/circuits/poseidon.circom";
include "circomlib/circuits/bitify.circom";
include "circomlib/circuits/comparators.circom";
include "budget/lean_imt_root.circom";

// BudgetSpend — one purchase from a member's budget, in zero knowledge
// (docs/protocol.md, "Budgets across merchants": the encodings, why it is
// sound, what each party learns).
//
// The member proves that it is enrolled in the group (its leaf, which
// commits to its identity and terms, is in the enrolment tree under
// root_enrolment); that its terms allow this amount, currency, payee and
// minute; and that what it has spent in this period plus this amount is
// within its budget: either this is the chain's first spend (the
// period-start nullifier) or it opens a note of the chain in the notes tree
// under root_notes (the note's nullifier). It reveals the nullifier and the
// commitment to its new running total, and nothing else: the leaf, the
// terms, the kind of period, first spend or not, spent-so-far.
//
//   idc      = H1(secret)
//   leaf     = H3(idc, H4(TA, TM, H8(payees), mandate), salt)
//   TA       = max + 2^64·budget + 2^128·min
//   TM       = currency + 2^24·kind + 2^26·once + 2^27·any + 2^28·t_exp
//   chain    = H5(1, group, currency, kind·2^40 + P, life ? mandate : 0)
//   note     = H5(2, secret, chain, spent, rho)
//   nullifier = first ? H3(3, secret, chain) : H3(4, secret, rho)
//   commitment = H5(2, secret, chain, spent + amount, rho_next)
//
// Public signals in snarkjs order: nullifier, commitment (outputs), then the
// inputs in the order declared below. The service sets every input but the
// two roots, which it checks are acceptable. Every public input appears in a
// constraint (ctx by its square, the pattern of the agent circuit and
// Semaphore), so each has a non-zero verification-key point.
template BudgetSpend(ENROL_DEPTH, NOTES_DEPTH) {
    // Public inputs (this order is the public signals' order).
    signal input group;
    signal input root_enrolment;
    signal input root_notes;
    signal input p_day;
    signal input p_week;
    signal input p_month;
    signal input t_min;
    signal input amount;
    signal input currency;
    signal input payee;
    signal input ctx;

    // Private: the member and its terms.
    signal input secret;
    signal input salt;
    signal input terms_amounts;
    signal input terms_meta;
    signal input payees[8];
    signal input mandate;
    signal input enrol_length;
    signal input enrol_index;
    signal input enrol_siblings[ENROL_DEPTH];
    // Private: the note spent (first = 1: none, the chain starts).
    signal input first;
    signal input spent;
    signal input rho;
    signal input notes_length;
    signal input notes_index;
    signal input notes_siblings[NOTES_DEPTH];
    signal input rho_next;

    signal output nullifier;
    signal output commitment;

    // --- Enrolment: the leaf under root_enrolment.
    signal idc <== Poseidon(1)([secret]);
    signal payees_hash <== Poseidon(8)(payees);
    signal terms_hash <== Poseidon(4)([terms_amounts, terms_meta, payees_hash, mandate]);
    signal leaf <== Poseidon(3)([idc, terms_hash, salt]);
    signal enrol_root <== LeanImtRoot(ENROL_DEPTH)(leaf, enrol_length, enrol_index, enrol_siblings);
    root_enrolment === enrol_root;

    // --- The terms, unpacked (strict decompositions: one packing per value).
    signal ta[192] <== Num2Bits(192)(terms_amounts);
    signal tm[68] <== Num2Bits(68)(terms_meta);
    var max = 0;
    var budget = 0;
    var min = 0;
    for (var i = 0; i < 64; i++) {
        max += ta[i] * (1 << i);
        budget += ta[64 + i] * (1 << i);
        min += ta[128 + i] * (1 << i);
    }
    var terms_currency = 0;
    for (var i = 0; i < 24; i++) terms_currency += tm[i] * (1 << i);
    signal k0 <== tm[24];
    signal k1 <== tm[25];
    signal once <== tm[26];
    signal any <== tm[27];
    var t_exp = 0;
    for (var i = 0; i < 40; i++) t_exp += tm[28 + i] * (1 << i);

    // --- Currency and expiry.
    terms_currency === currency;
    signal unexpired <== LessThan(40)([t_min, t_exp]);
    unexpired === 1;

    // --- The chain: the period the member's kind counts in.
    signal is_month <== k0 * k1;
    signal is_day <== k0 - is_month;
    signal is_week <== k1 - is_month;
    signal life <== 1 - k0 - k1 + is_month;
    signal day_part <== is_day * p_day;
    signal week_part <== is_week * p_week;
    signal month_part <== is_month * p_month;
    signal life_mandate <== life * mandate;
    // A one-time mandate has no period.
    once * (1 - life) === 0;
    signal chain <== Poseidon(5)([1, group, currency, (k0 + 2 * k1) * (1 << 40) + day_part + week_part + month_part, life_mandate]);

    // --- The note spent, or the chain's start.
    first * (first - 1) === 0;
    once * (1 - first) === 0;
    first * spent === 0;
    signal spent_bits[64] <== Num2Bits(64)(spent);
    signal note <== Poseidon(5)([2, secret, chain, spent, rho]);
    signal notes_root <== LeanImtRoot(NOTES_DEPTH)(note, notes_length, notes_index, notes_siblings);
    (1 - first) * (notes_root - root_notes) === 0;
    signal start_nullifier <== Poseidon(3)([3, secret, chain]);
    signal note_nullifier <== Poseidon(3)([4, secret, rho]);
    nullifier <== note_nullifier + first * (start_nullifier - note_nullifier);

    // --- The amount: 1 ≤ amount < 2^64, min ≤ amount ≤ max, spent + amount ≤ budget.
    signal amount_bits[64] <== Num2Bits(64)(amount);
    signal amount_zero <== IsZero()(amount);
    amount_zero === 0;
    signal above_min <== LessEqThan(64)([min, amount]);
    above_min === 1;
    signal below_max <== LessEqThan(64)([amount, max]);
    below_max === 1;
    signal total <== spent + amount;
    signal within_budget <== LessEqThan(65)([total, budget]);
    within_budget === 1;

    // --- The payee: any, or one of the eight slots (the service never issues payee 0).
    signal product[8];
    product[0] <== payee - payees[0];
    for (var i = 1; i < 8; i++) product[i] <== product[i - 1] * (payee - payees[i]);
    (1 - any) * product[7] === 0;

    // --- The new note.
    commitment <== Poseidon(5)([2, secret, chain, total, rho_next]);

    // --- ctx appears in no other constraint.
    signal ctx_square <== ctx * ctx;
}

component main {public [group, root_enrolment, root_notes, p_day, p_week, p_month, t_min, amount, currency, payee, ctx]} = BudgetSpend(20, 32);
