// The verifier the service uses: the project's WebAssembly Groth16 verifier
// with the agent_identity circuit's verification key.
import { verificationKey } from "../agent/vkey";
import type { Verifier } from "../modules/proofs/service";
import { Groth16Verifier } from "./index";

export async function serviceVerifier(): Promise<Verifier> {
  const verifier = await Groth16Verifier.fromVerificationKey(verificationKey);
  return { verify: (proof, publicSignals) => verifier.verify(proof, publicSignals) };
}
