// The verifier the service uses for the agent_identity circuit.
import { verificationKey } from "../agent/vkey";
import type { Verifier } from "../modules/proofs/service";
import { interimVerifier } from "./snarkjs-interim";

export const serviceVerifier = (): Promise<Verifier> => interimVerifier(verificationKey);
