// The verifier the service uses: the project's WebAssembly Groth16 verifier
// with the agent_identity circuit's verification key. main.ts wires it once,
// behind the batcher (batching.ts) so proofs that wait for each other are
// verified together; tests and benchmarks build the same ones.
import { BatchingVerifier, type BatchingOptions, type VerifyEngine } from "./batching";
import { verificationKey } from "./circuit-key";
import { Groth16Verifier } from "./index";
import { ThreadEngine } from "./thread";

/** One verifier, one proof at a time: what each engine is, and the reference the bench compares with. */
export const serviceVerifier = (): Promise<Groth16Verifier> => Groth16Verifier.fromVerificationKey(verificationKey);

export interface ServiceVerifierOptions extends BatchingOptions {
  /** Verifier threads (each its own WebAssembly instance); 0 verifies on the calling thread. */
  threads?: number;
}

/** What the server runs: a lone proof verified at once, proofs queued behind it verified as one batch. */
export async function batchingServiceVerifier(options: ServiceVerifierOptions = {}): Promise<BatchingVerifier> {
  const threads = options.threads ?? 0;
  const engines: VerifyEngine[] = threads > 0 ? await Promise.all(Array.from({ length: threads }, () => ThreadEngine.start())) : [await serviceVerifier()];
  return new BatchingVerifier(engines, options);
}
