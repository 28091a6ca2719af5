// A zkey that is truncated, altered or for another circuit, a circuit input
// the circuit refuses, and a witness that does not satisfy the circuit each
// end in a ProverError naming the problem — never a proof that does not
// verify, and never a crash: a good prover still works afterwards.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { createProver, ProverError, type ProverErrorCode } from "../../src/prover";
import { Groth16Verifier } from "../../src/verifier";
import { agentCircuit, type CircuitFiles, noInputs, R, randomField, sevenInputs } from "./support";

setDefaultTimeout(60_000);

/** Offset of section id's body in a zkey (binfileutils container). */
function sectionOffset(zkey: Uint8Array, id: number): number {
  const view = new DataView(zkey.buffer, zkey.byteOffset, zkey.byteLength);
  let at = 12;
  for (let i = 0; i < view.getUint32(8, true); i++) {
    const type = view.getUint32(at, true);
    const size = Number(view.getBigUint64(at + 4, true));
    if (type === id) return at + 12;
    at += 12 + size;
  }
  throw new Error(`no section ${id}`);
}
const edit = (c: CircuitFiles, f: (z: Uint8Array) => void): CircuitFiles => {
  const zkey = c.zkey.slice();
  f(zkey);
  return { ...c, zkey };
};
const setU32 = (z: Uint8Array, at: number, v: number) => new DataView(z.buffer, z.byteOffset).setUint32(at, v, true);

async function expectCode(promise: Promise<unknown>, code: ProverErrorCode): Promise<ProverError> {
  const error = await promise.then(
    () => undefined,
    (e) => e,
  );
  expect(error).toBeInstanceOf(ProverError);
  expect((error as ProverError).code).toBe(code);
  expect((error as ProverError).message.startsWith(`${code}: `)).toBe(true);
  return error as ProverError;
}

// Section 2 layout: n8q ‖ q ‖ n8r ‖ r ‖ nVars ‖ nPublic ‖ domainSize ‖ α₁ β₁ β₂ γ₂ δ₁ δ₂.
const HEADER_Q = 4;
const HEADER_R = 40;
const HEADER_NVARS = 72;
const HEADER_POINTS = 84;
const GAMMA2 = HEADER_POINTS + 64 + 64 + 128;
const DELTA2 = GAMMA2 + 128 + 64;

describe("the zkey is checked before it is used", () => {
  test("not a zkey, or truncated anywhere: zkey_format", async () => {
    await expectCode(createProver({ ...noInputs, zkey: new Uint8Array(0) }), "zkey_format");
    await expectCode(createProver({ ...noInputs, zkey: new TextEncoder().encode("wtns\x02\x00\x00\x00") }), "zkey_format");
    for (const cut of [11, 30, 200, noInputs.zkey.length >> 1, noInputs.zkey.length - 1]) {
      await expectCode(createProver({ ...noInputs, zkey: noInputs.zkey.subarray(0, cut) }), "zkey_format");
    }
  });

  test("another curve (q, r or n8 altered): zkey_curve", async () => {
    const h = sectionOffset(noInputs.zkey, 2);
    await expectCode(createProver(edit(noInputs, (z) => (z[h + HEADER_Q] ^= 1))), "zkey_curve");
    await expectCode(createProver(edit(noInputs, (z) => (z[h + HEADER_R + 5] ^= 1))), "zkey_curve");
    await expectCode(createProver(edit(noInputs, (z) => setU32(z, h, 48))), "zkey_curve");
  });

  test("counts that disagree with the sections: zkey_format", async () => {
    const h = sectionOffset(sevenInputs.zkey, 2);
    const nVars = new DataView(sevenInputs.zkey.buffer, sevenInputs.zkey.byteOffset).getUint32(h + HEADER_NVARS, true);
    await expectCode(createProver(edit(sevenInputs, (z) => setU32(z, h + HEADER_NVARS, nVars + 1))), "zkey_format");
    const c = sectionOffset(sevenInputs.zkey, 4);
    await expectCode(createProver(edit(sevenInputs, (z) => setU32(z, c, 1_000_000))), "zkey_format");
  });

  test("points that do not decode — off the curve, a coordinate ≥ p — in the header, IC, A, B2 or H: zkey_points", async () => {
    const h = sectionOffset(sevenInputs.zkey, 2);
    await expectCode(createProver(edit(sevenInputs, (z) => (z[h + HEADER_POINTS] ^= 4))), "zkey_points");
    await expectCode(createProver(edit(sevenInputs, (z) => z.fill(0xff, h + HEADER_POINTS + 64, h + HEADER_POINTS + 96))), "zkey_points");
    await expectCode(createProver(edit(sevenInputs, (z) => (z[sectionOffset(z, 3) + 70] ^= 1))), "zkey_points");
    for (const section of [5, 7, 9]) {
      // the last point of the section (the first ones may be infinity, which is skipped)
      const end = (z: Uint8Array) => {
        const view = new DataView(z.buffer, z.byteOffset);
        const at = sectionOffset(z, section);
        return at + Number(view.getBigUint64(at - 8, true)) - 40;
      };
      await expectCode(createProver(edit(sevenInputs, (z) => (z[end(z)] ^= 2))), "zkey_points");
    }
  });

  test("γ = δ, which would let anyone forge: zkey_key", async () => {
    const h = sectionOffset(sevenInputs.zkey, 2);
    await expectCode(createProver(edit(sevenInputs, (z) => z.copyWithin(h + GAMMA2, h + DELTA2, h + DELTA2 + 128))), "zkey_key");
  });

  test("coefficient records out of range (matrix, signal, value ≥ r): zkey_coefficients", async () => {
    const c = sectionOffset(sevenInputs.zkey, 4) + 4;
    await expectCode(createProver(edit(sevenInputs, (z) => setU32(z, c, 2))), "zkey_coefficients");
    await expectCode(createProver(edit(sevenInputs, (z) => setU32(z, c + 8, 1 << 20))), "zkey_coefficients");
    await expectCode(createProver(edit(sevenInputs, (z) => z.fill(0xff, c + 12, c + 44))), "zkey_coefficients");
  });

  test("a coefficient altered to another valid value: the proof would not verify, so none is returned (unsatisfied)", async () => {
    const c = sectionOffset(sevenInputs.zkey, 4) + 4;
    const prover = await createProver(edit(sevenInputs, (z) => (z[c + 12] ^= 1)));
    await expectCode(prover.prove({ w: 3n, x: [1n, 2n, 3n, 4n, 5n, 6n, 7n] }), "unsatisfied");
  });

  test("a zkey for another circuit than the witness calculator's, or a .wasm that is not one: circuit_mismatch", async () => {
    await expectCode(createProver({ zkey: sevenInputs.zkey, wasm: agentCircuit.wasm }), "circuit_mismatch");
    await expectCode(createProver({ zkey: noInputs.zkey, wasm: new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 9]) }), "circuit_mismatch");
  });
});

describe("inputs and witnesses", () => {
  test("an input the circuit refuses (failed assertion, missing or unknown signal): invalid_input", async () => {
    const prover = await createProver(noInputs);
    await expectCode(prover.prove({ a: 5n, b: 8n }), "invalid_input"); // a·b = 35 is asserted
    await expectCode(prover.prove({ a: 5n }), "invalid_input");
    await expectCode(prover.prove({ a: 5n, b: 7n, c: 1n }), "invalid_input");
    const agent = await createProver(agentCircuit);
    const wrong = { secret: 5n, identity_commitment: 6n, nonce: 1n, action_hash: 2n, context_hash: 3n };
    await expectCode(agent.prove(wrong), "invalid_input");
    // …and the same provers still prove afterwards.
    const { proof, publicSignals } = await prover.prove({ a: 5n, b: 7n });
    expect((await Groth16Verifier.fromVerificationKey(noInputs.vkey)).verify(proof, publicSignals)).toEqual({ ok: true });
  });

  test("a witness that does not satisfy the circuit reaches the module: unsatisfied, no proof", async () => {
    const prover = (await createProver(sevenInputs)) as any;
    const calculate = prover.witness.calculate.bind(prover.witness);
    const tampered = (change: (w: Uint8Array) => void) => ({
      witnessSize: prover.witness.witnessSize,
      calculate: async (input: any) => {
        const w = await calculate(input);
        change(w);
        return w;
      },
    });
    const input = { w: randomField(), x: Array.from({ length: 7 }, randomField) };
    prover.witness = tampered((w) => (w[w.length - 32] ^= 1)); // the last (private) signal
    await expectCode(prover.prove(input), "unsatisfied");
    prover.witness = tampered((w) => (w[32] ^= 1)); // a public signal
    await expectCode(prover.prove(input), "unsatisfied");
    prover.witness = tampered((w) => w.fill(0xff, 64, 96)); // ≥ r
    await expectCode(prover.prove(input), "internal");
    prover.witness = { witnessSize: prover.witness.witnessSize, calculate };
    const { publicSignals } = await prover.prove(input);
    expect(publicSignals).toEqual(input.x.map(String));
    expect(BigInt(publicSignals[0]!) < R).toBe(true);
  });
});
