// The project's WebAssembly Poseidon (assembly/poseidon.ts via
// src/groups/poseidon.ts) against two independent implementations,
// poseidon-lite (what Semaphore's packages hash with) and circomlibjs, and the
// trees it builds against poseidon-lite's and @semaphore-protocol/group's.
import { describe, expect, test } from "bun:test";
import { Group } from "@semaphore-protocol/group";
import { LeanIMT } from "@zk-kit/lean-imt";
import { buildPoseidon } from "circomlibjs";
import fc from "fast-check";
import { poseidon2 as litePoseidon2 } from "poseidon-lite/poseidon2";
import { poseidon2, poseidonBackend, poseidonLevel, poseidonLevelBytes } from "../../src/groups/poseidon";
import { LeanTree } from "../../src/groups/lean-tree";
import { FIELD_ORDER_R as R } from "../../src/identity/field";
import { instantiateProver, writeIo, readIo } from "../../src/prover/wasm";

const element = fc.bigInt({ min: 0n, max: R - 1n });
const lite = (a: bigint, b: bigint) => litePoseidon2([a, b]);
/** One LeanIMT level by hand with poseidon-lite: pairs hashed, a lone last node carried up unhashed. */
const pairwiseLite = (nodes: bigint[]) => {
  const parents: bigint[] = [];
  for (let i = 0; i + 1 < nodes.length; i += 2) parents.push(lite(nodes[i]!, nodes[i + 1]!));
  if (nodes.length % 2 === 1) parents.push(nodes.at(-1)!);
  return parents;
};

test("the WebAssembly module is the backend here (not the poseidon-lite fallback)", () => {
  expect(poseidonBackend()).toBe("wasm");
});

describe("poseidon2 equals the references", () => {
  test("poseidon-lite on 3,000 random pairs", () => {
    fc.assert(
      fc.property(element, element, (a, b) => poseidon2(a, b) === lite(a, b)),
      { numRuns: 3000 },
    );
  });

  test("circomlibjs (buildPoseidon) on 300 random pairs", async () => {
    const circom = await buildPoseidon();
    fc.assert(
      fc.property(element, element, (a, b) => poseidon2(a, b) === circom.F.toObject(circom([a, b]))),
      { numRuns: 300 },
    );
  });

  test("edge values: 0, 1, r − 1, and small limbs next to 2^64 boundaries", () => {
    const edges = [0n, 1n, 2n, R - 1n, R - 2n, (1n << 64n) - 1n, 1n << 64n, (1n << 253n) + 1n, 1n << 192n];
    for (const a of edges) for (const b of edges) expect(poseidon2(a, b)).toBe(lite(a, b));
    // Circomlib's published test vector for Poseidon([1, 2]).
    expect(poseidon2(1n, 2n)).toBe(0x115cc0f5e7d690413df64c6b9662e9cf2a3617f2743245519e19607a4417189an);
  });

  test("inputs ≥ r and negative inputs count as their residue mod r, as in poseidon-lite", () => {
    for (const [a, b] of [
      [R, 1n],
      [R + 5n, R + 7n],
      [(1n << 256n) - 1n, 3n],
      [-1n, 2n],
      [4n, -R - 9n],
    ] as [bigint, bigint][]) {
      const residue = (x: bigint) => ((x % R) + R) % R;
      expect(poseidon2(a, b)).toBe(poseidon2(residue(a), residue(b)));
      expect(poseidon2(a, b)).toBe(lite(a, b));
    }
  });
});

describe("the module's entry points", () => {
  test("poseidonHash and poseidonLevel refuse a 32-byte input ≥ r (the JavaScript side reduces first)", async () => {
    const wasm = await instantiateProver();
    const le = (x: bigint) => Uint8Array.from({ length: 32 }, (_, i) => Number((x >> BigInt(8 * i)) & 0xffn));
    const join = (...xs: bigint[]) => new Uint8Array(xs.flatMap((x) => [...le(x)]));
    writeIo(wasm, join(R, 1n));
    expect(wasm.poseidonHash()).toBe(-1);
    writeIo(wasm, join(1n, R - 1n));
    expect(wasm.poseidonHash()).toBe(0);
    const out = readIo(wasm, 32);
    expect(out).toEqual(le(lite(1n, R - 1n)));
    writeIo(wasm, join(1n, 2n, 3n, (1n << 256n) - 1n));
    expect(wasm.poseidonLevel(4)).toBe(-1);
    writeIo(wasm, join(1n, 2n, 3n));
    expect(wasm.poseidonLevel(3)).toBe(2);
    expect(readIo(wasm, 64)).toEqual(join(lite(1n, 2n), 3n));
  });
});

describe("poseidonLevel", () => {
  const pairwise = pairwiseLite;

  test("equals pairwise hashing, a lone last node carried up, for sizes 0…40 and across chunk boundaries", () => {
    fc.assert(
      fc.property(fc.array(element, { maxLength: 40 }), fc.constantFrom(2, 4, 6, 65_536), (nodes, chunk) => {
        expect(poseidonLevel(nodes, chunk)).toEqual(pairwise(nodes));
      }),
      { numRuns: 120 },
    );
  });

  test("single hashes after a level batch that moved the I/O buffer still hash right", () => {
    const big = Array.from({ length: 3001 }, (_, i) => BigInt(i) * 7919n);
    expect(poseidonLevel(big).slice(0, 3)).toEqual(pairwise(big.slice(0, 6)));
    expect(poseidon2(5n, 6n)).toBe(lite(5n, 6n));
  });

  test("an odd chunk is refused (pairs would straddle two calls)", () => {
    expect(() => poseidonLevel([1n, 2n, 3n], 3)).toThrow(/even/);
  });
});

describe("trees", () => {
  const members = Array.from({ length: 1_000 }, (_, i) => 12_345n + BigInt(i) * 1_000_003n);

  test("the shared tree's root over 1,000 members equals LeanIMT with poseidon-lite and @semaphore-protocol/group's", () => {
    const ours = LeanTree.fromLeaves(members);
    const reference = new LeanIMT<bigint>(lite, members);
    expect(ours.root).toBe(reference.root);
    expect(ours.root).toBe(new Group(members).root);
    // A removal (a 0 leaf) and an addition on both.
    ours.apply([
      { index: 10, value: 0n },
      { index: 1_000, value: 99n },
    ]);
    reference.update(10, 0n);
    reference.insert(99n);
    expect(ours.root).toBe(reference.root);
  });

  test("levels folded with poseidonLevel reach the same root", () => {
    let level = members.slice(0, 777);
    while (level.length > 1) level = poseidonLevel(level);
    expect(level[0]).toBe(new LeanIMT<bigint>(lite, members.slice(0, 777)).root);
  });
});

describe("appended batches (runs of parents hashed a level per call)", () => {
  const nodesOf = (tree: LeanTree) =>
    Array.from({ length: tree.depth + 1 }, (_, level) => Array.from({ length: Math.ceil(tree.size / 2 ** level) }, (_, i) => tree.node(level, i)));
  test("batches of random sizes give LeanIMT-with-poseidon-lite's every node, not only its root", () => {
    fc.assert(
      fc.property(fc.array(fc.array(element, { minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 6 }), (batches) => {
        const ours = LeanTree.fromLeaves(batches[0]!);
        const reference = new LeanIMT<bigint>(lite, batches[0]!);
        for (const batch of batches.slice(1)) {
          ours.apply(batch.map((value, i) => ({ index: ours.size + i, value })));
          reference.insertMany(batch);
        }
        expect(nodesOf(ours)).toEqual(JSON.parse(reference.export(), (_, v) => (typeof v === "string" ? BigInt(v) : v)));
        expect(ours.depth).toBe(reference.depth);
      }),
      { numRuns: 60 },
    );
  });

  test("0 leaves (removed members) are hashed like any other, as lean-imt 2.2.5 and the circuit do", () => {
    const leaves = [5n, 0n, 7n, 0n, 0n];
    expect(LeanTree.fromLeaves(leaves).root).toBe(new LeanIMT<bigint>(lite, leaves).root);
  });
});

test("without a loadable module the hash falls back to poseidon-lite, with the same results", () => {
  // A fresh process in which WebAssembly.Instance throws, as a runtime without WebAssembly (or a broken file) would.
  const script = `
    WebAssembly.Instance = function () { throw new Error("no WebAssembly here"); };
    const { poseidon2, poseidonBackend, poseidonLevel, poseidonLevelBytes } = await import(${JSON.stringify(`${import.meta.dir}/../../src/groups/poseidon.ts`)});
    const { poseidon2: lite } = await import("poseidon-lite/poseidon2");
    const same = poseidon2(1n, 2n) === lite([1n, 2n]) && poseidonLevel([3n, 4n, 5n]).join() === [lite([3n, 4n]), 5n].join();
    const be = (x) => Buffer.from(x.toString(16).padStart(64, "0"), "hex");
    const bytesSame = Buffer.from(poseidonLevelBytes(Buffer.concat([be(3n), be(4n), be(5n)]))).equals(Buffer.concat([be(lite([3n, 4n])), be(5n)]));
    process.stdout.write(poseidonBackend() + " " + same + " " + bytesSame);`;
  const child = Bun.spawnSync([process.execPath, "-e", script], { cwd: `${import.meta.dir}/../..`, stdout: "pipe", stderr: "pipe" });
  expect(child.stderr.toString()).toBe("");
  expect(child.stdout.toString()).toBe("poseidon-lite true true");
});

describe("poseidonLevelBytes (a level as 32-byte big-endian nodes, the agent's on-disk form)", () => {
  const be = (xs: bigint[]) => new Uint8Array(xs.flatMap((x) => Array.from({ length: 32 }, (_, i) => Number((x >> BigInt(8 * (31 - i))) & 0xffn))));

  test("equals poseidonLevel on the same nodes, for sizes 0…40 and across chunk boundaries", () => {
    fc.assert(
      fc.property(fc.array(element, { maxLength: 40 }), fc.constantFrom(2, 4, 65_536), (nodes, chunk) => {
        expect(poseidonLevelBytes(be(nodes), chunk)).toEqual(be(pairwiseLite(nodes)));
      }),
      { numRuns: 100 },
    );
  });

  test("a node ≥ r, and bytes that are not whole nodes, are refused", () => {
    expect(() => poseidonLevelBytes(be([1n, R]))).toThrow(/not below r/);
    expect(() => poseidonLevelBytes(new Uint8Array(33))).toThrow(/32-byte/);
  });
});
