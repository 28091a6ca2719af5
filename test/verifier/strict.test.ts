// Where zkagent is stricter than snarkjs by design, and verification-key
// validation. Each case shows what snarkjs does and that we reject.
import { beforeAll, describe, expect, test } from "bun:test";
import { Groth16Verifier } from "../../src/verifier/index.ts";
import { agentIdentity, sevenInputs, proofPool, reference, R, type PoolEntry } from "./pool.ts";
import * as S from "../assembly/support.ts";

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x));
let pool: PoolEntry[];
let verifier: Groth16Verifier;
beforeAll(async () => {
  pool = await proofPool(agentIdentity, 2);
  verifier = await Groth16Verifier.fromVerificationKey(agentIdentity.vkey);
}, 120_000);

describe("stricter than snarkjs", () => {
  test("a coordinate written as x + p: snarkjs accepts, zkagent rejects as invalid_proof_format", async () => {
    const { proof, publicSignals } = pool[0]!;
    const edits: ((p: any) => void)[] = [
      (p) => (p.pi_a[0] = (BigInt(p.pi_a[0]) + S.P).toString()),
      (p) => (p.pi_b[0][1] = (BigInt(p.pi_b[0][1]) + S.P).toString()),
      (p) => (p.pi_c[1] = (BigInt(p.pi_c[1]) + S.P).toString()),
    ];
    for (const edit of edits) {
      const p = clone(proof);
      edit(p);
      expect(await reference(agentIdentity.vkey, publicSignals, p)).toBe(true);
      expect(verifier.verify(p, publicSignals)).toEqual({ ok: false, reason: "invalid_proof_format" });
    }
  });

  test("B on the twist but outside G2: snarkjs's point validity is on-curve only, zkagent rejects as invalid_curve_point", async () => {
    const { proof, publicSignals } = pool[0]!;
    const t = S.twistPointFromSeed(7n);
    const p = clone(proof);
    p.pi_b = [
      [t.x[0].toString(), t.x[1].toString()],
      [t.y[0].toString(), t.y[1].toString()],
      ["1", "0"],
    ];
    await reference(agentIdentity.vkey, publicSignals, proof); // ensures the reference curve is loaded
    const curve = (globalThis as any).curve_bn128;
    const point = curve.G2.fromObject(p.pi_b.map((c: string[]) => c.map(BigInt)));
    expect(curve.G2.isValid(point)).toBe(true); // snarkjs's check passes
    expect(await reference(agentIdentity.vkey, publicSignals, p)).toBe(false); // reaches the pairing
    expect(verifier.verify(p, publicSignals)).toEqual({ ok: false, reason: "invalid_curve_point" });
  });

  test("points at infinity are invalid_curve_point, in JSON and compact form", async () => {
    const { proof, publicSignals } = pool[0]!;
    const p = clone(proof);
    p.pi_c = ["0", "1", "0"];
    expect(await reference(agentIdentity.vkey, publicSignals, p)).toBe(false);
    expect(verifier.verify(p, publicSignals)).toEqual({ ok: false, reason: "invalid_curve_point" });
    const compact = Buffer.alloc(256); // (0, 0) is infinity in the EIP encoding
    expect(verifier.verify(compact.toString("base64url"), publicSignals)).toEqual({ ok: false, reason: "invalid_curve_point" });
  });

  test("public inputs: ≥ r, non-decimal, wrong count → invalid_public_input", () => {
    const { proof, publicSignals } = pool[0]!;
    const bad = (j: number, v: unknown) => {
      const s: unknown[] = [...publicSignals];
      s[j] = v;
      return verifier.verify(proof, s as string[]);
    };
    for (const v of [(BigInt(publicSignals[1]!) + R).toString(), R.toString(), "-1", "0x10", " 1", "01", "1e3", 5, null, R, -1n]) {
      expect(bad(1, v)).toEqual({ ok: false, reason: "invalid_public_input" });
    }
    expect(verifier.verify(proof, publicSignals.map(BigInt))).toEqual({ ok: true }); // bigints are fine
    expect(verifier.verify(proof, [])).toEqual({ ok: false, reason: "invalid_public_input" });
    expect(verifier.verify(proof, "nope" as any)).toEqual({ ok: false, reason: "invalid_public_input" });
  });

  test("garbage never throws", () => {
    const { publicSignals } = pool[0]!;
    for (const junk of [undefined, null, 1, {}, [], "x", "{", { pi_a: 1 }, Symbol("s"), () => 1]) {
      expect(() => verifier.verify(junk as any, publicSignals)).not.toThrow();
      expect(verifier.verify(junk as any, publicSignals).ok).toBe(false);
    }
  });
});

describe("verification keys", () => {
  test("γ = δ is refused (proofs could be forged)", async () => {
    const vk = clone(agentIdentity.vkey);
    vk.vk_delta_2 = vk.vk_gamma_2;
    await expect(Groth16Verifier.fromVerificationKey(vk)).rejects.toThrow(/vk_gamma_2 equals vk_delta_2/);
  });
  test("malformed keys throw clear errors", async () => {
    const base = agentIdentity.vkey;
    const cases: [any, RegExp][] = [
      [{ ...base, protocol: "plonk" }, /protocol/],
      [{ ...base, curve: "bls12381" }, /curve/],
      [{ ...base, nPublic: 3 }, /IC must have/],
      [{ ...base, nPublic: -1 }, /nPublic/],
      [{ ...base, vk_alpha_1: ["1", "3", "1"] }, /not on the curve/],
      [
        {
          ...base,
          vk_beta_2: [
            ["1", "0"],
            ["1", "0"],
            ["1", "0"],
          ],
        },
        /not on the curve/,
      ],
      [{ ...base, IC: [...base.IC.slice(0, -1), [S.P.toString(), "2", "1"]] }, /canonical/],
      ["{not json", /not JSON/],
    ];
    for (const [vk, msg] of cases) await expect(Groth16Verifier.fromVerificationKey(vk)).rejects.toThrow(msg);
    const t = S.twistPointFromSeed(3n);
    const outside = {
      ...base,
      vk_gamma_2: [
        [t.x[0].toString(), t.x[1].toString()],
        [t.y[0].toString(), t.y[1].toString()],
        ["1", "0"],
      ],
    };
    await expect(Groth16Verifier.fromVerificationKey(outside)).rejects.toThrow(/subgroup/);
  });
  test("JSON text keys and any nPublic work (7 inputs)", async () => {
    const v = await Groth16Verifier.fromVerificationKey(JSON.stringify(sevenInputs.vkey));
    const [e] = await proofPool(sevenInputs, 1);
    expect(v.nPublic).toBe(7);
    expect(v.verify(e!.proof, e!.publicSignals)).toEqual({ ok: true });
    // a key for another circuit rejects this proof
    expect(verifier.verify(e!.proof, e!.publicSignals.slice(0, 4))).toEqual({ ok: false, reason: "proof_rejected" });
  });
});
