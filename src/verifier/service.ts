// The verifier the service uses: the project's WebAssembly Groth16 verifier
// with the agent_identity circuit's verification key. main.ts wires it once;
// tests and benchmarks build the same one.
import { verificationKey } from "./circuit-key";
import { Groth16Verifier } from "./index";

export const serviceVerifier = (): Promise<Groth16Verifier> => Groth16Verifier.fromVerificationKey(verificationKey);
