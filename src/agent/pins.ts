// What the agent will ever run (docs/trust.md, "What the agent pins"). A
// service may serve a circuit's proving key (each ceremony makes its own),
// but the circuit itself is fixed by this SDK: the witness generator the
// agent runs with its secret as input is one of these, byte for byte, and a
// served proving key must be for one of these circuits (same shape, same
// constraints). Anything else is refused before it is compiled or proved with.
//
// One entry per circuit. Another circuit joins by adding its entry here (and
// its witness generator to the SDK); test/agent/pins.test.ts recomputes each
// entry from the shipped artifacts, so a rebuilt circuit cannot keep a stale pin.

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
