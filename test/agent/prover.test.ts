// The agent SDK: identities, proofs and signatures as an integrator calls them.
import { describe, expect, test } from "bun:test";
import { createIdentity, loadCircuit, prove, sign, verificationKey } from "../../src/agent";
import { identityCommitment } from "../../src/identity/commitment";
import { publicSignals } from "../../src/identity/encoding";
import { verifySignature } from "../../src/identity/signature";
import { referenceVerify } from "../support/snarkjs";
import { identity, proofFor, SAMPLE, sampleProof } from "../support/proofs";

describe("createIdentity", () => {
  test("returns a secret, its Poseidon commitment and an Ed25519 key pair", async () => {
    const id = await createIdentity();
    expect(Object.keys(id).sort()).toEqual(["identity_commitment", "secret", "signing_key", "signing_secret"]);
    expect(id.secret).toMatch(/^[1-9][0-9]*$/);
    expect(id.identity_commitment).toBe(String(await identityCommitment(BigInt(id.secret))));
    expect(id.signing_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(id.signing_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await createIdentity()).secret).not.toBe(id.secret);
  });
});

describe("prove", () => {
  test("returns the snarkjs proof JSON, which the reference verifier accepts for the statement", async () => {
    const { proof, publicSignals: signals } = await sampleProof();
    const parsed = JSON.parse(proof);
    expect(Object.keys(parsed).sort()).toEqual(["curve", "pi_a", "pi_b", "pi_c", "protocol"]);
    expect(parsed.protocol).toBe("groth16");
    expect(parsed.curve).toBe("bn128");
    expect(parsed.pi_a).toHaveLength(3);
    expect(parsed.pi_b).toHaveLength(3);
    expect(await referenceVerify(verificationKey, signals, parsed)).toBe(true);
  });

  test("the proof is bound to the action: it fails for another action's inputs", async () => {
    const { proof, identity: agent } = await sampleProof();
    const other = publicSignals({ identityCommitment: BigInt(agent.identity_commitment), ...SAMPLE, action: "refund" });
    expect(await referenceVerify(verificationKey, other, JSON.parse(proof))).toBe(false);
  });

  test("accepts the secret as a bigint as well as a decimal string", async () => {
    const agent = await identity("bigint");
    const proof = await prove({ secret: BigInt(agent.secret), ...SAMPLE });
    const signals = publicSignals({ identityCommitment: BigInt(agent.identity_commitment), ...SAMPLE });
    expect(await referenceVerify(verificationKey, signals, JSON.parse(proof))).toBe(true);
  });

  test("refuses a secret that is not a canonical field element, and a malformed nonce", async () => {
    await expect(prove({ secret: "-1", ...SAMPLE })).rejects.toThrow(RangeError);
    await expect(prove({ secret: "0x10", ...SAMPLE })).rejects.toThrow(RangeError);
    await expect(prove({ secret: "1", nonce: "XYZ", action: "a" })).rejects.toThrow();
  });

  test("a circuit object with the same id and zkey but another wasm gets its own prover, never the cached one", async () => {
    const agent = await identity("sample");
    const circuit = await loadCircuit();
    // The shipped circuit's prover is built (and cached) by this call or an earlier one.
    const signals = publicSignals({ identityCommitment: BigInt(agent.identity_commitment), ...SAMPLE });
    expect(await referenceVerify(verificationKey, signals, JSON.parse(await prove({ secret: agent.secret, ...SAMPLE, circuit })))).toBe(true);
    // An empty WebAssembly module: not a pinned witness generator, refused before a prover is built for it.
    const other = { ...circuit, wasm: new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]) };
    await expect(prove({ secret: agent.secret, ...SAMPLE, circuit: other })).rejects.toThrow(/is not one this SDK pins: refused, not run/);
  });

  test("the proof pool memoises: the same statement gives the same proof string", async () => {
    const agent = await identity("sample");
    expect(await proofFor({ secret: agent.secret, ...SAMPLE })).toBe((await sampleProof()).proof);
  });
});

describe("sign", () => {
  test("produces an agent_signature the service's check accepts", async () => {
    const agent = await identity("alice");
    const request = { challengeId: "ch_x", nonce: SAMPLE.nonce, action: "purchase", context: { amount: 1 } };
    const signature = sign({ signingSecret: agent.signing_secret, ...request });
    expect(verifySignature(agent.signing_key, signature, request)).toBe("valid");
  });
});
