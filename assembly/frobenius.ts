// Frobenius maps x ↦ x^(p^k) on Fp12, and the untwist–Frobenius–twist
// endomorphism ψ on the twist E'(Fp2).
//
// In the Fp2[w]/(w⁶ − ξ) view f = Σ z_i·w^i (see fp12.ts),
//   f^(p^k) = Σ z_i^(p^k) · γ_{k,i} · w^i,  γ_{k,i} = ξ^{i(p^k − 1)/6},
// because w^(p^k) = w·(w⁶)^{(p^k − 1)/6}. z^(p^k) is the conjugate for odd k
// and z itself for even k; γ_{2,i} ∈ Fp. The coefficients are generated in
// constants.ts (Beuchat et al. 2010, "High-speed software implementation of
// the optimal ate pairing over Barreto–Naehrig curves", §4).

import { FP_SIZE } from "./fp";
import { FP2_SIZE, fp2Conj, fp2Mul, fp2MulFp, fp2Copy } from "./fp2";
import { Z0, Z1, Z2, Z3, Z4, Z5 } from "./fp12";
import { FROB1, FROB2, FROB3 } from "./constants";

/** γ_{k,i} for the Fp2-valued tables (i = 1..5). */
// @ts-ignore: decorator
@inline function gamma2(table: usize, i: usize): usize {
  return table + (i - 1) * FP2_SIZE;
}
/** γ_{2,i} ∈ Fp (i = 1..5). */
// @ts-ignore: decorator
@inline function gammaFp(i: usize): usize {
  return FROB2 + (i - 1) * FP_SIZE;
}

/** out = a^p. */
export function fp12Frobenius(out: usize, a: usize): void {
  fp2Conj(out + Z0, a + Z0);
  fp2Conj(out + Z1, a + Z1); fp2Mul(out + Z1, out + Z1, gamma2(FROB1, 1));
  fp2Conj(out + Z2, a + Z2); fp2Mul(out + Z2, out + Z2, gamma2(FROB1, 2));
  fp2Conj(out + Z3, a + Z3); fp2Mul(out + Z3, out + Z3, gamma2(FROB1, 3));
  fp2Conj(out + Z4, a + Z4); fp2Mul(out + Z4, out + Z4, gamma2(FROB1, 4));
  fp2Conj(out + Z5, a + Z5); fp2Mul(out + Z5, out + Z5, gamma2(FROB1, 5));
}

/** out = a^(p²). */
export function fp12Frobenius2(out: usize, a: usize): void {
  fp2Copy(out + Z0, a + Z0);
  fp2MulFp(out + Z1, a + Z1, gammaFp(1));
  fp2MulFp(out + Z2, a + Z2, gammaFp(2));
  fp2MulFp(out + Z3, a + Z3, gammaFp(3));
  fp2MulFp(out + Z4, a + Z4, gammaFp(4));
  fp2MulFp(out + Z5, a + Z5, gammaFp(5));
}

/** out = a^(p³). */
export function fp12Frobenius3(out: usize, a: usize): void {
  fp2Conj(out + Z0, a + Z0);
  fp2Conj(out + Z1, a + Z1); fp2Mul(out + Z1, out + Z1, gamma2(FROB3, 1));
  fp2Conj(out + Z2, a + Z2); fp2Mul(out + Z2, out + Z2, gamma2(FROB3, 2));
  fp2Conj(out + Z3, a + Z3); fp2Mul(out + Z3, out + Z3, gamma2(FROB3, 3));
  fp2Conj(out + Z4, a + Z4); fp2Mul(out + Z4, out + Z4, gamma2(FROB3, 4));
  fp2Conj(out + Z5, a + Z5); fp2Mul(out + Z5, out + Z5, gamma2(FROB3, 5));
}

/**
 * ψ(x, y) = (x̄·γ_{1,2}, ȳ·γ_{1,3}) on E'(Fp2): untwist to E(Fp12), apply the
 * p-power Frobenius, twist back. Valid coordinate-wise for affine, Jacobian
 * (Z ↦ Z̄ as well) and homogeneous projective points alike, since the map is
 * a field automorphism composed with scalings by w².
 */
export function psiX(out: usize, x: usize): void {
  fp2Conj(out, x);
  fp2Mul(out, out, gamma2(FROB1, 2));
}
export function psiY(out: usize, y: usize): void {
  fp2Conj(out, y);
  fp2Mul(out, out, gamma2(FROB1, 3));
}
/** ψ² coordinates: (x·γ_{2,2}, y·γ_{2,3}), Z unchanged. */
export function psi2X(out: usize, x: usize): void {
  fp2MulFp(out, x, gammaFp(2));
}
export function psi2Y(out: usize, y: usize): void {
  fp2MulFp(out, y, gammaFp(3));
}
