// Proof parsing: accepted forms, the compact round trip, and a table of
// malformed inputs that must be reported as invalid_proof_format without
// throwing.
import { beforeAll, describe, expect, test } from "bun:test";
import { parseProof, toCompactProof, toSnarkjsProof, fp2FromBytes, PROOF_B, fromBytes32 } from "../../src/verifier/encoding.ts";
import { agentIdentity, proofPool, type PoolEntry } from "./pool.ts";

let entry: PoolEntry;
beforeAll(async () => {
  [entry] = await proofPool(agentIdentity, 1);
}, 120_000);
const clone = (x: unknown) => JSON.parse(JSON.stringify(x));

describe("accepted forms", () => {
  test("object, JSON text and compact form decode to the same bytes", () => {
    const a = parseProof(entry.proof);
    const b = parseProof(JSON.stringify(entry.proof));
    const compact = toCompactProof(entry.proof);
    const c = parseProof(compact);
    expect(a.ok && b.ok && c.ok).toBe(true);
    if (!a.ok || !b.ok || !c.ok) return;
    expect(b.bytes).toEqual(a.bytes);
    expect(c.bytes).toEqual(a.bytes);
    expect(compact).toMatch(/^[A-Za-z0-9_-]{342}$/);
    expect(toSnarkjsProof(compact)).toEqual({ ...entry.proof, protocol: "groth16", curve: "bn128" });
  });
  test("G2 is written imaginary part first (EIP-197 order)", () => {
    const p = parseProof(entry.proof);
    if (!p.ok) throw new Error("parse");
    const [c0, c1] = fp2FromBytes(p.bytes, PROOF_B);
    expect(c0.toString()).toBe(entry.proof.pi_b[0][0]);
    expect(c1.toString()).toBe(entry.proof.pi_b[0][1]);
    expect(fromBytes32(p.bytes, PROOF_B).toString()).toBe(entry.proof.pi_b[0][1]);
  });
  test("protocol and curve are optional", () => {
    const p = clone(entry.proof);
    delete p.protocol;
    delete p.curve;
    expect(parseProof(p).ok).toBe(true);
  });
});

describe("malformed proofs are invalid_proof_format", () => {
  const cases: [string, (p: any) => unknown][] = [
    ["wrong protocol", (p) => ({ ...p, protocol: "plonk" })],
    ["wrong curve", (p) => ({ ...p, curve: "bls12381" })],
    ["unknown key", (p) => ({ ...p, extra: 1 })],
    ["missing pi_c", (p) => ({ pi_a: p.pi_a, pi_b: p.pi_b })],
    ["A with z = 2", (p) => ({ ...p, pi_a: [p.pi_a[0], p.pi_a[1], "2"] })],
    ["B with z = [1, 1]", (p) => ({ ...p, pi_b: [p.pi_b[0], p.pi_b[1], ["1", "1"]] })],
    ["A missing z", (p) => ({ ...p, pi_a: p.pi_a.slice(0, 2) })],
    ["A extra coordinate", (p) => ({ ...p, pi_a: [...p.pi_a, "1"] })],
    ["B coordinate with 3 parts", (p) => ({ ...p, pi_b: [[...p.pi_b[0], "0"], p.pi_b[1], p.pi_b[2]] })],
    ["hex coordinate", (p) => ({ ...p, pi_a: ["0x" + BigInt(p.pi_a[0]).toString(16), p.pi_a[1], "1"] })],
    ["negative coordinate", (p) => ({ ...p, pi_a: ["-" + p.pi_a[0], p.pi_a[1], "1"] })],
    ["leading +", (p) => ({ ...p, pi_a: ["+" + p.pi_a[0], p.pi_a[1], "1"] })],
    ["leading zero", (p) => ({ ...p, pi_a: ["0" + p.pi_a[0], p.pi_a[1], "1"] })],
    ["whitespace inside number", (p) => ({ ...p, pi_a: [p.pi_a[0].slice(0, 5) + " " + p.pi_a[0].slice(5), p.pi_a[1], "1"] })],
    ["surrounding whitespace", (p) => ({ ...p, pi_a: [" " + p.pi_a[0], p.pi_a[1], "1"] })],
    ["79 digits", (p) => ({ ...p, pi_a: ["1".repeat(79), p.pi_a[1], "1"] })],
    ["≥ 2^256", (p) => ({ ...p, pi_a: [(1n << 256n).toString(), p.pi_a[1], "1"] })],
    ["number instead of string", (p) => ({ ...p, pi_a: [5, p.pi_a[1], "1"] })],
    ["null", () => null],
    ["array", (p) => [p.pi_a, p.pi_b, p.pi_c]],
    ["number", () => 42],
    ["empty string", () => ""],
    ["broken JSON text", (p) => JSON.stringify(p).slice(0, -1)],
    ["hex string", () => "ab".repeat(256)],
    ["compact, 255 bytes", () => Buffer.alloc(255, 1).toString("base64url")],
    ["compact, 257 bytes", () => Buffer.alloc(257, 1).toString("base64url")],
    ["compact with padding", (p) => toCompactProof(p) + "=="],
    [
      "compact, standard base64 alphabet",
      (p) =>
        Buffer.from(Buffer.from(toCompactProof(p), "base64url"))
          .toString("base64")
          .replace(/=+$/, ""),
    ],
    [
      "compact, non-canonical last character",
      (p) => {
        const s = toCompactProof(p);
        const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        return s.slice(0, -1) + alphabet[alphabet.indexOf(s.at(-1)!) + 1];
      },
    ],
  ];
  for (const [name, mutate] of cases) {
    test(name, () => {
      const input = mutate(clone(entry.proof));
      expect(parseProof(input)).toEqual({ ok: false, reason: "invalid_proof_format" });
    });
  }
  test("snarkjs infinity encoding is an invalid curve point", () => {
    const p = clone(entry.proof);
    p.pi_a = ["0", "1", "0"];
    expect(parseProof(p)).toEqual({ ok: false, reason: "invalid_curve_point" });
  });
  test("hostile objects do not throw", () => {
    const hostile = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error("boom");
        },
      },
    );
    expect(parseProof(hostile)).toEqual({ ok: false, reason: "invalid_proof_format" });
    expect(() => toCompactProof("nope")).toThrow(/not a Groth16 proof/);
  });
});
