// The prover (src/prover) end to end: its proofs verify with the service's
// verifier and with snarkjs (under Node), for random statements of the agent
// circuit and for two other circuits; a proof never verifies for another
// statement; the same statement proved twice gives two different proofs.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import fc from "fast-check";
import { prove as sdkProve } from "../../src/agent";
import { identityCommitment } from "../../src/identity/commitment";
import { publicSignals } from "../../src/identity/encoding";
import { createProver, type Prover } from "../../src/prover";
import { Groth16Verifier } from "../../src/verifier";
import { agentCircuit, noInputs, R, type ReferenceCase, randomField, referenceVerifyAll, sevenInputs } from "./support";

// Proving 200 statements and one batch of snarkjs verifications under node on a shared two-core machine.
setDefaultTimeout(180_000);

const PROPERTY_RUNS = 200;

let verifier: Groth16Verifier;
beforeAll(async () => {
  verifier = await Groth16Verifier.fromVerificationKey(agentCircuit.vkey);
});

const hex62 = fc.uint8Array({ minLength: 31, maxLength: 31 }).map((b) => Buffer.from(b).toString("hex"));
const json = fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.constant(null)), {
  maxKeys: 4,
});
const secretArb = fc.bigInt({ min: 1n, max: (1n << 253n) - 1n });

describe("the agent circuit, through the SDK's prove()", () => {
  test(`${PROPERTY_RUNS} random statements: each proof verifies (service verifier) for its statement and not for a neighbour's; snarkjs agrees`, async () => {
    const reference: ReferenceCase[] = [];
    await fc.assert(
      fc.asyncProperty(secretArb, hex62, fc.string({ minLength: 1, maxLength: 24 }), json, fc.nat(3), async (secret, nonce, action, context, which) => {
        const commitment = await identityCommitment(secret);
        const statement = { identityCommitment: commitment, nonce, action, context };
        const proof = await sdkProve({ secret, nonce, action, context });
        const signals = publicSignals(statement);
        expect(verifier.verify(proof, signals)).toEqual({ ok: true });
        // Another statement: one of the four public inputs changed.
        const other = [...signals];
        other[which] = ((BigInt(other[which]!) + 1n) % R).toString();
        expect(verifier.verify(proof, other).ok).toBe(false);
        reference.push({ vkey: agentCircuit.vkey, publicSignals: signals, proof: JSON.parse(proof) });
        reference.push({ vkey: agentCircuit.vkey, publicSignals: other, proof: JSON.parse(proof) });
      }),
      { numRuns: PROPERTY_RUNS },
    );
    expect(reference).toHaveLength(2 * PROPERTY_RUNS);
    const verdicts = await referenceVerifyAll(reference);
    expect(verdicts.filter((v, i) => v !== (i % 2 === 0))).toEqual([]);
  });

  test("the same statement proved twice: two different proofs, both valid", async () => {
    const secret = randomField() || 1n;
    const request = { secret, nonce: "c3".repeat(31), action: "purchase", context: { amount: 5 } };
    const [a, b] = [await sdkProve(request), await sdkProve(request)];
    expect(a).not.toBe(b);
    const pa = JSON.parse(a);
    const pb = JSON.parse(b);
    expect(pa.pi_a).not.toEqual(pb.pi_a);
    expect(pa.pi_b).not.toEqual(pb.pi_b);
    expect(pa.pi_c).not.toEqual(pb.pi_c);
    const signals = publicSignals({ identityCommitment: await identityCommitment(secret), ...request });
    expect(verifier.verify(a, signals)).toEqual({ ok: true });
    expect(verifier.verify(b, signals)).toEqual({ ok: true });
  });
});

describe("any snarkjs zkey: two more circuits (7 and 0 public inputs), window widths forced from 2 to 16, with and without precomputed tables", () => {
  const seven = () => ({ w: randomField(), x: Array.from({ length: 7 }, randomField) });
  const none = () => ({ a: 5n, b: 7n });

  test("proofs verify with the service verifier and snarkjs, and carry the circuit's public signals", async () => {
    const reference: ReferenceCase[] = [];
    for (const [circuit, input, window, precompute] of [
      [sevenInputs, seven, 0, true],
      [sevenInputs, seven, 2, true],
      [sevenInputs, seven, 16, true],
      [noInputs, none, 0, true],
      [noInputs, none, 5, true],
      [agentCircuit, null, 13, true],
      [agentCircuit, null, 0, false],
      [sevenInputs, seven, 0, false],
      [sevenInputs, seven, 3, false],
      [noInputs, none, 0, false],
    ] as const) {
      const prover: Prover = await createProver(circuit, { window, precompute });
      const v = await Groth16Verifier.fromVerificationKey(circuit.vkey);
      for (let i = 0; i < 3; i++) {
        let data: Record<string, unknown>;
        if (input) data = input();
        else {
          const secret = randomField();
          data = {
            secret,
            identity_commitment: await identityCommitment(secret),
            nonce: randomField(),
            action_hash: randomField(),
            context_hash: randomField(),
          };
        }
        const { proof, publicSignals: signals } = await prover.prove(data as any);
        expect(Object.keys(proof).sort()).toEqual(["curve", "pi_a", "pi_b", "pi_c", "protocol"]);
        expect(proof.pi_a[2]).toBe("1");
        expect(proof.pi_b[2]).toEqual(["1", "0"]);
        if (circuit === sevenInputs) expect(signals).toEqual((data.x as bigint[]).map(String));
        if (circuit === noInputs) expect(signals).toEqual([]);
        expect(v.verify(proof, signals)).toEqual({ ok: true });
        reference.push({ vkey: circuit.vkey, publicSignals: signals, proof });
      }
    }
    expect(await referenceVerifyAll(reference)).toEqual(reference.map(() => true));
  });
});
