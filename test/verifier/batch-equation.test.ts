// The module's batch equation itself (batchPrepare + batchCheck), below
// verifyBatch's bisection: a valid batch must pass the equation at once, not
// only end with the right verdicts after falling back to single checks. The
// ρᵢ come in as GLV halves (word = ρ2·2^64 + ρ1) and stand for
// ρ1 + λ·ρ2 mod r; the combined scalars must use that ρ.
import { beforeAll, describe, expect, test } from "bun:test";
import { instantiateVerifier, type VerifierExports } from "../../src/verifier/wasm.ts";
import { encodeVerificationKey } from "../../src/verifier/vkey.ts";
import { parseProof, toBytes32 } from "../../src/verifier/encoding.ts";
import { BATCH_SLOT_BYTES, FP_BYTES, GLV_HALF_BITS, GLV_LAMBDA, PROOF_BYTES, Status } from "../../src/verifier/layout.ts";
import { agentIdentity, proofPool, R, type PoolEntry } from "./pool.ts";

let w: VerifierExports;
let pool: PoolEntry[];
let nPublic: number;
beforeAll(async () => {
  pool = await proofPool(agentIdentity, 8);
  const key = encodeVerificationKey(agentIdentity.vkey);
  nPublic = key.nPublic;
  w = await instantiateVerifier();
  new Uint8Array(w.memory.buffer, w.io(key.bytes.length), key.bytes.length).set(key.bytes);
  expect(w.loadKey(nPublic)).toBe(Status.OK);
}, 120_000);

const HALF = BigInt(GLV_HALF_BITS);
const randomHalf = () => BigInt.asUintN(GLV_HALF_BITS, BigInt(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex")}`)) | 1n;

/** Runs batchCheck over the pool with the given ρ words and the scalar each stands for. */
function check(words: bigint[], rhoOf: (word: bigint) => bigint, tamper = false): number {
  const k = pool.length;
  const proofs = w.io(k * (PROOF_BYTES + 4));
  pool.forEach((e, i) => {
    const p = parseProof(e.proof);
    if (!p.ok) throw new Error("pool proof");
    new Uint8Array(w.memory.buffer, proofs + i * PROOF_BYTES, PROOF_BYTES).set(p.bytes);
  });
  expect(w.batchPrepare(k)).toBe(k);
  const combined: bigint[] = new Array(nPublic + 1).fill(0n);
  pool.forEach((e, i) => {
    const rho = rhoOf(words[i]!);
    combined[0]! += rho;
    e.publicSignals.forEach((s, j) => (combined[j + 1]! += rho * BigInt(s)));
  });
  if (tamper) combined[1]! += 1n;
  const size = k * BATCH_SLOT_BYTES + k * FP_BYTES + (nPublic + 1) * FP_BYTES;
  const ptr = w.io(size);
  const mem = new Uint8Array(w.memory.buffer, ptr, size);
  const view = new DataView(w.memory.buffer, ptr, size);
  for (let i = 0; i < k; i++) view.setUint32(i * BATCH_SLOT_BYTES, i, true);
  words.forEach((x, i) => toBytes32(x, mem, k * BATCH_SLOT_BYTES + i * FP_BYTES));
  combined.forEach((c, j) => toBytes32(c % R, mem, k * BATCH_SLOT_BYTES + k * FP_BYTES + j * FP_BYTES));
  return w.batchCheck(k);
}

const glv = (word: bigint) => ((word & ((1n << HALF) - 1n)) + GLV_LAMBDA * (word >> HALF)) % R;

describe("batch equation with GLV scalars", () => {
  test("valid proofs pass with ρ = ρ1 + λ·ρ2", () => {
    for (let rep = 0; rep < 3; rep++) {
      const words = pool.map(() => (randomHalf() << HALF) | randomHalf());
      expect(check(words, glv)).toBe(Status.OK);
    }
  });

  test("halves with ρ2 = 0 (ρ = ρ1) and ρ1 = 0 (ρ = λ·ρ2) pass too", () => {
    expect(
      check(
        pool.map(() => randomHalf()),
        glv,
      ),
    ).toBe(Status.OK);
    expect(
      check(
        pool.map(() => randomHalf() << HALF),
        glv,
      ),
    ).toBe(Status.OK);
  });

  test("the same words read as plain 128-bit scalars do not: the module applies λ", () => {
    const words = pool.map(() => (randomHalf() << HALF) | randomHalf());
    expect(check(words, (x) => x)).toBe(Status.REJECTED);
  });

  test("a wrong combined public scalar is rejected", () => {
    const words = pool.map(() => (randomHalf() << HALF) | randomHalf());
    expect(check(words, glv, true)).toBe(Status.REJECTED);
  });
});
