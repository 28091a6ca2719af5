// The inside of a verifier thread (thread.ts starts it): its own WebAssembly
// instance of the Groth16 verifier. The first message is { key } (the
// circuit's verification key); after it, { id, items } is answered with
// { id, results } — verify() for one item, verifyBatch() for more.
import { Groth16Verifier } from "./index";
import type { BatchItem } from "./batching";
import type { SnarkjsVerificationKey } from "./types";

declare const self: Worker;

let verifier: Groth16Verifier | undefined;

self.onmessage = async (event: MessageEvent<{ key: SnarkjsVerificationKey } | { id: number; items: BatchItem[] }>) => {
  const data = event.data;
  if ("key" in data) {
    verifier = await Groth16Verifier.fromVerificationKey(data.key);
    self.postMessage({ ready: true });
    return;
  }
  const { id, items } = data;
  const results = items.length === 1 ? [verifier!.verify(items[0]!.proof, items[0]!.publicSignals)] : verifier!.verifyBatch(items);
  self.postMessage({ id, results });
};
