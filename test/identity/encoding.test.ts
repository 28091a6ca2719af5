// Encoding v1 pinned by known answers computed here, independently of
// src/identity: SHA-256 through WebCrypto, reduction with BigInt, RFC 8785
// expectations written out by hand (cases.ts). The same answers live in
// test/vectors/encoding-v1.json for the docs; both must agree with the code.
import { describe, expect, test } from "bun:test";
import { actionHash, canonicalContextHash, canonicalJson, contextHash, newNonce, nonceToField, publicSignals } from "../../src/identity/encoding";
import { FIELD_ORDER_R, parseFieldElement } from "../../src/identity/field";
import vectors from "../vectors/encoding-v1.json";
import { ACTION_CASES, CONTEXT_CASES, NONCE_CASES } from "./cases";

const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

async function taggedHash(tag: string, payload: string): Promise<{ sha256: string; field: bigint }> {
  const bytes = new TextEncoder().encode(`zkagent/v1/${tag}\u0000${payload}`);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  return { sha256: hex, field: BigInt(`0x${hex}`) % R };
}

describe("the field", () => {
  test("r is the BN254 scalar field order", () => {
    expect(FIELD_ORDER_R).toBe(R);
    expect(vectors.field_order_r).toBe(R.toString());
  });

  test("parseFieldElement accepts canonical decimals below r only", () => {
    expect(parseFieldElement("0")).toBe(0n);
    expect(parseFieldElement(String(R - 1n))).toBe(R - 1n);
    for (const bad of [String(R), "01", "-1", "+1", "1e3", " 1", "0x1", "", "1.0"]) expect(parseFieldElement(bad)).toBeNull();
  });
});

describe("RFC 8785 canonical JSON", () => {
  test.each(CONTEXT_CASES.map((c) => [c.description, c] as const))("%s", (_, c) => {
    expect(canonicalJson(JSON.parse(c.context_json))).toBe(c.jcs);
  });

  test("an absent context is {}", () => {
    expect(canonicalJson(undefined)).toBe("{}");
    expect(contextHash(undefined)).toBe(contextHash({}));
  });
});

describe("known answers, computed independently", () => {
  test.each(ACTION_CASES.map((a) => [JSON.stringify(a).slice(0, 40), a] as const))("action_hash(%s)", async (_, action) => {
    const expected = await taggedHash("action", action);
    expect(actionHash(action)).toBe(expected.field);
    const vector = vectors.action_hash.find((v) => v.action === action)!;
    expect(vector).toEqual({ action, sha256: expected.sha256, action_hash: expected.field.toString() });
  });

  test.each(CONTEXT_CASES.map((c) => [c.description, c] as const))("context_hash: %s", async (_, c) => {
    const expected = await taggedHash("context", c.jcs);
    expect(contextHash(JSON.parse(c.context_json))).toBe(expected.field);
    expect(canonicalContextHash(c.jcs)).toBe(expected.field);
    const vector = vectors.context_hash.find((v) => v.description === c.description)!;
    expect(vector).toEqual({ ...c, sha256: expected.sha256, context_hash: expected.field.toString() });
  });

  test("every hash is a canonical field element below r", () => {
    for (const v of [...vectors.action_hash.map((x) => x.action_hash), ...vectors.context_hash.map((x) => x.context_hash)]) {
      expect(parseFieldElement(v)).not.toBeNull();
    }
  });

  test("action and context live in separate domains: the same text hashes differently", () => {
    expect(actionHash("{}")).not.toBe(contextHash({}));
  });

  test("a different amount is a different context; reordered keys are the same", () => {
    expect(contextHash({ amount: 20 })).not.toBe(contextHash({ amount: 21 }));
    expect(contextHash({ amount: 20 })).not.toBe(contextHash({ amount: "20" }));
    expect(contextHash({ a: 1, b: 2 })).toBe(contextHash({ b: 2, a: 1 }));
  });

  test("the vector file holds exactly the hand-written cases", () => {
    expect(vectors.version).toBe("v1");
    expect(vectors.action_hash.map((v) => v.action)).toEqual(ACTION_CASES);
    expect(vectors.context_hash.map((v) => v.description)).toEqual(CONTEXT_CASES.map((c) => c.description));
    expect(vectors.nonce.map((v) => v.nonce)).toEqual(NONCE_CASES);
  });
});

describe("nonce encoding", () => {
  test.each(NONCE_CASES.map((n) => [n] as const))("%s is its big-endian value", (nonce) => {
    let expected = 0n;
    for (let i = 0; i < nonce.length; i += 2) expected = expected * 256n + BigInt(parseInt(nonce.slice(i, i + 2), 16));
    expect(nonceToField(nonce)).toBe(expected);
    expect(vectors.nonce.find((v) => v.nonce === nonce)!.field).toBe(expected.toString());
  });

  test("fresh nonces are 62 lowercase hex digits, below 2^248 < r, and distinct", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const nonce = newNonce();
      expect(nonce).toMatch(/^[0-9a-f]{62}$/);
      const field = nonceToField(nonce)!;
      expect(field < 2n ** 248n).toBe(true);
      seen.add(nonce);
    }
    expect(2n ** 248n < R).toBe(true);
    expect(seen.size).toBe(200);
  });

  test("anything else is not a v1 nonce", () => {
    for (const bad of ["AB".repeat(31), "ab".repeat(30), "ab".repeat(32), "0x" + "ab".repeat(30), "g" + "a".repeat(61), ""]) {
      expect(nonceToField(bad)).toBeNull();
    }
    expect(() => publicSignals({ identityCommitment: 1n, nonce: "xyz", action: "a" })).toThrow();
  });
});

describe("public signals", () => {
  test("are commitment, nonce, action_hash, context_hash in the circuit's order, as decimals", () => {
    const nonce = NONCE_CASES[2]!;
    const signals = publicSignals({ identityCommitment: 42n, nonce, action: "purchase", context: { b: 1, a: 2 } });
    expect(signals).toEqual([
      "42",
      vectors.nonce.find((v) => v.nonce === nonce)!.field,
      vectors.action_hash.find((v) => v.action === "purchase")!.action_hash,
      vectors.context_hash.find((v) => v.description === "key order does not matter")!.context_hash,
    ]);
  });
});
