// Groth16Verifier: Groth16 over BN254 for one snarkjs verification key, backed
// by the AssemblyScript module (assembly/, loaded by wasm.ts).
//
// verify() is total: every malformed input yields a VerifyFailure, never an
// exception. verifyBatch() checks many proofs with one randomised pairing
// equation (fresh 128-bit CSPRNG scalars per call) and, when that fails,
// bisects to give every item its own verdict.

import type { SnarkjsProof, Verifier, VerifyFailure, VerifyResult } from "./types.ts";
import { PROOF_BYTES, FIELD_BYTES, fromBytes32, parseProof, parsePublicInput, toBytes32, R } from "./encoding.ts";
import { encodeVerificationKey } from "./vkey.ts";
import { instantiateVerifier, instantiateVerifierSync, Status, writeIo, type VerifierExports } from "./wasm.ts";
import { WASM_BUILD, type WasmBuild } from "../wasm-engine.ts";
import { BATCH_SLOT_BYTES, BATCH_STATUS_BYTES, GLV_HALF_BITS, GLV_LAMBDA } from "./layout.ts";

export type { SnarkjsProof, Verifier, VerifyFailure, VerifyResult } from "./types.ts";
export { parseProof, toCompactProof, toSnarkjsProof } from "./encoding.ts";

export interface BatchItem {
  proof: SnarkjsProof | string;
  publicSignals: readonly (string | bigint)[];
}

const OK: VerifyResult = { ok: true };
const fail = (reason: VerifyFailure): VerifyResult => ({ ok: false, reason });

function statusResult(s: number): VerifyResult {
  switch (s) {
    case Status.OK:
      return OK;
    case Status.FORMAT:
      return fail("invalid_proof_format");
    case Status.POINT:
      return fail("invalid_curve_point");
    case Status.PUBLIC_INPUT:
      return fail("invalid_public_input");
    default:
      return fail("proof_rejected");
  }
}

/**
 * A batch scalar from the CSPRNG: random GLV halves ρ1, ρ2 < 2^64, not both
 * zero, as the module reads them (word = ρ2·2^64 + ρ1), and the scalar they
 * stand for, ρ = ρ1 + λ·ρ2 mod r (2^128 distinct non-zero values; see
 * assembly/groth16.ts).
 */
function randomRho(): { word: bigint; rho: bigint } {
  const halves = new Uint8Array(FIELD_BYTES);
  const bytes = (2 * GLV_HALF_BITS) / 8;
  for (;;) {
    crypto.getRandomValues(halves.subarray(FIELD_BYTES - bytes));
    const word = fromBytes32(halves);
    if (word === 0n) continue;
    const mask = (1n << BigInt(GLV_HALF_BITS)) - 1n;
    return { word, rho: ((word & mask) + GLV_LAMBDA * (word >> BigInt(GLV_HALF_BITS))) % R };
  }
}

type Prepared = { proof: Uint8Array; inputs: bigint[] };

export class Groth16Verifier implements Verifier {
  readonly nPublic: number;
  private wasm: VerifierExports;
  private readonly keyBytes: Uint8Array;
  private build: WasmBuild = WASM_BUILD;

  private constructor(wasm: VerifierExports, nPublic: number, keyBytes: Uint8Array) {
    this.wasm = wasm;
    this.nPublic = nPublic;
    this.keyBytes = keyBytes;
  }

  /**
   * Builds a verifier for a snarkjs verification key (object or JSON text). Throws Error for an invalid key.
   * options.build picks one of the two WebAssembly builds (default: the process's, src/wasm-engine.ts);
   * the benches set it to run both side by side.
   */
  static async fromVerificationKey(vkJson: unknown, options: { build?: WasmBuild } = {}): Promise<Groth16Verifier> {
    const { nPublic, bytes } = encodeVerificationKey(vkJson);
    const wasm = await Groth16Verifier.loadInstance(nPublic, bytes, options.build ?? WASM_BUILD);
    const verifier = new Groth16Verifier(wasm, nPublic, bytes);
    verifier.build = options.build ?? WASM_BUILD;
    return verifier;
  }

  private static async loadInstance(nPublic: number, bytes: Uint8Array, build: WasmBuild): Promise<VerifierExports> {
    const wasm = await instantiateVerifier(build);
    Groth16Verifier.installKey(wasm, nPublic, bytes);
    return wasm;
  }

  private static installKey(wasm: VerifierExports, nPublic: number, bytes: Uint8Array): void {
    writeIo(wasm, bytes);
    const s = wasm.loadKey(nPublic);
    if (s !== Status.OK) {
      const why =
        s === Status.FORMAT
          ? "a coordinate is not a canonical field element (≥ p)"
          : s === Status.POINT
            ? "a point is not on the curve, not in its subgroup, or at infinity"
            : s === Status.KEY_GAMMA_EQ_DELTA
              ? "vk_gamma_2 equals vk_delta_2 (proofs could be forged)"
              : `status ${s}`;
      throw new Error(`invalid verification key: ${why}`);
    }
  }

  /** Parses proof and public signals; a failure result or the encoded inputs. */
  private prepare(proof: unknown, publicSignals: unknown): VerifyResult | Prepared {
    const p = parseProof(proof);
    if (!p.ok) return fail(p.reason);
    if (!Array.isArray(publicSignals) || publicSignals.length !== this.nPublic) return fail("invalid_public_input");
    const inputs: bigint[] = [];
    for (const s of publicSignals) {
      const v = parsePublicInput(s);
      if (v === undefined) return fail("invalid_public_input");
      inputs.push(v);
    }
    return { proof: p.bytes, inputs };
  }

  /** Runs fn against the module; a trap (which the module is written never to raise) fails closed and resets the instance. */
  private guarded<T>(fn: (w: VerifierExports) => T, onTrap: T): T {
    try {
      return fn(this.wasm);
    } catch {
      this.recover();
      return onTrap;
    }
  }

  /** Replaces the instance after a trap (its state is unknown), synchronously from the compiled module. */
  private recover(): void {
    try {
      const w = instantiateVerifierSync(this.build);
      Groth16Verifier.installKey(w, this.nPublic, this.keyBytes);
      this.wasm = w;
    } catch {
      // keep the old instance; every later call stays guarded
    }
  }

  private verifyPrepared(w: VerifierExports, p: Prepared): VerifyResult {
    const size = PROOF_BYTES + this.nPublic * FIELD_BYTES;
    const ptr = w.io(size);
    const mem = new Uint8Array(w.memory.buffer, ptr, size);
    mem.set(p.proof, 0);
    p.inputs.forEach((x, j) => toBytes32(x, mem, PROOF_BYTES + j * FIELD_BYTES));
    return statusResult(w.verify());
  }

  verify(proof: SnarkjsProof | string, publicSignals: readonly (string | bigint)[]): VerifyResult {
    try {
      const p = this.prepare(proof, publicSignals);
      if (!("proof" in p)) return p;
      return this.guarded((w) => this.verifyPrepared(w, p), fail("proof_rejected"));
    } catch {
      return fail("invalid_proof_format");
    }
  }

  verifyBatch(items: readonly BatchItem[]): VerifyResult[] {
    const results: VerifyResult[] = new Array(items.length);
    const prepared: (Prepared | undefined)[] = items.map((item, i) => {
      try {
        const p = this.prepare(item?.proof, item?.publicSignals);
        if ("proof" in p) return p;
        results[i] = p;
      } catch {
        results[i] = fail("invalid_proof_format");
      }
      return undefined;
    });
    const max = this.wasm.maxBatch();
    for (let start = 0; start < items.length; start += max) {
      const idx: number[] = [];
      for (let i = start; i < Math.min(items.length, start + max); i++) if (prepared[i]) idx.push(i);
      if (idx.length === 0) continue;
      try {
        this.batchChunk(this.wasm, idx, prepared as Prepared[], results);
      } catch {
        this.recover();
        for (const i of idx) results[i] ??= fail("proof_rejected");
      }
    }
    return results;
  }

  /** Decodes one chunk into the module's batch cache, then checks it with bisection. */
  private batchChunk(w: VerifierExports, idx: number[], prepared: Prepared[], results: VerifyResult[]): void {
    const count = idx.length;
    const ptr = w.io(count * (PROOF_BYTES + BATCH_STATUS_BYTES));
    const mem = new Uint8Array(w.memory.buffer, ptr, count * PROOF_BYTES);
    idx.forEach((i, slot) => mem.set(prepared[i]!.proof, slot * PROOF_BYTES));
    w.batchPrepare(count);
    const statuses = new Int32Array(w.memory.buffer.slice(ptr + count * PROOF_BYTES, ptr + count * (PROOF_BYTES + BATCH_STATUS_BYTES)));
    const good: number[] = []; // cache slots
    statuses.forEach((s, slot) => {
      if (s === Status.OK) good.push(slot);
      else results[idx[slot]!] = statusResult(s);
    });
    const check = (slots: number[]): void => {
      if (slots.length === 0) return;
      if (slots.length === 1) {
        // A single item: the exact single-proof verdict.
        const i = idx[slots[0]!]!;
        results[i] = this.verifyPrepared(w, prepared[i]!);
        return;
      }
      if (this.batchEquation(w, slots, idx, prepared)) {
        for (const s of slots) results[idx[s]!] = OK;
        return;
      }
      const half = slots.length >> 1;
      check(slots.slice(0, half));
      check(slots.slice(half));
    };
    check(good);
  }

  /** The randomised batch equation over cache slots; fresh ρ per call. */
  private batchEquation(w: VerifierExports, slots: number[], idx: number[], prepared: Prepared[]): boolean {
    const k = slots.length;
    const n = this.nPublic;
    const size = k * BATCH_SLOT_BYTES + k * FIELD_BYTES + (n + 1) * FIELD_BYTES;
    const rhos = slots.map(() => randomRho());
    const combined: bigint[] = new Array(n + 1).fill(0n);
    slots.forEach((slot, t) => {
      const rho = rhos[t]!.rho;
      combined[0] = combined[0]! + rho;
      const inputs = prepared[idx[slot]!]!.inputs;
      for (let j = 0; j < n; j++) combined[j + 1] = combined[j + 1]! + rho * inputs[j]!;
    });
    const ptr = w.io(size);
    const mem = new Uint8Array(w.memory.buffer, ptr, size);
    const view = new DataView(w.memory.buffer, ptr, size);
    slots.forEach((slot, t) => view.setUint32(t * BATCH_SLOT_BYTES, slot, true));
    rhos.forEach(({ word }, t) => toBytes32(word, mem, k * BATCH_SLOT_BYTES + t * FIELD_BYTES));
    combined.forEach((c, j) => toBytes32(c % R, mem, k * BATCH_SLOT_BYTES + k * FIELD_BYTES + j * FIELD_BYTES));
    return w.batchCheck(k) === Status.OK;
  }
}
