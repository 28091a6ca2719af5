// snarkjs as an independent reference verifier under Bun.
//
// snarkjs's groth16.verify starts worker threads and never returns under Bun.
// It works once a single-threaded curve is cached where snarkjs looks for it.
// snarkjs must be imported first: loading it loads its own nested copy of
// ffjavascript, which resets that cache, and the curve must come from that
// same nested copy.
import * as snarkjs from "snarkjs";
// @ts-ignore — untyped nested dependency
import { buildBn128 } from "../../node_modules/snarkjs/node_modules/ffjavascript/main.js";

(globalThis as any).curve_bn128 ??= await buildBn128(true);

export const referenceVerify = (vk: unknown, publicSignals: string[], proof: unknown): Promise<boolean> =>
  snarkjs.groth16.verify(vk as any, publicSignals, proof as any, { log() {}, info() {}, debug() {}, warn() {}, error() {} } as any);

export { snarkjs };
