// The circuits zkagent will ever run (docs/trust.md, "What the agent pins").
// A ceremony makes its own proving key, but the circuit itself is fixed: the
// witness generator an agent runs with its secret as input is one of these,
// byte for byte, and a proving key must be for one of these circuits (same
// shape, same constraints). The SDK refuses anything else before compiling or
// proving with it (src/agent/circuit.ts); `zkagent circuits add` refuses it
// before storing it, so the service never serves what an agent would refuse.
// Pure data and checks: the domain layer, imported by the SDK and the service.
//
// One entry per circuit. Another circuit joins by adding its entry here (and
// its witness generator to the SDK); test/circuits/pins.test.ts recomputes each
// entry from the shipped artifacts, so a rebuilt circuit cannot keep a stale pin.
import { createHash } from "node:crypto";
import { ProverError } from "../prover";
import { parseZkey } from "../prover/zkey";

export interface PinnedCircuit {
  /** The circuit's name: the prefix of its ids (`<name>-<16 hex digits of vk_hash>`). */
  readonly name: string;
  /** SHA-256 (hex) of the witness generator (circom --wasm output). */
  readonly wasmSha256: string;
  /** Its size in bytes: the download limit for it. */
  readonly wasmBytes: number;
  /** The proving key's circuit: the counts in its header and the SHA-256 of its constraint section (zkey section 4). */
  readonly zkey: {
    readonly nVars: number;
    readonly nPublic: number;
    readonly domainSize: number;
    readonly nCoef: number;
    readonly coefsSha256: string;
  };
}

export const PINNED_CIRCUITS: readonly PinnedCircuit[] = [
  {
    name: "agent_identity",
    wasmSha256: "958ccf65cfcbe0c410b0f2786937c3b0aaf2d0bbc82c40e6717a28e50495bc6f",
    wasmBytes: 1_634_127,
    zkey: { nVars: 423, nPublic: 4, domainSize: 512, nCoef: 443, coefsSha256: "af9a63b4597f86556b15ae62bb4999685beac59c46bf5d49e77ff0558bcb6179" },
  },
];

/** The pinned circuit whose witness generator hashes to `sha256`, if any. */
export const pinnedByWasm = (sha256: string): PinnedCircuit | undefined => PINNED_CIRCUITS.find((pin) => pin.wasmSha256 === sha256);

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/**
 * Why `zkey` is not a proving key for `pin`'s circuit (its header's counts and
 * the SHA-256 of its constraint section), or null when it is. Names the first
 * field that differs.
 */
export function zkeyPinMismatch(zkey: Uint8Array, pin: PinnedCircuit): string | null {
  let parsed: ReturnType<typeof parseZkey>;
  try {
    parsed = parseZkey(zkey);
  } catch (error) {
    if (error instanceof ProverError) return `the zkey is not a valid Groth16 key: ${error.message}`;
    throw error;
  }
  const shape = { nVars: parsed.nVars, nPublic: parsed.nPublic, domainSize: parsed.domainSize, nCoef: parsed.nCoef, coefsSha256: sha256(parsed.coefs) };
  for (const [field, expected] of Object.entries(pin.zkey)) {
    const actual = shape[field as keyof typeof shape];
    if (actual !== expected) return `the zkey is not for the pinned ${pin.name} circuit (${field} ${actual}, pinned ${expected})`;
  }
  return null;
}

/**
 * The pinned circuit a witness generator and a proving key are, or why not:
 * the wasm must be a pinned one byte for byte, the zkey for that circuit.
 */
export function pinnedArtifacts(wasm: Uint8Array, zkey: Uint8Array): { ok: true; pin: PinnedCircuit } | { ok: false; reason: string } {
  const wasmSha256 = sha256(wasm);
  const pin = pinnedByWasm(wasmSha256);
  if (!pin) return { ok: false, reason: `the witness wasm (SHA-256 ${wasmSha256}) is not a pinned one (src/circuits/pins.ts)` };
  const mismatch = zkeyPinMismatch(zkey, pin);
  return mismatch ? { ok: false, reason: mismatch } : { ok: true, pin };
}
