// Reads a snarkjs Groth16 zkey (binfileutils container, "zkey" version 1) and
// checks it before any of it reaches the prover module: the magic, that the
// protocol is Groth16, that the curve is BN254 (q, r, 32-byte n8), and that
// every section the prover reads has exactly the size its header's counts
// declare. The points and coefficients themselves are checked by the module
// as it decodes them (assembly/prover.ts).
//
// Layout (snarkjs zkey_utils.js / zkey_new.js), little-endian throughout:
//   "zkey" ‖ version u32 ‖ nSections u32 ‖ { type u32 ‖ size u64 ‖ body }*
//   1 protocol u32 (1 = Groth16)
//   2 n8q u32 ‖ q ‖ n8r u32 ‖ r ‖ nVars u32 ‖ nPublic u32 ‖ domainSize u32 ‖
//     α₁ ‖ β₁ ‖ β₂ ‖ γ₂ ‖ δ₁ ‖ δ₂
//   3 IC₀..IC_nPublic (G1)       4 nCoef u32 ‖ nCoef × (m u32 ‖ c u32 ‖ s u32 ‖ value)
//   5 A (nVars G1)  6 B1 (nVars G1)  7 B2 (nVars G2)  8 C (nVars − nPublic − 1 G1)
//   9 H (domainSize G1)          10 contributions (not read)

import { R as BN254_R } from "../verifier/encoding";
import { ProverError } from "./errors";
import { BaseSet } from "./layout";

/** The scalar field's order r: the verifier's (src/verifier/encoding.ts), the one constant for both. */
export { BN254_R };
const BN254_Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
/** Bytes of one field element (n8q = n8r = 32 on BN254). */
export const N8 = 32;
const G1_ZKEY_BYTES = 2 * N8;
const G2_ZKEY_BYTES = 4 * N8;
/** m u32 ‖ c u32 ‖ s u32 ‖ value: one record of section 4. */
const COEF_RECORD_BYTES = 12 + N8;
/** α₁ β₁ β₂ γ₂ δ₁ δ₂ at the end of section 2. */
const HEADER_POINTS_BYTES = 3 * G1_ZKEY_BYTES + 3 * G2_ZKEY_BYTES;

const MAGIC = "zkey";
const VERSION = 1;
const GROTH16 = 1;
const FILE_HEADER_BYTES = 12; // magic ‖ version ‖ nSections
const SECTION_HEADER_BYTES = 12; // type u32 ‖ size u64
/** Section 2 before its points: n8q ‖ q ‖ n8r ‖ r ‖ nVars ‖ nPublic ‖ domainSize. */
const GROTH_HEADER_BYTES = 4 + N8 + 4 + N8 + 12;
/** snarkjs's largest domain on BN254 is 2^28 (r − 1 = 2^28·t); the coset needs one more power. */
const MAX_DOMAIN_LOG = 27;

const Section = { protocol: 1, header: 2, ic: 3, coefs: 4, A: 5, B1: 6, B2: 7, C: 8, H: 9 } as const;

export interface Zkey {
  nVars: number;
  nPublic: number;
  domainSize: number;
  domainLog: number;
  nCoef: number;
  /** α₁ β₁ β₂ γ₂ δ₁ δ₂, as stored. */
  headerPoints: Uint8Array;
  ic: Uint8Array;
  /** Section 4 after its count. */
  coefs: Uint8Array;
  A: Uint8Array;
  B1: Uint8Array;
  B2: Uint8Array;
  C: Uint8Array;
  H: Uint8Array;
}

const fail = (message: string): never => {
  throw new ProverError("zkey_format", message);
};

function leBigInt(b: Uint8Array): bigint {
  let x = 0n;
  for (let i = b.length - 1; i >= 0; i--) x = (x << 8n) | BigInt(b[i]!);
  return x;
}

export function parseZkey(bytes: Uint8Array): Zkey {
  if (!(bytes instanceof Uint8Array)) fail("the zkey must be a Uint8Array");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < FILE_HEADER_BYTES || new TextDecoder().decode(bytes.subarray(0, 4)) !== MAGIC) fail("not a zkey file (magic)");
  if (view.getUint32(4, true) !== VERSION) fail(`unsupported zkey version ${view.getUint32(4, true)}`);
  const nSections = view.getUint32(8, true);
  const sections = new Map<number, Uint8Array>();
  let at = FILE_HEADER_BYTES;
  for (let i = 0; i < nSections; i++) {
    if (at + SECTION_HEADER_BYTES > bytes.length) fail(`truncated: section header ${i + 1} of ${nSections} is past the end`);
    const type = view.getUint32(at, true);
    const size = view.getBigUint64(at + 4, true);
    at += SECTION_HEADER_BYTES;
    if (size > BigInt(bytes.length - at)) fail(`truncated: section ${type} declares ${size} bytes, ${bytes.length - at} remain`);
    if (sections.has(type)) fail(`section ${type} appears twice`);
    sections.set(type, bytes.subarray(at, at + Number(size)));
    at += Number(size);
  }
  const section = (id: number, name: string): Uint8Array => sections.get(id) ?? fail(`section ${id} (${name}) is missing`);
  const u32 = (b: Uint8Array, offset: number) => new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(offset, true);

  const protocol = section(Section.protocol, "protocol");
  if (protocol.length !== 4 || u32(protocol, 0) !== GROTH16) fail("not a Groth16 zkey");

  const header = section(Section.header, "Groth16 header");
  if (header.length < GROTH_HEADER_BYTES) fail(`section 2 is ${header.length} bytes`);
  const n8q = u32(header, 0);
  if (n8q !== N8) throw new ProverError("zkey_curve", `n8q = ${n8q}, BN254 needs ${N8}`);
  const q = leBigInt(header.subarray(4, 4 + N8));
  if (q !== BN254_Q) throw new ProverError("zkey_curve", `base field q = ${q} is not BN254's`);
  const n8r = u32(header, 4 + N8);
  if (n8r !== N8) throw new ProverError("zkey_curve", `n8r = ${n8r}, BN254 needs ${N8}`);
  const r = leBigInt(header.subarray(8 + N8, 8 + 2 * N8));
  if (r !== BN254_R) throw new ProverError("zkey_curve", `scalar field r = ${r} is not BN254's`);
  const counts = 8 + 2 * N8;
  const nVars = u32(header, counts);
  const nPublic = u32(header, counts + 4);
  const domainSize = u32(header, counts + 8);
  if (header.length !== GROTH_HEADER_BYTES + HEADER_POINTS_BYTES)
    fail(`section 2 is ${header.length} bytes, expected ${GROTH_HEADER_BYTES + HEADER_POINTS_BYTES}`);
  if (nVars < 1 || nPublic >= nVars) fail(`nVars = ${nVars}, nPublic = ${nPublic}`);
  const domainLog = Math.log2(domainSize);
  if (!Number.isInteger(domainLog) || domainLog > MAX_DOMAIN_LOG) fail(`domain size ${domainSize} is not a power of two ≤ 2^${MAX_DOMAIN_LOG}`);

  const sized = (id: number, name: string, expected: number) => {
    const s = section(id, name);
    if (s.length !== expected) fail(`section ${id} (${name}) is ${s.length} bytes, the header's counts need ${expected}`);
    return s;
  };
  const coefSection = section(Section.coefs, "coefficients");
  if (coefSection.length < 4) fail("section 4 (coefficients) has no count");
  const nCoef = u32(coefSection, 0);
  sized(Section.coefs, "coefficients", 4 + nCoef * COEF_RECORD_BYTES);
  return {
    nVars,
    nPublic,
    domainSize,
    domainLog,
    nCoef,
    headerPoints: header.subarray(GROTH_HEADER_BYTES),
    ic: sized(Section.ic, "IC", (nPublic + 1) * G1_ZKEY_BYTES),
    coefs: coefSection.subarray(4),
    A: sized(Section.A, "A points", nVars * G1_ZKEY_BYTES),
    B1: sized(Section.B1, "B1 points", nVars * G1_ZKEY_BYTES),
    B2: sized(Section.B2, "B2 points", nVars * G2_ZKEY_BYTES),
    C: sized(Section.C, "C points", (nVars - nPublic - 1) * G1_ZKEY_BYTES),
    H: sized(Section.H, "H points", domainSize * G1_ZKEY_BYTES),
  };
}

/** A point section (5–9) by the prover module's set number (BaseSet), with its point count as loadBases takes it. */
export function pointSection(z: Zkey, set: number): { points: Uint8Array; count: number } {
  if (set === BaseSet.A) return { points: z.A, count: z.nVars };
  if (set === BaseSet.B1) return { points: z.B1, count: z.nVars };
  if (set === BaseSet.B2) return { points: z.B2, count: z.nVars };
  if (set === BaseSet.C) return { points: z.C, count: z.nVars - z.nPublic - 1 };
  return { points: z.H, count: z.domainSize };
}
