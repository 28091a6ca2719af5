// snarkjs as an independent reference verifier under Bun.
//
// snarkjs's groth16.verify starts worker threads and never returns under Bun.
// It works once a single-threaded curve is cached where snarkjs looks for it:
// src/ceremony/snarkjs.ts does that for the service and the tests.
import { singleThreadCurve, snarkjs } from "../../src/ceremony/snarkjs";

// Also for the snarkjs functions tests call directly (r1cs.info, …).
await singleThreadCurve();

export async function referenceVerify(vk: unknown, publicSignals: string[], proof: unknown): Promise<boolean> {
  await singleThreadCurve();
  return snarkjs.groth16.verify(vk as any, publicSignals, proof as any, { log() {}, info() {}, debug() {}, warn() {}, error() {} } as any);
}

export { snarkjs };
