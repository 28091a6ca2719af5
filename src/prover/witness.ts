// The circuit's own witness calculator (circom's generated WebAssembly), run
// by circom_runtime — the runtime snarkjs itself uses — and built ONCE per
// circuit: snarkjs's fullProve compiles and instantiates it on every call.
// Output: the witness as nVars 32-byte little-endian integers (standard
// form, w₀ = 1), the layout of a .wtns file's section 2.

// @ts-ignore — untyped; a dependency of snarkjs, the runtime circom's wasm expects
import { WitnessCalculatorBuilder } from "circom_runtime";
import { ProverError } from "./errors";
import { BN254_R, N8 } from "./zkey";

export type CircuitInput = Record<string, bigint | string | number | (bigint | string | number)[]>;

export interface WitnessCalculator {
  /** Number of witness elements (the zkey's nVars). */
  readonly witnessSize: number;
  /** nVars × 32 bytes, little-endian. */
  calculate(input: CircuitInput): Promise<Uint8Array>;
}

const WTNS_HEADER = 12; // "wtns" ‖ version ‖ nSections
const SECTION_HEADER = 12; // type u32 ‖ size u64
const WTNS_WITNESS_SECTION = 2;

/** The witness section of a .wtns image (calculateWTNSBin's output). */
function witnessSection(bin: Uint8Array): Uint8Array {
  const view = new DataView(bin.buffer, bin.byteOffset, bin.byteLength);
  const n = view.getUint32(8, true);
  let at = WTNS_HEADER;
  for (let i = 0; i < n; i++) {
    const type = view.getUint32(at, true);
    const size = Number(view.getBigUint64(at + 4, true));
    at += SECTION_HEADER;
    if (type === WTNS_WITNESS_SECTION) return bin.subarray(at, at + size);
    at += size;
  }
  throw new ProverError("internal", "the witness calculator's output has no witness section");
}

const toBigInt = (v: bigint | string | number) => (typeof v === "bigint" ? v : BigInt(v));

/** What this file uses of circom_runtime's WitnessCalculatorCircom2. */
interface CircomWitnessCalculator {
  prime: bigint;
  n32: number;
  witnessSize: number;
  calculateWTNSBin(input: Record<string, bigint | bigint[]>, sanityCheck: boolean): Promise<Uint8Array>;
}

export async function createWitnessCalculator(wasm: Uint8Array): Promise<WitnessCalculator> {
  let wc: CircomWitnessCalculator;
  try {
    wc = await WitnessCalculatorBuilder(wasm);
  } catch (e) {
    throw new ProverError("circuit_mismatch", `the circuit .wasm does not load as a circom witness calculator: ${(e as Error).message}`, { cause: e });
  }
  if (BigInt(wc.prime) !== BN254_R) throw new ProverError("circuit_mismatch", `the circuit is over the field ${wc.prime}, not BN254's r`);
  if (wc.n32 * 4 !== N8) throw new ProverError("circuit_mismatch", `the circuit's field elements are ${wc.n32 * 4} bytes`);
  const witnessSize: number = wc.witnessSize;
  return {
    witnessSize,
    async calculate(input) {
      const normalised: Record<string, bigint | bigint[]> = {};
      for (const [k, v] of Object.entries(input)) normalised[k] = Array.isArray(v) ? v.map(toBigInt) : toBigInt(v);
      let bin: Uint8Array;
      try {
        bin = await wc.calculateWTNSBin(normalised, false);
      } catch (e) {
        throw new ProverError("invalid_input", `the circuit refused the input: ${String((e as Error).message ?? e).trim()}`, { cause: e });
      }
      const w = witnessSection(bin);
      if (w.length !== witnessSize * N8) throw new ProverError("internal", `witness of ${w.length} bytes for ${witnessSize} signals`);
      return w;
    },
  };
}
