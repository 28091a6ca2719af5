// The wide build's Poseidon pieces (method and bounds in ./core.ts).

import { R } from "../asc-constants.ts";
import { addWords, Fn, wordRounds, ZERO, k, mul, mulAdd, pack, redcStore, sqr, words } from "./core.ts";

const FR_BYTES = 36;

/**
 * out = a0·b0 + a1·b1 + a2·b2 mod r (poseidon.ts dot3: a row of Poseidon's
 * matrix times the state): the three products summed unreduced (T < 3·2^512,
 * below the 33r·2^256 redc allows), one reduction instead of three.
 */
export function dot3(name: string): string {
  const f = new Fn();
  pack(f, "a", 0, "x", R);
  pack(f, "b", 0, "y", R);
  mul(f, "x", "y", "t");
  for (let j = 1; j < 3; j++) {
    pack(f, "a", j * FR_BYTES, "x", R);
    pack(f, "b", j * FR_BYTES, "y", R);
    mulAdd(f, "x", "y", "t");
  }
  redcStore(f, "t", R, "out", 0);
  return f.text(name, ["out", "a", "b"]);
}

/**
 * poseidon.ts poseidonLevel on the one-lane path: io holds n 32-byte
 * little-endian nodes; POSEIDON_NOT_CANONICAL (−1) when one is ≥ r, else
 * parent i = hashPair(node 2i, node 2i + 1) over node i (never a node still
 * to be read), a lone last node copied up, and the parent count returned.
 */
export function poseidonLevel(name: string): string {
  const f = new Fn();
  const rw = words(R);
  // x ≥ r exactly when x − r does not borrow (h = 0).
  for (let i = 0; i < 4; i++) f.set(`x${i}`, `(i64.load offset=${8 * i} (local.get $p))`);
  f.sub128("d", "h", f.get("x0"), ZERO, k(rw[0]!), ZERO);
  for (let i = 1; i < 4; i++) {
    f.sub128("d", "g", f.get(`x${i}`), ZERO, k(rw[i]!), ZERO);
    f.add128("d", "h", f.get("d"), f.get("g"), f.get("h"), f.get("h"));
  }
  const decl = [...f.locals].map((l) => `  (local $${l} i64)`).join("\n");
  const io = "(global.get $assembly/io/ioBase)";
  return ` (func ${name} (param $n i32) (result i32)
  (local $i i32) (local $p i32) (local $pairs i32) (local $words i32)
${decl}
  (block $checked
   (loop $check
    (br_if $checked (i32.ge_u (local.get $i) (local.get $n)))
    (local.set $p (i32.add ${io} (i32.shl (local.get $i) (i32.const 5))))
${f.lines.map((l) => `   ${l}`).join("\n")}
    (if (i64.eqz (local.get $h)) (then (return (i32.const -1))))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (br $check)))
  (local.set $words (call $assembly/poseidon/wordTable))
  (local.set $pairs (i32.shr_u (local.get $n) (i32.const 1)))
  (local.set $i (i32.const 0))
  (block $hashed
   (loop $hash
    (br_if $hashed (i32.ge_u (local.get $i) (local.get $pairs)))
    (call $assembly/poseidon/hashPair
     (i32.add ${io} (i32.shl (local.get $i) (i32.const 5)))
     (i32.add ${io} (i32.shl (local.get $i) (i32.const 6)))
     (i32.add ${io} (i32.add (i32.shl (local.get $i) (i32.const 6)) (i32.const 32)))
     (local.get $words))
    (local.set $i (i32.add (local.get $i) (i32.const 1)))
    (br $hash)))
  (if (i32.and (local.get $n) (i32.const 1))
   (then
    (memory.copy
     (i32.add ${io} (i32.shl (local.get $pairs) (i32.const 5)))
     (i32.add ${io} (i32.shl (i32.sub (local.get $n) (i32.const 1)) (i32.const 5)))
     (i32.const 32))))
  (i32.add (local.get $pairs) (i32.and (local.get $n) (i32.const 1)))
 )
`;
}

// --- the whole permutation on words (hashPair) --------------------------------------
//
// hashPair(dst, a, b, words) runs circomlib's Poseidon (t = 3) with the state
// in twelve i64 locals for its whole life: no element is packed or unpacked
// inside. The constants are read as words from the table poseidon.ts's
// wordTable() builds (C, three zero elements, M, P, S; 32 bytes an element).
//
// Montgomery form here is R = 2^256, not fr.ts's 2^261: the state never
// leaves these locals, so the reduction (redc256) is four word rounds with no
// fifth 5-bit round and no shift; the table holds the constants in that form.
//
// Bounds. Every state element and every constant is < r (redc256's output and
// addMod's are fully reduced; the table's elements come out of frMul, fully
// reduced). redc256 gives U = (T + M·r)/2^256 < T/2^256 + r with M < 2^256,
// so U < 2r, and one conditional subtraction leaves it < r, whenever
// T < r·2^256. Every T here is at most 3r²:
//   - a product x·y < r² and a matrix row Σ m_ij·s_j < 3r²: the row's three
//     products are summed unreduced and reduced once; 3r² < r·2^256 because
//     3r < 2^256 (r < 0.19·2^256); 3r² < 2^510 also keeps the ninth word 0;
//   - the S-box x⁵ = x·(x²)²: two squarings and a product, each reduced
//     (x, x², x⁴ < r);
//   - addMod: x + y < 2r < 2^255 fits four words, one conditional subtraction
//     of r leaves it < r;
//   - in: x < r (both callers refuse larger inputs) times 2^512 mod r is < r²,
//     redc256 gives x·2^256 mod r; out: redc256 of the state's first word set
//     (T < r) gives its plain value, fully reduced.

const E = 32; // bytes per element of the word table
const ROUNDS_F = 8;
const ROUNDS_P = 57;
const T_C = 0;
const T_M = (3 * ROUNDS_F + ROUNDS_P + 3) * E;
const T_P = T_M + 9 * E;
const T_S = T_P + 9 * E;
const STATE = ["sa", "sb", "sc"];

/**
 * w0..w3 = T·2^−256 mod r, fully reduced, for T < r·2^256 (words T0..T7; T8,
 * always 0 below 2^512, is ignored): four word rounds m = t_i·µ mod 2^64,
 * T += m·r·2^(64i), leave U = T4..T7 < T/2^256 + r < 2r, then one
 * conditional subtraction of r. lazy: U itself (< T/2^256 + r, congruent).
 */
function redc256(f: Fn, T: string, q: bigint, lazy = false): void {
  const qw = words(q);
  // The carries stop at T7: nothing leaves it (T + m·r·2^(64i) < 2^512).
  wordRounds(f, T, q, false);
  if (lazy) {
    for (let i = 0; i < 4; i++) f.set(`w${i}`, f.get(`${T}${4 + i}`));
    return;
  }
  f.sub128("d0", "h", f.get(`${T}4`), ZERO, k(qw[0]!), ZERO);
  for (let i = 1; i < 4; i++) {
    f.sub128(`d${i}`, "g", f.get(`${T}${4 + i}`), ZERO, k(qw[i]!), ZERO);
    f.add128(`d${i}`, "h", f.get(`d${i}`), f.get("g"), f.get("h"), f.get("h"));
  }
  for (let i = 0; i < 4; i++) f.set(`w${i}`, `(select ${f.get(`d${i}`)} ${f.get(`${T}${4 + i}`)} (i64.eqz ${f.get("h")}))`);
}

/** x0..x3 = the element at local ptr + offset. */
function loadWords(f: Fn, ptr: string, offset: number, x: string): void {
  for (let i = 0; i < 4; i++) f.set(`${x}${i}`, `(i64.load offset=${offset + 8 * i} (local.get $${ptr}))`);
}
function copy(f: Fn, to: string, from: string): void {
  for (let i = 0; i < 4; i++) f.set(`${to}${i}`, f.get(`${from}${i}`));
}
/** x = x + y mod r (x, y < r, words). */
function addMod(f: Fn, x: string, y: string): void {
  const rw = words(R);
  addWords(
    f,
    "u",
    (i) => f.get(`${x}${i}`),
    (i) => f.get(`${y}${i}`),
  );
  f.sub128("d0", "h", f.get("u0"), ZERO, k(rw[0]!), ZERO);
  for (let i = 1; i < 4; i++) {
    f.sub128(`d${i}`, "g", f.get(`u${i}`), ZERO, k(rw[i]!), ZERO);
    f.add128(`d${i}`, "h", f.get(`d${i}`), f.get("g"), f.get("h"), f.get("h"));
  }
  for (let i = 0; i < 4; i++) f.set(`${x}${i}`, `(select ${f.get(`d${i}`)} ${f.get(`u${i}`)} (i64.eqz ${f.get("h")}))`);
}
/**
 * x = x⁵ (x < r): x² and x⁴ squarings, then x·x⁴. x² and x⁴ are left lazy
 * (redc256's U < T/2^256 + r, no subtraction): x² < r² gives U < 1.19r;
 * x⁴ < 1.42r² gives U < 1.27r; x·x⁴ < 1.27r² < r·2^256, reduced fully.
 */
function pow5(f: Fn, x: string, lazyOut = false): void {
  sqr(f, x, "t");
  redc256(f, "t", R, true);
  copy(f, "q", "w");
  sqr(f, "q", "t");
  redc256(f, "t", R, true);
  copy(f, "q", "w");
  mul(f, x, "q", "t");
  redc256(f, "t", R, lazyOut);
  copy(f, x, "w");
}
/** to = Σ_j (element at ptr + offset + 32j)·state_j, one reduction. */
function row(f: Fn, ptr: string, offset: number, to: string): void {
  for (let j = 0; j < 3; j++) {
    loadWords(f, ptr, offset + j * E, "y");
    (j === 0 ? mul : mulAdd)(f, "y", STATE[j]!, "t");
  }
  redc256(f, "t", R);
  copy(f, to, "w");
}
function indent(lines: string[], n: number): string {
  return lines.map((l) => `${" ".repeat(n)}${l}`).join("\n");
}

/** The wide build's hashPair: dst ← H(a, b), 32-byte little-endian words (a, b < r; dst may be a or b). */
export function hashPair(name: string): string {
  // In: a, b to Montgomery form (x·2^512 · 2^−256); the state starts (0, a, b) + C[0..3).
  const pre = new Fn();
  const k512 = words((1n << 512n) % R);
  for (const [x, src] of [
    ["sb", "a"],
    ["sc", "b"],
  ] as const) {
    loadWords(pre, src, 0, "x");
    for (let i = 0; i < 4; i++) pre.set(`y${i}`, k(k512[i]!));
    mul(pre, "x", "y", "t");
    redc256(pre, "t", R);
    copy(pre, x, "w");
  }
  for (let i = 0; i < 4; i++) pre.set(`sa${i}`, ZERO);
  for (let i = 0; i < 3; i++) {
    loadWords(pre, "words", T_C + i * E, "y");
    addMod(pre, STATE[i]!, "y");
  }
  // A full round: the S-box on each element and its constant (local cp), then the matrix at local mp.
  const full = new Fn();
  for (let i = 0; i < 3; i++) {
    pow5(full, STATE[i]!);
    loadWords(full, "cp", i * E, "y");
    addMod(full, STATE[i]!, "y");
  }
  for (let i = 0; i < 3; i++) row(full, "mp", 3 * i * E, `n${"abc"[i]}`);
  for (let i = 0; i < 3; i++) copy(full, STATE[i]!, `n${"abc"[i]}`);
  // A partial round (constant at cp, sparse matrix S at sp: w0..w4):
  // s0 ← s0⁵ + c; (s0, s1, s2) ← (w0·s0 + w1·s1 + w2·s2, s1 + w3·s0, s2 + w4·s0).
  const part = new Fn();
  // s0⁵ left lazy (x·x⁴ < 1.27r² gives U < 1.24r) and c added without a
  // subtraction: s0 < 2.24r < 2^256. Then the row w0·s0 + w1·s1 + w2·s2 <
  // (2.24 + 1 + 1)r² = 4.24r² < r·2^256 (4.24r < 0.81·2^256) and each update
  // w·s0 < 2.24r² are still within redc256's bound, and both are reduced
  // fully, so s0, s1, s2 < r again at the round's end.
  pow5(part, "sa", true);
  loadWords(part, "cp", 0, "y");
  addWords(
    part,
    "sa",
    (i) => part.get(`sa${i}`),
    (i) => part.get(`y${i}`),
  );
  row(part, "sp", 0, "na");
  for (const [j, x] of [
    [3, "sb"],
    [4, "sc"],
  ] as const) {
    loadWords(part, "sp", j * E, "y");
    mul(part, "y", "sa", "t");
    redc256(part, "t", R);
    addMod(part, x, "w");
  }
  copy(part, "sa", "na");
  // Out: the plain value of the state's first element.
  const post = new Fn();
  for (let i = 0; i < 4; i++) post.set(`t${i}`, post.get(`sa${i}`));
  for (let i = 4; i < 9; i++) post.set(`t${i}`, ZERO);
  redc256(post, "t", R);
  for (let i = 0; i < 4; i++) post.line(`(i64.store offset=${8 * i} (local.get $dst) ${post.get(`w${i}`)})`);

  const locals = new Set([...pre.locals, ...full.locals, ...part.locals, ...post.locals]);
  const decl = [...locals].map((l) => `  (local $${l} i64)`).join("\n");
  return ` (func ${name} (param $dst i32) (param $a i32) (param $b i32) (param $words i32)
  (local $cp i32) (local $mp i32) (local $sp i32) (local $round i32) (local $j i32)
${decl}
${indent(pre.lines, 0)}
  (local.set $cp (i32.add (local.get $words) (i32.const ${T_C + 3 * E})))
  (loop $full
   ;; rounds 0–2 and 4–7 mix with M, round 3 with P
   (local.set $mp (i32.add (local.get $words) (select (i32.const ${T_P}) (i32.const ${T_M}) (i32.eq (local.get $round) (i32.const 3)))))
${indent(full.lines, 2)}
   (local.set $cp (i32.add (local.get $cp) (i32.const ${3 * E})))
   (local.set $round (i32.add (local.get $round) (i32.const 1)))
   (if (i32.eq (local.get $round) (i32.const ${ROUNDS_F / 2}))
    (then
     (local.set $sp (i32.add (local.get $words) (i32.const ${T_S})))
     (local.set $j (i32.const 0))
     (loop $partial
${indent(part.lines, 5)}
      (local.set $cp (i32.add (local.get $cp) (i32.const ${E})))
      (local.set $sp (i32.add (local.get $sp) (i32.const ${5 * E})))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br_if $partial (i32.lt_u (local.get $j) (i32.const ${ROUNDS_P}))))))
   (br_if $full (i32.lt_u (local.get $round) (i32.const ${ROUNDS_F}))))
${indent(post.lines, 0)}
 )
`;
}
