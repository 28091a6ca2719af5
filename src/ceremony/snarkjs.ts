// snarkjs's zkey functions (newZKey, contribute, beacon, verifyFromR1cs,
// exportVerificationKey), made safe to call under Bun and in the compiled
// binary. The one module that hands them out: the ceremony, its CLI and the
// tests all import snarkjs's MPC from here.
//
// Why: snarkjs builds the BN254 curve with worker threads, which never finish
// under Bun. ffjavascript keeps one curve in globalThis.curve_bn128 and
// snarkjs reuses it; a single-threaded curve placed there first makes every
// call run on the calling thread (its terminate() is then a no-op). The cache
// must be filled *after* every ffjavascript bn128.js has been evaluated (each
// evaluation resets it to null), and there are three copies in the install:
// 0.3.1 (snarkjs's, a direct dependency pinned to it), r1csfile's 0.3.0
// (snarkjs's zkey new/verify read the r1cs through it) and circomlibjs's
// 0.2.63 (src/identity/commitment.ts). A bundle (the compiled binary) may
// evaluate any of them later than this module: so the curve is put in place
// before every call, not once at import. The cost is an await of a settled
// promise and one assignment per call, next to calls that take seconds.
import * as snarkjs from "snarkjs";
import { buildBn128 } from "ffjavascript";

const global = globalThis as { curve_bn128?: unknown };
let curve: Promise<unknown> | undefined;

/** Puts the single-threaded BN254 curve where snarkjs looks for it (built once per process). */
export async function singleThreadCurve(): Promise<void> {
  curve ??= buildBn128(true);
  global.curve_bn128 = await curve;
}

/** The single-threaded BN254 curve of ffjavascript (for reading points as snarkjs stores them). */
export async function bn128(): Promise<Bn128> {
  await singleThreadCurve();
  return (await curve) as Bn128;
}

/** The part of ffjavascript's curve used here: a group's points from their stored (Montgomery, little-endian) form to the uncompressed big-endian one snarkjs hashes. */
interface CurveGroup {
  fromRprLEM(buffer: Uint8Array, offset: number): unknown;
  toRprUncompressed(buffer: Uint8Array, offset: number, point: unknown): void;
}
export interface Bn128 {
  G1: CurveGroup;
  G2: CurveGroup;
}

/** snarkjs's logger interface; messages are collected, never printed by snarkjs itself. */
export interface SnarkjsLogger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** A file for snarkjs: a path on disk, or bytes already in memory (embedded files, HTTP downloads). */
export type SnarkjsFile = string | { type: "mem"; data: Uint8Array };

// snarkjs ships no types; these are the signatures of snarkjs 0.7.6 src/zkey_*.js.
interface ZKeyApi {
  newZKey(r1cs: SnarkjsFile, ptau: SnarkjsFile, zkey: SnarkjsFile, logger?: SnarkjsLogger): Promise<unknown>;
  contribute(zkeyOld: SnarkjsFile, zkeyNew: SnarkjsFile, name: string, entropy: string, logger?: SnarkjsLogger): Promise<Uint8Array>;
  beacon(
    zkeyOld: SnarkjsFile,
    zkeyNew: SnarkjsFile,
    name: string,
    beaconHashHex: string,
    numIterationsExp: number,
    logger?: SnarkjsLogger,
  ): Promise<Uint8Array | false>;
  verifyFromR1cs(r1cs: SnarkjsFile, ptau: SnarkjsFile, zkey: SnarkjsFile, logger?: SnarkjsLogger): Promise<boolean>;
  exportVerificationKey(zkey: SnarkjsFile, logger?: SnarkjsLogger): Promise<Record<string, unknown>>;
}

const raw = (snarkjs as unknown as { zKey: ZKeyApi }).zKey;
const guarded =
  <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
  async (...args: A): Promise<R> => {
    await singleThreadCurve();
    return call(...args);
  };

/** snarkjs's zkey functions, each on the single-threaded curve. */
export const zKey: ZKeyApi = {
  newZKey: guarded(raw.newZKey),
  contribute: guarded(raw.contribute),
  beacon: guarded(raw.beacon),
  verifyFromR1cs: guarded(raw.verifyFromR1cs),
  exportVerificationKey: guarded(raw.exportVerificationKey),
};
export { snarkjs };
