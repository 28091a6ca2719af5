// The circuits a phase-2 ceremony can be run for, each with its phase-1 file
// pinned by hash. The agent circuit's ceremony is what the service ships
// (src/circuits/shipped.ts); the budget spend circuit's (docs/protocol.md,
// "Budgets across merchants") is run with the same tooling on its own,
// larger phase 1 (docs/trust.md, "Budgets: the spend circuit's setup").
//
// A ceremony directory names its files after its circuit
// (`budget_spend.r1cs`, …); verification_key.json and transcript.json keep
// their names, and the transcript says which circuit it is for.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { CEREMONY_FILES, CIRCUIT_NAME, type CeremonyFile, shippedFile } from "../circuits/shipped";
import { AGENT_PTAU, type PtauPin } from "./ptau";
import { CeremonyError } from "./transcript";

export interface CeremonyCircuit {
  name: string;
  /** File names in a ceremony directory, by role. */
  files: Readonly<Record<CeremonyFile, string>>;
  ptau: PtauPin;
  /** The repository's r1cs and witness wasm: a ceremony is only for these bytes. */
  source(file: "r1cs" | "wasm"): Promise<Uint8Array>;
  /** Where the shipped ceremony's directory is, when it is not the build's own (src/circuits/shipped.ts). */
  shippedDir?: () => string;
}

export const ceremonyFileNames = (name: string): Record<CeremonyFile, string> => ({
  r1cs: `${name}.r1cs`,
  wasm: `${name}.wasm`,
  zkey: `${name}.zkey`,
  vk: "verification_key.json",
  transcript: "transcript.json",
});

export const AGENT_CEREMONY: CeremonyCircuit = {
  name: CIRCUIT_NAME,
  files: CEREMONY_FILES,
  ptau: AGENT_PTAU,
  source: shippedFile,
};

export const BUDGET_CIRCUIT_NAME = "budget_spend";
/** The budget circuit's files: its ceremony's output directory (circuits/build.sh writes the r1cs and wasm). */
export const budgetArtifactPath = (file: string): string => fileURLToPath(new URL(`../../circuits/artifacts/${BUDGET_CIRCUIT_NAME}/${file}`, import.meta.url));

/**
 * The project's own phase 1 for 2^14 points (no public prepared file of that
 * size could be obtained; docs/trust.md). Not embedded in the compiled binary
 * (18 MB): the binary verifies this ceremony with --ptau FILE.
 */
export const BUDGET_PTAU: PtauPin = {
  name: "zkagent_budget_pot14_final.ptau",
  blake2b512: "a92b423171b063edaa6442751411a796436d819dcb92546300e7e4693f2c392f14bb55b1a1d4af6360b72c47ae44ae28375d012ae3017901f30a22a4e7bea090",
  source: "zkagent's own Powers of Tau for 2^14 (snarkjs powersoftau: new, contribute, beacon, prepare phase2; transcript in circuits/ptau/README.md)",
  path: () => fileURLToPath(new URL("../../circuits/ptau/zkagent_budget_pot14_final.ptau", import.meta.url)),
};

export const BUDGET_CEREMONY: CeremonyCircuit = {
  name: BUDGET_CIRCUIT_NAME,
  files: ceremonyFileNames(BUDGET_CIRCUIT_NAME),
  ptau: BUDGET_PTAU,
  source: async (file) => {
    const path = budgetArtifactPath(ceremonyFileNames(BUDGET_CIRCUIT_NAME)[file]);
    try {
      return new Uint8Array(await readFile(path));
    } catch (error) {
      // The compiled binary does not embed this circuit: its ceremony runs from a clone of the repository.
      throw new CeremonyError(
        `${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message} (the budget circuit's ceremony runs from a clone of the repository)`,
      );
    }
  },
  shippedDir: () => budgetArtifactPath(""),
};

export const CEREMONY_CIRCUITS: readonly CeremonyCircuit[] = [AGENT_CEREMONY, BUDGET_CEREMONY];

/** The ceremony circuit of this name, or undefined. */
export const ceremonyCircuit = (name: string): CeremonyCircuit | undefined => CEREMONY_CIRCUITS.find((c) => c.name === name);
