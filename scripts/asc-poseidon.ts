// Generates assembly/poseidon-constants.ts: the round constants and matrices
// of Poseidon over two inputs (t = 3, 8 full and 57 partial rounds, x^5) as
// assembly/poseidon.ts uses them, in fr.ts's Montgomery form. Run:
//
//   bun scripts/asc-poseidon.ts            (--check: compare with the committed file)
//
// The source is circomlibjs's shipped constants: poseidon_constants_opt.js,
// the form with sparse partial rounds (its poseidon_opt.js). Before emitting
// anything this script checks that
//   - circomlibjs's plain constants (poseidon_constants.js, C and M for t = 3)
//     are the ones poseidon-lite ships for poseidon2 (the hash Semaphore's
//     group and identity packages use), and
//   - the optimised constants give the same hash as the plain permutation
//     (BigInt arithmetic here, both forms) and as poseidon-lite itself,
// so a wrong table cannot be written.

import optConstants from "../node_modules/circomlibjs/src/poseidon_constants_opt.js";
import plainConstants from "../node_modules/circomlibjs/src/poseidon_constants.js";
import { poseidon2 } from "poseidon-lite/poseidon2";
import liteConstants from "../node_modules/poseidon-lite/constants/2.js";
import { emit, finish } from "./asc-emit.ts";
import { LIMB_BITS, LIMBS, R, limbs } from "./asc-constants.ts";

const T = 3;
const ROUNDS_F = 8;
const ROUNDS_P = 57;
const MONT_R = 1n << (LIMB_BITS * BigInt(LIMBS)); // fr.ts's R = 2^261

type Tables = { C: string[][]; M: string[][][]; P: string[][][]; S: string[][] };
const opt = optConstants as unknown as Tables;
const plain = plainConstants as unknown as { C: string[][]; M: string[][][] };
const big = (s: string) => BigInt(s);
const C = opt.C[T - 2]!.map(big);
const M = opt.M[T - 2]!.map((row) => row.map(big));
const P = opt.P[T - 2]!.map((row) => row.map(big));
const S = opt.S[T - 2]!.map(big);
const PLAIN_C = plain.C[T - 2]!.map(big);
const PLAIN_M = plain.M[T - 2]!.map((row) => row.map(big));

if (C.length !== ROUNDS_F * T + ROUNDS_P) throw new Error(`C: ${C.length} constants`);
if (S.length !== (2 * T - 1) * ROUNDS_P) throw new Error(`S: ${S.length} constants`);
if (PLAIN_C.length !== (ROUNDS_F + ROUNDS_P) * T) throw new Error(`plain C: ${PLAIN_C.length} constants`);
for (const x of [...C, ...S, ...M.flat(), ...P.flat(), ...PLAIN_C, ...PLAIN_M.flat()]) if (x < 0n || x >= R) throw new Error("a constant ≥ r");

// poseidon-lite's own table for t = 3 (base64 big-endian integers).
const unBase64 = (s: string) => BigInt(`0x${Buffer.from(s, "base64").toString("hex") || "0"}`);
const lite = (liteConstants as unknown as { default?: unknown }).default ?? liteConstants;
const liteC = (lite as { C: string[] }).C.map(unBase64);
const liteM = (lite as { M: string[][] }).M.map((row) => row.map(unBase64));
if (liteC.length !== PLAIN_C.length || liteC.some((x, i) => x !== PLAIN_C[i])) throw new Error("poseidon-lite's C differs from circomlibjs's");
if (liteM.flat().some((x, i) => x !== PLAIN_M.flat()[i])) throw new Error("poseidon-lite's M differs from circomlibjs's");

const mod = (a: bigint) => ((a % R) + R) % R;
const pow5 = (x: bigint) => mod(x * x * x * x * x);
/** new[i] = Σ_j m[j][i]·s[j] (circomlibjs's orientation). */
const mixT = (s: bigint[], m: bigint[][]) => s.map((_, i) => mod(s.reduce((acc, a, j) => acc + m[j]![i]! * a, 0n)));

function plainHash(a: bigint, b: bigint): bigint {
  let s = [0n, a, b];
  for (let r = 0; r < ROUNDS_F + ROUNDS_P; r++) {
    s = s.map((x, i) => mod(x + PLAIN_C[r * T + i]!));
    const full = r < ROUNDS_F / 2 || r >= ROUNDS_F / 2 + ROUNDS_P;
    s = s.map((x, i) => (full || i === 0 ? pow5(x) : x));
    s = s.map((_, i) => mod(s.reduce((acc, x, j) => acc + PLAIN_M[i]![j]! * x, 0n)));
  }
  return s[0]!;
}

/** The sparse-partial-round schedule assembly/poseidon.ts follows (circomlibjs's poseidon_opt.js). */
function optHash(a: bigint, b: bigint): bigint {
  let s = [0n, a, b].map((x, i) => mod(x + C[i]!));
  const half = ROUNDS_F / 2;
  for (let r = 0; r < half - 1; r++) {
    s = s.map((x, i) => mod(pow5(x) + C[(r + 1) * T + i]!));
    s = mixT(s, M);
  }
  s = s.map((x, i) => mod(pow5(x) + C[half * T + i]!));
  s = mixT(s, P);
  for (let r = 0; r < ROUNDS_P; r++) {
    s[0] = mod(pow5(s[0]!) + C[(half + 1) * T + r]!);
    const w = (2 * T - 1) * r;
    const s0 = mod(S[w]! * s[0]! + S[w + 1]! * s[1]! + S[w + 2]! * s[2]!);
    s[1] = mod(s[1]! + s[0]! * S[w + T]!);
    s[2] = mod(s[2]! + s[0]! * S[w + T + 1]!);
    s[0] = s0;
  }
  for (let r = 0; r < half - 1; r++) {
    s = s.map((x, i) => mod(pow5(x) + C[(half + 1) * T + ROUNDS_P + r * T + i]!));
    s = mixT(s, M);
  }
  s = mixT(s.map(pow5), M);
  return s[0]!;
}

let seed = 0x2545f4914f6cdd1dn;
const next = () => {
  seed = (seed * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
  return seed;
};
const sample = () => mod((next() << 192n) | (next() << 128n) | (next() << 64n) | next());
for (const [a, b] of [
  [0n, 0n],
  [1n, 2n],
  [R - 1n, R - 1n],
  [sample(), sample()],
  [sample(), sample()],
] as [bigint, bigint][]) {
  const want = poseidon2([a, b]);
  if (plainHash(a, b) !== want) throw new Error(`plain permutation ≠ poseidon-lite at (${a}, ${b})`);
  if (optHash(a, b) !== want) throw new Error(`optimised permutation ≠ poseidon-lite at (${a}, ${b})`);
}

const frData = (xs: bigint[]) => `memory.data<u32>([${xs.flatMap((x) => limbs(mod(x * MONT_R))).join(", ")}])`;
/** Row-major over m[j][i] as the mix reads it: entry (i, j) multiplies s[j] into new s[i]. */
const transposed = (m: bigint[][]) => m[0]!.map((_, i) => m.map((row) => row[i]!));

const out = `// generated by scripts/asc-poseidon.ts, do not edit (run: bun scripts/asc-poseidon.ts)
//
// Poseidon over two inputs (t = ${T}, ${ROUNDS_F} full and ${ROUNDS_P} partial rounds, x^5) in the
// form with sparse partial rounds, from circomlibjs's poseidon_constants_opt.js
// (checked by the generator against circomlibjs's plain constants, poseidon-lite's,
// and poseidon-lite's hashes). Every element is Montgomery form (fr.ts), 36 bytes.

export const POSEIDON_T: i32 = ${T};
export const POSEIDON_ROUNDS_F: i32 = ${ROUNDS_F};
export const POSEIDON_ROUNDS_P: i32 = ${ROUNDS_P};
/** Round constants, ${C.length}: t for the first full rounds, then one per partial round, then t per remaining full round. */
export const POSEIDON_C: usize = ${frData(C)};
/** The MDS matrix of the full rounds, row i = the factors of s[0..t) in new s[i]. */
export const POSEIDON_M: usize = ${frData(transposed(M).flat())};
/** The matrix entering the partial rounds (same orientation). */
export const POSEIDON_P: usize = ${frData(transposed(P).flat())};
/** Per partial round, ${2 * T - 1} factors: t for the new s[0], then t − 1 for s[0]'s share in s[1..t). */
export const POSEIDON_S: usize = ${frData(S)};
`;

if (import.meta.main) finish([emit("assembly/poseidon-constants.ts", out)], "assembly/poseidon-constants.ts");
