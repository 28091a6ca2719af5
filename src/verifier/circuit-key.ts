// The verification key of the circuit this build ships: exported from the
// final zkey of the phase-2 ceremony whose output is circuits/artifacts/
// (docs/trust.md; `zkagent ceremony verify` checks the chain). main.ts
// builds the shipped circuit's verifier from it (other circuit versions come
// from the store, src/circuits/registry.ts), and the agent SDK re-exports it.
import verificationKeyJson from "../../circuits/artifacts/verification_key.json";
import type { SnarkjsVerificationKey } from "./types";

export const verificationKey = verificationKeyJson as unknown as SnarkjsVerificationKey;
