// The verifier the service uses: the project's WebAssembly Groth16 verifier
// with a circuit's verification key (the shipped circuit's by default; one
// per circuit version, src/circuits/registry.ts). main.ts wires it once,
// behind the batcher (batching.ts) so proofs that wait for each other are
// verified together; tests and benchmarks build the same ones.
import { BatchingVerifier, type BatchingOptions, type VerifyEngine } from "./batching";
import { verificationKey } from "./circuit-key";
import { Groth16Verifier } from "./index";
import { ThreadEngine } from "./thread";
import type { SnarkjsVerificationKey } from "./types";

/** One verifier, one proof at a time: what each engine is, and the reference the bench compares with. */
export const serviceVerifier = (key: SnarkjsVerificationKey = verificationKey): Promise<Groth16Verifier> => Groth16Verifier.fromVerificationKey(key);

export interface ServiceVerifierOptions extends BatchingOptions {
  /** Verifier threads (each its own WebAssembly instance); 0 verifies on the calling thread. */
  threads?: number;
  /** The circuit's key; the shipped circuit's by default (src/circuits/registry.ts builds one per circuit). */
  verificationKey?: SnarkjsVerificationKey;
}

/** What the server runs: a lone proof verified at once, proofs queued behind it verified as one batch. */
export async function batchingServiceVerifier(options: ServiceVerifierOptions = {}): Promise<BatchingVerifier> {
  const threads = options.threads ?? 0;
  const key = options.verificationKey ?? verificationKey;
  const engines: VerifyEngine[] =
    threads > 0 ? await Promise.all(Array.from({ length: threads }, () => ThreadEngine.start(key))) : [await serviceVerifier(key)];
  return new BatchingVerifier(engines, options);
}
