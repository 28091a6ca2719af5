// identity_commitment = Poseidon(secret): the value src/identity computes must
// be the one the circuit constrains, or no registered agent could ever prove.
import { beforeAll, describe, expect, test } from "bun:test";
import { readFile } from "node:fs/promises";
import { verificationKey } from "../../src/agent";
import { prove } from "../../src/agent";
import { COMMITMENT_OF_ZERO, identityCommitment, isValidSecret, newSecret } from "../../src/identity/commitment";
import { publicSignals } from "../../src/identity/encoding";
import { FIELD_ORDER_R } from "../../src/identity/field";
import { referenceVerify, snarkjs } from "../support/snarkjs";
import { SAMPLE, sampleProof } from "../support/proofs";

const WASM = "circuits/artifacts/agent_identity.wasm";
const ZKEY = "circuits/artifacts/agent_identity.zkey";
let wasm: Uint8Array;
let zkey: Uint8Array;

beforeAll(async () => {
  [wasm, zkey] = await Promise.all([readFile(WASM), readFile(ZKEY)]);
});

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const fullProve = (input: Record<string, string>) =>
  (snarkjs.groth16.fullProve as any)(input, { type: "mem", data: wasm }, { type: "mem", data: zkey }, quiet, {}, { singleThread: true });

describe("identityCommitment", () => {
  test("Poseidon([1]) is circomlib's known answer", async () => {
    expect(await identityCommitment(1n)).toBe(18586133768512220936620570745912940619677854269274689475585506675881198879027n);
  });

  test("is deterministic and differs between secrets", async () => {
    expect(await identityCommitment(12345n)).toBe(await identityCommitment(12345n));
    expect(await identityCommitment(12345n)).not.toBe(await identityCommitment(12346n));
  });

  test("rejects a secret outside [0, r)", async () => {
    await expect(identityCommitment(FIELD_ORDER_R)).rejects.toThrow(RangeError);
    await expect(identityCommitment(-1n)).rejects.toThrow(RangeError);
  });

  test("new secrets are non-zero field elements", () => {
    for (let i = 0; i < 50; i++) {
      const secret = newSecret();
      expect(secret > 0n && secret < FIELD_ORDER_R).toBe(true);
    }
  });
});

describe("agreement with the circuit", () => {
  test("the circuit accepts the commitment the code computes; the proof verifies with the reference verifier", async () => {
    const secret = 987654321n;
    const signals = publicSignals({ identityCommitment: await identityCommitment(secret), ...SAMPLE });
    const [identity_commitment, nonce, action_hash, context_hash] = signals;
    const { proof, publicSignals: proved } = await fullProve({
      secret: String(secret),
      identity_commitment: identity_commitment!,
      nonce: nonce!,
      action_hash: action_hash!,
      context_hash: context_hash!,
    });
    expect(proved).toEqual(signals);
    expect(await referenceVerify(verificationKey, signals, proof)).toBe(true);
  });

  test("a witness with a wrong commitment cannot be proved: fullProve throws", async () => {
    const secret = 987654321n;
    const [, nonce, action_hash, context_hash] = publicSignals({ identityCommitment: 0n, ...SAMPLE });
    const wrong = String((await identityCommitment(secret)) + 1n);
    await expect(
      fullProve({ secret: String(secret), identity_commitment: wrong, nonce: nonce!, action_hash: action_hash!, context_hash: context_hash! }),
    ).rejects.toThrow();
  });

  test("the pooled sample proof is for the sample identity's commitment", async () => {
    const sample = await sampleProof();
    expect(sample.publicSignals[0]).toBe(String(await identityCommitment(BigInt(sample.identity.secret))));
    expect(await referenceVerify(verificationKey, sample.publicSignals, JSON.parse(sample.proof))).toBe(true);
  });
});

describe("issue 11: secret 0 is no secret", () => {
  test("COMMITMENT_OF_ZERO is circomlibjs's Poseidon([0]), computed here independently", async () => {
    const { buildPoseidon } = await import("circomlibjs");
    const poseidon = await buildPoseidon();
    expect(COMMITMENT_OF_ZERO).toBe((poseidon.F.toObject(poseidon([0n])) as bigint).toString());
  });

  test("the SDK refuses secret 0 (and r) in identityCommitment and prove; [1, r) is the range", async () => {
    await expect(identityCommitment(0n)).rejects.toThrow(/\[1, r\)/);
    await expect(identityCommitment(FIELD_ORDER_R)).rejects.toThrow(RangeError);
    await expect(prove({ secret: "0", nonce: "7f".repeat(31), action: "a" })).rejects.toThrow(/\[1, r\)/);
    await expect(prove({ secret: 0n, nonce: "7f".repeat(31), action: "a" })).rejects.toThrow(RangeError);
    expect(isValidSecret(1n)).toBe(true);
    expect(isValidSecret(FIELD_ORDER_R - 1n)).toBe(true);
    expect(isValidSecret(0n)).toBe(false);
  });
});
