// Generates assembly/constants.ts: every number the AssemblyScript verifier
// needs that is derived from the curve (modulus limbs, Montgomery constants,
// Frobenius coefficients, the ate loop in NAF form). Run:
//
//   bun scripts/asc-constants.ts
//
// The derivations are plain BigInt arithmetic so they can be audited here
// rather than trusted as magic numbers in the wasm sources.

import { emit, finish } from "./asc-emit.ts";

// --- BN254 (alt_bn128) parameters -------------------------------------------
export const U = 4965661367192848881n; // BN seed u (positive for alt_bn128)
export const P = 36n * U ** 4n + 36n * U ** 3n + 24n * U ** 2n + 6n * U + 1n;
export const R = 36n * U ** 4n + 36n * U ** 3n + 18n * U ** 2n + 6n * U + 1n;
if (P !== 21888242871839275222246405745257275088696311157297823662689037894645226208583n) throw new Error("p");
if (R !== 21888242871839275222246405745257275088548364400416034343698204186575808495617n) throw new Error("r");

export const LIMB_BITS = 29n;
export const LIMBS = 9;
const MONT_R = 1n << (LIMB_BITS * BigInt(LIMBS)); // R = 2^261

const mod = (a: bigint, m: bigint) => ((a % m) + m) % m;
const powMod = (b: bigint, e: bigint, m: bigint) => {
  let r = 1n;
  b = mod(b, m);
  while (e > 0n) {
    if (e & 1n) r = (r * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return r;
};
const inv = (a: bigint, m: bigint) => powMod(a, m - 2n, m);

// Fp2 = Fp[u]/(u² + 1) as [c0, c1]
type F2 = [bigint, bigint];
const f2mul = (a: F2, b: F2): F2 => [mod(a[0] * b[0] - a[1] * b[1], P), mod(a[0] * b[1] + a[1] * b[0], P)];
const f2pow = (a: F2, e: bigint): F2 => {
  let r: F2 = [1n, 0n];
  while (e > 0n) {
    if (e & 1n) r = f2mul(r, a);
    a = f2mul(a, a);
    e >>= 1n;
  }
  return r;
};
const f2inv = (a: F2): F2 => {
  const t = inv(mod(a[0] * a[0] + a[1] * a[1], P), P);
  return [mod(a[0] * t, P), mod(-a[1] * t, P)];
};
const XI: F2 = [9n, 1n]; // ξ = 9 + u, the sextic non-residue

export const limbs = (x: bigint): bigint[] => {
  const out: bigint[] = [];
  for (let i = 0; i < LIMBS; i++) out.push((x >> (LIMB_BITS * BigInt(i))) & ((1n << LIMB_BITS) - 1n));
  return out;
};
const mont = (x: bigint) => mod(x * MONT_R, P);
const fpData = (xs: bigint[]) => `memory.data<u32>([${xs.flatMap((x) => limbs(mont(x))).join(", ")}])`;
const words = (x: bigint) => [0, 1, 2, 3].map((i) => (x >> (64n * BigInt(i))) & ((1n << 64n) - 1n));

// Montgomery: µ = −p⁻¹ mod 2^29
const LIMB_MOD = 1n << LIMB_BITS;
// Inverse modulo a power of two by Newton iteration (Fermat does not apply).
const invPow2 = (a: bigint, k: bigint) => {
  let x = 1n;
  for (let i = 0; i < 8; i++) x = mod(x * (2n - a * x), 1n << k);
  return x;
};
export const MU = mod(-invPow2(P, LIMB_BITS), LIMB_MOD);
if (mod(P * MU + 1n, LIMB_MOD) !== 0n) throw new Error("mu");

// Frobenius coefficients γ_{k,i} = ξ^{i(p^k − 1)/6}, i = 1..5 (Fp12 = Fp2[w]/(w⁶ − ξ)).
const gamma = (k: number) => [1, 2, 3, 4, 5].map((i) => f2pow(XI, (BigInt(i) * (P ** BigInt(k) - 1n)) / 6n));
const G1 = gamma(1);
const G2 = gamma(2);
const G3 = gamma(3);
for (const g of G2) if (g[1] !== 0n) throw new Error("γ2 must lie in Fp");

// Twist coefficient b' = 3/ξ (D-type twist E': y² = x³ + 3/ξ).
const TWIST_B = f2mul([3n, 0n], f2inv(XI));

// NAF of 6u + 2, least significant digit first.
const naf = (k: bigint): number[] => {
  const out: number[] = [];
  while (k > 0n) {
    if (k & 1n) {
      const d = 2 - Number(k & 3n);
      out.push(d);
      k -= BigInt(d);
    } else out.push(0);
    k >>= 1n;
  }
  return out;
};
const ATE = naf(6n * U + 2n);
let ateValue = 0n;
ATE.forEach((d, i) => (ateValue += BigInt(d) << BigInt(i)));
if (ateValue !== 6n * U + 2n) throw new Error("naf");
const ATE_LINES = ATE.length - 1 + ATE.slice(0, -1).filter((d) => d !== 0).length + 2;

// G2 membership (El Housni–Guillevic–Piellard 2022, eprint 2022/352, §3, §5):
// ψ acts on G2 as [p], so Q ∈ G2 ⇒ [u+1]Q + ψ([u]Q) + ψ²([u]Q) = ψ³([2u]Q).
if (mod(U + 1n + U * P + U * P * P - 2n * U * P ** 3n, R) !== 0n) throw new Error("ψ relation");

// Width-4 NAF of u (digits 0, ±1, ±3, ±5, ±7, at most one non-zero in any 4
// consecutive; Solinas 2000 / Möller 2001): 14 non-zero digits against the
// NAF's 24, so fp12ExpByU needs 13 multiplications plus 3 for the odd powers
// instead of 23. Least significant first; the top digit is positive.
const WNAF_WIDTH = 4n;
const wnaf = (k: bigint): number[] => {
  const out: number[] = [];
  const w = 1n << WNAF_WIDTH;
  while (k > 0n) {
    if (k & 1n) {
      let d = k % w;
      if (d >= w / 2n) d -= w;
      out.push(Number(d));
      k -= d;
    } else out.push(0);
    k >>= 1n;
  }
  return out;
};
const U_WNAF = wnaf(U);
{
  let v = 0n;
  U_WNAF.forEach((d, i) => (v += BigInt(d) << BigInt(i)));
  if (v !== U || U_WNAF.at(-1)! <= 0) throw new Error("wnaf");
}

// GLV endomorphism of G1 (Gallant, Lambert, Vanstone 2001, "Faster point
// multiplication on elliptic curves with efficient endomorphisms", §4):
// φ(x, y) = (βx, y) with β a primitive cube root of unity in Fp acts on G1
// as [λ], λ a cube root of unity mod r. Of the two β and two λ, the pair is
// fixed by checking [λ]G = φ(G) on the generator G = (1, 2).
const cubeRoot = (m: bigint): bigint => {
  for (let g = 2n; ; g++) {
    const c = powMod(g, (m - 1n) / 3n, m);
    if (c !== 1n) return c;
  }
};
type Pt = [bigint, bigint] | null;
const ecAdd = (a: Pt, b: Pt): Pt => {
  if (!a) return b;
  if (!b) return a;
  if (a[0] === b[0] && mod(a[1] + b[1], P) === 0n) return null;
  const l = a[0] === b[0] ? mod(3n * a[0] * a[0] * inv(2n * a[1], P), P) : mod((b[1] - a[1]) * inv(b[0] - a[0], P), P);
  const x = mod(l * l - a[0] - b[0], P);
  return [x, mod(l * (a[0] - x) - a[1], P)];
};
const ecMul = (k: bigint, a: Pt): Pt => {
  let r: Pt = null;
  for (let i = BigInt(k.toString(2).length) - 1n; i >= 0n; i--) {
    r = ecAdd(r, r);
    if ((k >> i) & 1n) r = ecAdd(r, a);
  }
  return r;
};
const BETA0 = cubeRoot(P);
const LAMBDA0 = cubeRoot(R);
const glvPair = (): [bigint, bigint] => {
  const G: Pt = [1n, 2n];
  for (const beta of [BETA0, mod(BETA0 * BETA0, P)]) {
    for (const lambda of [LAMBDA0, mod(LAMBDA0 * LAMBDA0, R)]) {
      const q = ecMul(lambda, G);
      if (q && q[0] === mod(beta * 1n, P) && q[1] === 2n) return [beta, lambda];
    }
  }
  throw new Error("no GLV pair");
};
export const [GLV_BETA, GLV_LAMBDA] = glvPair();
// Batch scalars are ρ = ρ1 + λ·ρ2 mod r with ρ1, ρ2 < 2^64 (groth16.ts). They
// are 2^128 distinct values iff no non-zero (a, b) with |a|, |b| < 2^64 has
// a + λb ≡ 0 (mod r): the shortest vector of that lattice (Lagrange–Gauss
// reduction of the basis (r, 0), (−λ, 1)) must be longer than √2·2^64.
{
  let u: [bigint, bigint] = [R, 0n];
  let v: [bigint, bigint] = [mod(-GLV_LAMBDA, R), 1n];
  const n2 = (x: [bigint, bigint]) => x[0] * x[0] + x[1] * x[1];
  const dot = (x: [bigint, bigint], y: [bigint, bigint]) => x[0] * y[0] + x[1] * y[1];
  for (;;) {
    if (n2(v) > n2(u)) [u, v] = [v, u];
    // round(dot/n2) towards the nearest integer
    const d = dot(u, v);
    const q = (2n * d + n2(v)) / (2n * n2(v)) - (2n * d + n2(v) < 0n && (2n * d + n2(v)) % (2n * n2(v)) !== 0n ? 1n : 0n);
    if (q === 0n) break;
    u = [u[0] - q * v[0], u[1] - q * v[1]];
  }
  const shortest = n2(v) < n2(u) ? n2(v) : n2(u);
  if (shortest <= 2n * (1n << 128n)) throw new Error("GLV halves of 64 bits would collide");
}

// --- Fr, the scalar field (the prover's NTT and witness arithmetic) -------------
//
// Same representation as Fp: Montgomery form x·R mod r, R = 2^261, nine
// 29-bit limbs. The roots of unity are ffjavascript's, because snarkjs's
// quotient (groth16_prove.js) evaluates on the coset of the 2n-th root it
// picks, and the zkey's H points are indexed by that coset's points in that
// order: nqr = the least quadratic non-residue from 2, r − 1 = 2^s·t with t
// odd, w[s] = nqr^t, w[k] = w[k+1]².
export const FR_MU = mod(-invPow2(R, LIMB_BITS), LIMB_MOD);
if (mod(R * FR_MU + 1n, LIMB_MOD) !== 0n) throw new Error("fr mu");
const frMont = (x: bigint) => mod(x * MONT_R, R);
const frData = (xs: bigint[]) => `memory.data<u32>([${xs.flatMap((x) => limbs(frMont(x))).join(", ")}])`;
const FR_NQR = (() => {
  for (let g = 2n; ; g++) if (powMod(g, (R - 1n) / 2n, R) === R - 1n) return g;
})();
let FR_T = R - 1n;
let FR_S = 0;
while ((FR_T & 1n) === 0n) {
  FR_T >>= 1n;
  FR_S++;
}
export const FR_TWO_ADICITY = FR_S;
export const FR_ROOTS: bigint[] = [];
FR_ROOTS[FR_S] = powMod(FR_NQR, FR_T, R);
for (let k = FR_S - 1; k >= 0; k--) FR_ROOTS[k] = (FR_ROOTS[k + 1]! * FR_ROOTS[k + 1]!) % R;
if (FR_ROOTS[0] !== 1n || FR_ROOTS[1] !== R - 1n) throw new Error("fr roots");
const FR_ROOTS_INV = FR_ROOTS.map((w) => inv(w, R));
const FR_INV_POW2 = FR_ROOTS.map((_, k) => inv(1n << BigInt(k), R));
// The zkey (ffjavascript) stores base-field coordinates as x·2^256 mod p and
// the coefficients of section 4 as c·2^512 mod r (zkey_new.js multiplies by
// R² in Montgomery form), little-endian. One Montgomery multiplication
// (·K·2^−261) by these plain-limb K moves each into this code's form:
// K = 2^(261 + 261 − 256) for coordinates, 2^(261 + 261 − 512) for coefficients.
const ZKEY_FP_TO_MONT = mod(1n << (2n * LIMB_BITS * BigInt(LIMBS) - 256n), P);
const ZKEY_COEF_TO_MONT = mod(1n << (2n * LIMB_BITS * BigInt(LIMBS) - 512n), R);

const fp2Data = (xs: F2[]) => fpData(xs.flat());
const hex = (x: bigint) => `0x${x.toString(16)}`;

const out = `// generated by scripts/asc-constants.ts, do not edit (run: bun scripts/asc-constants.ts)
//
// BN254 / alt_bn128: p = 36u⁴+36u³+24u²+6u+1, r = 36u⁴+36u³+18u²+6u+1,
// u = ${U}. Field elements are stored in Montgomery form with
// R = 2^${LIMB_BITS * BigInt(LIMBS)}, as ${LIMBS} little-endian limbs of ${LIMB_BITS} bits (u32 each).

/** p = ${P} */
${limbs(P)
  .map((l, i) => `export const P${i}: u64 = ${hex(l)};`)
  .join("\n")}
/** µ = −p⁻¹ mod 2^29 (Montgomery reduction factor). */
export const MU: u32 = ${hex(MU)};
/** p as four little-endian 64-bit words (canonical-encoding checks). */
${words(P)
  .map((w, i) => `export const P_W${i}: u64 = ${hex(w)};`)
  .join("\n")}
/** p − 2 (Fermat inversion exponent), little-endian 64-bit words. */
${words(P - 2n)
  .map((w, i) => `export const P_MINUS_2_W${i}: u64 = ${hex(w)};`)
  .join("\n")}
/** r = ${R}, little-endian 64-bit words. */
${words(R)
  .map((w, i) => `export const R_W${i}: u64 = ${hex(w)};`)
  .join("\n")}
/** r as 32 big-endian bytes (scalar-multiplication tests of subgroup membership). */
export const R_BE: usize = memory.data<u8>([${Array.from({ length: 32 }, (_, i) => Number((R >> BigInt(8 * (31 - i))) & 0xffn)).join(", ")}]);
/** R mod p: the Montgomery form of 1. */
export const FP_ONE: usize = ${fpData([1n])};
/** R² mod p, in plain limbs: mul(x, R²) converts x into Montgomery form. */
export const FP_R2: usize = memory.data<u32>([${limbs(mod(MONT_R * MONT_R, P)).join(", ")}]);
/** The integer 1 in plain limbs: mul(x, 1) converts x out of Montgomery form. */
export const FP_RAW_ONE: usize = memory.data<u32>([${limbs(1n).join(", ")}]);
/** b = 3, the G1 curve coefficient. */
export const G1_B: usize = ${fpData([3n])};
/** b' = 3/ξ, the twist coefficient (D-type twist), as Fp2 [c0, c1]. */
export const TWIST_B: usize = ${fp2Data([TWIST_B])};
/** γ_{1,i} = ξ^{i(p−1)/6}, i = 1..5, Fp2 each. */
export const FROB1: usize = ${fp2Data(G1)};
/** γ_{2,i} = ξ^{i(p²−1)/6}, i = 1..5, in Fp. */
export const FROB2: usize = ${fpData(G2.map((g) => g[0]))};
/** γ_{3,i} = ξ^{i(p³−1)/6}, i = 1..5, Fp2 each. */
export const FROB3: usize = ${fp2Data(G3)};
/** NAF digits of 6u+2 = ${6n * U + 2n}, least significant first. */
export const ATE_NAF: usize = memory.data<i8>([${ATE.join(", ")}]);
export const ATE_NAF_LEN: i32 = ${ATE.length};
/** Lines per G2 point in the optimal ate Miller loop: doublings + NAF additions + 2 Frobenius additions. */
export const ATE_LINES: i32 = ${ATE_LINES};
/** β, the cube root of unity of the GLV endomorphism φ(x, y) = (βx, y) = [λ](x, y) on G1. */
export const GLV_BETA: usize = ${fpData([GLV_BETA])};
/** The seed u. */
export const SEED_U: u64 = ${hex(U)};
/** Width-${WNAF_WIDTH} NAF of u (odd digits |d| < 2^${WNAF_WIDTH - 1n}), least significant first. */
export const U_WNAF: usize = memory.data<i8>([${U_WNAF.join(", ")}]);
export const U_WNAF_LEN: i32 = ${U_WNAF.length};

// --- Fr (scalar field r), for the prover -------------------------------------
/** r in 29-bit limbs. */
${limbs(R)
  .map((l, i) => `export const FR_P${i}: u64 = ${hex(l)};`)
  .join("\n")}
/** µ = −r⁻¹ mod 2^29. */
export const FR_MU: u32 = ${hex(FR_MU)};
/** R mod r: the Montgomery form of 1 in Fr. */
export const FR_ONE: usize = ${frData([1n])};
/** R² mod r, in plain limbs: frMul(x, R²) converts x into Montgomery form. */
export const FR_R2: usize = memory.data<u32>([${limbs(mod(MONT_R * MONT_R, R)).join(", ")}]);
/** r − 1 = 2^s·t, t odd: s, the largest power-of-two NTT domain. */
export const FR_TWO_ADICITY: i32 = ${FR_TWO_ADICITY};
/** w[k], k = 0..s: ffjavascript's primitive 2^k-th roots of unity (w[s] = ${FR_NQR}^t), Montgomery form. */
export const FR_ROOTS: usize = ${frData(FR_ROOTS)};
/** w[k]⁻¹, k = 0..s, Montgomery form. */
export const FR_ROOTS_INV: usize = ${frData(FR_ROOTS_INV)};
/** (2^k)⁻¹ mod r, k = 0..s, Montgomery form (the inverse NTT's scale). */
export const FR_INV_POW2: usize = ${frData(FR_INV_POW2)};
/** 2^266 mod p, plain limbs: frMul-style conversion of a zkey coordinate (x·2^256) into this code's form. */
export const ZKEY_FP_TO_MONT: usize = memory.data<u32>([${limbs(ZKEY_FP_TO_MONT).join(", ")}]);
/** 2^10 mod r, plain limbs: converts a zkey coefficient (c·2^512 mod r) into Montgomery form. */
export const ZKEY_COEF_TO_MONT: usize = memory.data<u32>([${limbs(ZKEY_COEF_TO_MONT).join(", ")}]);
`;

if (import.meta.main) finish([emit("assembly/constants.ts", out)], `assembly/constants.ts (ate NAF length ${ATE.length}, ${ATE_LINES} lines per G2 point)`);
