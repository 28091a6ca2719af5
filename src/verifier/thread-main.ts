// The inside of a verifier thread (thread.ts starts it): its own WebAssembly
// instance of the Groth16 verifier with the service's key, answering
// { id, items } with { id, results } — verify() for one item, verifyBatch()
// for more.
import { verificationKey } from "./circuit-key";
import { Groth16Verifier } from "./index";
import type { BatchItem } from "./batching";

declare const self: Worker;

const verifier = await Groth16Verifier.fromVerificationKey(verificationKey);

self.onmessage = (event: MessageEvent<{ id: number; items: BatchItem[] }>) => {
  const { id, items } = event.data;
  const results = items.length === 1 ? [verifier.verify(items[0]!.proof, items[0]!.publicSignals)] : verifier.verifyBatch(items);
  self.postMessage({ id, results });
};
self.postMessage({ ready: true });
