// The group statement against independent references: Semaphore's hash as
// the stock client computes it (ethers' keccak256 of the 32-byte value,
// shifted right by 8), the stock proof packing (@zk-kit/utils), and the
// acceptable-roots rule.
import { expect, test } from "bun:test";
import { unpackGroth16Proof } from "@zk-kit/utils/proof-packing";
import { keccak256, toBeHex } from "ethers";
import { anonymityWarning, isAcceptableRoot } from "../../src/groups/roots";
import { groupMessage, groupMessageOf, groupScope } from "../../src/groups/derivation";
import { parseSemaphoreProof, unpackPoints } from "../../src/groups/proof-object";
import { semaphoreHash } from "../../src/groups/statement";

const stockHash = (value: bigint) => BigInt(keccak256(toBeHex(value, 32))) >> 8n;

test("semaphoreHash is the stock client's hash, for 0, small, 248-bit and 256-bit values", () => {
  for (const value of [0n, 1n, 42n, (1n << 248n) - 1n, (1n << 256n) - 1n, groupMessage({ nonce: "ab".repeat(31), action: "purchase", context: null })]) {
    expect(semaphoreHash(value)).toBe(stockHash(value));
  }
});

test("message and scope: below 2^248, bound to every field they name", () => {
  const base = { nonce: "ab".repeat(31), action: "purchase", context: '{"amount":"20.00"}' };
  const message = groupMessage(base);
  expect(message < 1n << 248n).toBe(true);
  expect(groupMessage({ ...base, nonce: "ac".repeat(31) })).not.toBe(message);
  expect(groupMessage({ ...base, action: "refund" })).not.toBe(message);
  expect(groupMessage({ ...base, context: null })).not.toBe(message);
  expect(groupMessage({ ...base, context: null })).toBe(groupMessage({ ...base, context: "{}" }));
  expect(groupScope("key-a", "g")).not.toBe(groupScope("key-b", "g"));
  expect(groupScope("key-a", "g")).not.toBe(groupScope("key-a", "h"));
  expect(groupScope("key-a", "g")).toBe(groupScope("key-a", "g"));
});

test("unpackPoints is the stock unpacking, with snarkjs's projective z = 1 added", () => {
  const points = Array.from({ length: 8 }, (_, i) => String(1000 + i));
  const stock = unpackGroth16Proof(points as any) as unknown as { pi_a: string[]; pi_b: string[][]; pi_c: string[] };
  const ours = unpackPoints(points);
  expect(ours.pi_a).toEqual([...stock.pi_a, "1"]);
  expect(ours.pi_b).toEqual([...stock.pi_b, ["1", "0"]]);
  expect(ours.pi_c).toEqual([...stock.pi_c, "1"]);
});

test("the proof object: numbers or decimal strings, eight points, a depth 1–32; anything else is not one", () => {
  const good = { merkleTreeDepth: 2, merkleTreeRoot: "5", nullifier: 6, message: "7", scope: "8", points: Array(8).fill("1") };
  expect(parseSemaphoreProof(good)).toMatchObject({ nullifier: "6" });
  expect(parseSemaphoreProof(JSON.stringify(good))).toMatchObject({ merkleTreeRoot: "5" });
  for (const bad of [
    { ...good, merkleTreeDepth: 0 },
    { ...good, merkleTreeDepth: 33 },
    { ...good, merkleTreeDepth: "2" },
    { ...good, points: Array(7).fill("1") },
    { ...good, points: [...Array(7).fill("1"), "x"] },
    { ...good, nullifier: "-1" },
    { ...good, message: "01" },
    { ...good, scope: 1.5 },
    [],
    "not json",
    null,
  ])
    expect(parseSemaphoreProof(bad)).toBeNull();
});

test("acceptable roots: any root the group had since its last removal, never 0", () => {
  const history = [
    { root: "r1", version: 1 },
    { root: "r2", version: 2 },
    { root: "r3", version: 3 },
    { root: "r4", version: 4 },
  ];
  expect(isAcceptableRoot("r1", history, 0)).toBe(true);
  expect(isAcceptableRoot("r2", history, 3)).toBe(false);
  expect(isAcceptableRoot("r3", history, 3)).toBe(true);
  expect(isAcceptableRoot("r4", history, 3)).toBe(true);
  expect(isAcceptableRoot("other", history, 0)).toBe(false);
  expect(isAcceptableRoot("0", [{ root: "0", version: 0 }], 0)).toBe(false);
  // By the real count (issue 38): an empty group's warning spoke of "one of two".
  expect(anonymityWarning(2)).toContain("one of 2");
  expect(anonymityWarning(0)).toContain("no member could make a proof");
  expect(anonymityWarning(0)).not.toContain("two");
  expect(anonymityWarning(1)).toContain("names its one member");
  expect(anonymityWarning(3)).toBeNull();
});

test("groupMessageOf: the agent's message from a decoded context is the service's from the stored canonical text, whatever the member order", () => {
  const nonce = "cd".repeat(31);
  const stored = groupMessage({ nonce, action: "purchase", context: '{"@request":{"method":"POST"},"amount":"20.00","currency":"EUR"}' });
  expect(groupMessageOf({ nonce, action: "purchase", context: { currency: "EUR", amount: "20.00", "@request": { method: "POST" } } })).toBe(stored);
  expect(groupMessageOf({ nonce, action: "purchase", context: { currency: "EUR", amount: "2000.00", "@request": { method: "POST" } } })).not.toBe(stored);
  expect(groupMessageOf({ nonce, action: "purchase", context: undefined })).toBe(groupMessage({ nonce, action: "purchase", context: null }));
});
