// The two builds of the WebAssembly (src/wasm-engine.ts): the wide build's
// field products (assembly/wide.wat, on i64.mul_wide_u / add128 / sub128)
// must give exactly the portable build's results, and the choice between
// them must fall back to the portable build when the engine lacks the
// instructions. Both builds are loaded side by side in this one process
// (this suite needs an engine that runs the wide build: Bun 1.4.5 does).
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { instantiate } from "@assemblyscript/loader";
import { buildPath, PROVER_TEST_WASM_PATH } from "../../scripts/asc-build.ts";
import { agentIdentity, proofPool, type PoolEntry } from "../verifier/pool.ts";
import { encodeVerificationKey } from "../../src/verifier/vkey.ts";
import { parseProof, toBytes32 } from "../../src/verifier/encoding.ts";
import { instantiateVerifier, type VerifierExports } from "../../src/verifier/wasm.ts";
import { Status } from "../../src/verifier/layout.ts";
import { chooseWasmBuild, WIDE_PROBE, type WasmBuild, wideArithmeticSupported } from "../../src/wasm-engine.ts";
import { poseidon2 as litePoseidon2 } from "poseidon-lite/poseidon2";
import * as S from "./support.ts";
import { fromLimbs, limbs } from "./support.ts";

const FP_SIZE = 36;
const R261 = 1n << 261n;

const random256 = (): bigint => BigInt(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`);

/** Operands for a product modulo q: the edges (0, 1, q − 1, q, values near 2^256, 8q − 1) and random values below q, 2^256 and 8q. */
function operands(q: bigint, n: number): bigint[] {
  const edges = [0n, 1n, 2n, q - 1n, q, q + 1n, 2n * q - 1n, 4n * q - 1n, (1n << 255n) - 1n, (1n << 256n) - 1n, 1n << 256n, (1n << 256n) + 1n, 8n * q - 1n];
  const out = [...edges];
  for (let i = 0; i < n; i++) {
    const x = random256();
    out.push(x % q, x, (x * 8n) % (8n * q));
  }
  return out;
}

type RawExports = { memory: WebAssembly.Memory; io(size: number): number };
function mulRaw(w: RawExports, call: () => void, a: bigint, b: bigint): Uint8Array {
  const ptr = w.io(3 * FP_SIZE);
  const view = new Uint8Array(w.memory.buffer, ptr, 3 * FP_SIZE);
  view.set(limbs(a));
  view.set(limbs(b), FP_SIZE);
  call();
  return new Uint8Array(w.memory.buffer, w.io(0) + 2 * FP_SIZE, FP_SIZE).slice();
}

type ProverTest = RawExports & { fieldMulRaw(field: number): void; poseidonHash(): number; poseidonLevel(n: number): number };
const proverTest = async (build: WasmBuild): Promise<ProverTest> => {
  const module = await WebAssembly.compile(await Bun.file(buildPath(PROVER_TEST_WASM_PATH, build)).arrayBuffer());
  return (await instantiate<ProverTest>(module, {})).exports as unknown as ProverTest;
};

let portable: S.TestExports & { fpMulRaw(): void; fpSqrRaw(): void };
let wide: S.TestExports & { fpMulRaw(): void; fpSqrRaw(): void };
let proverPortable: ProverTest;
let proverWide: ProverTest;
beforeAll(async () => {
  portable = (await S.newWasm("portable")) as typeof portable;
  wide = (await S.newWasm("wide")) as typeof wide;
  proverPortable = await proverTest("portable");
  proverWide = await proverTest("wide");
}, 120_000);

describe("choosing the build at load", () => {
  test("the probe is a valid module using the three instructions, and this engine runs it", () => {
    const hex = Buffer.from(WIDE_PROBE).toString("hex");
    for (const op of ["fc16", "fc13", "fc14"]) expect(hex).toContain(op);
    expect(WebAssembly.validate(WIDE_PROBE)).toBe(true);
    expect(wideArithmeticSupported()).toBe(true);
  });
  test("an engine without the instructions (simulated: the probe does not validate, or validate throws) gets the portable build", () => {
    expect(wideArithmeticSupported(() => false)).toBe(false);
    expect(
      wideArithmeticSupported(() => {
        throw new TypeError("unknown opcode");
      }),
    ).toBe(false);
    const unsupported = () => wideArithmeticSupported(() => false);
    expect(chooseWasmBuild(undefined, unsupported)).toBe("portable");
    expect(chooseWasmBuild("auto", unsupported)).toBe("portable");
    expect(chooseWasmBuild(undefined, () => true)).toBe("wide");
    expect(chooseWasmBuild("", () => true)).toBe("wide");
  });
  test("ZKAGENT_WASM=portable forces the portable build; wide on an engine without it, or an unknown value, is an error naming the problem", () => {
    expect(chooseWasmBuild("portable", () => true)).toBe("portable");
    expect(chooseWasmBuild(" Portable ", () => true)).toBe("portable");
    expect(chooseWasmBuild("wide", () => true)).toBe("wide");
    expect(() => chooseWasmBuild("wide", () => false)).toThrow(/wide-arithmetic/);
    expect(() => chooseWasmBuild("fast", () => true)).toThrow(/ZKAGENT_WASM must be auto, wide or portable \(got "fast"\)/);
  });
  test("the build a simulated engine without the instructions picks verifies the same proofs with the same verdicts as the wide build", async () => {
    const picked = chooseWasmBuild(undefined, () => wideArithmeticSupported(() => false));
    const pool: PoolEntry[] = await proofPool(agentIdentity, 4);
    const key = encodeVerificationKey(agentIdentity.vkey);
    const verdicts = async (build: WasmBuild) => {
      const w: VerifierExports = await instantiateVerifier(build);
      new Uint8Array(w.memory.buffer, w.io(key.bytes.length), key.bytes.length).set(key.bytes);
      expect(w.loadKey(key.nPublic)).toBe(Status.OK);
      const out: number[] = [];
      for (const [i, e] of pool.entries()) {
        const p = parseProof(e.proof);
        if (!p.ok) throw new Error("pool proof");
        // Every other proof with its first input changed: must fail in both.
        const inputs = e.publicSignals.map((s, j) => toBytes32(BigInt(s) + (i % 2 === 1 && j === 0 ? 1n : 0n)));
        const bytes = S.concat(p.bytes, ...inputs);
        new Uint8Array(w.memory.buffer, w.io(bytes.length), bytes.length).set(bytes);
        out.push(w.verify());
      }
      return out;
    };
    const a = await verdicts(picked);
    expect(a).toEqual([Status.OK, Status.REJECTED, Status.OK, Status.REJECTED]);
    expect(await verdicts("wide")).toEqual(a);
  }, 120_000);
});

describe("the wide build's products equal the portable build's and the BigInt reference", () => {
  for (const [name, q, field] of [
    ["fpMul", S.P, 0],
    ["frMul", S.R, 1],
  ] as const) {
    test(`${name} on raw limbs: edges (0, 1, q − 1, q, near 2^256, 8q − 1) and random operands < q, < 2^256, < 8q`, () => {
      const inv = S.invMod(R261 % q, q);
      const xs = operands(q, 60);
      let checked = 0;
      for (const [i, a] of xs.entries()) {
        for (const b of [xs[(i * 7 + 3) % xs.length]!, xs[(i * 13 + 5) % xs.length]!, a, 0n, 1n, q - 1n, 8n * q - 1n]) {
          const expected = (((a * b) % q) * inv) % q;
          const viaWide = fromLimbs(field === 0 ? mulRaw(wide, () => wide.fpMulRaw(), a, b) : mulRaw(proverWide, () => proverWide.fieldMulRaw(1), a, b));
          const viaPortable = fromLimbs(
            field === 0 ? mulRaw(portable, () => portable.fpMulRaw(), a, b) : mulRaw(proverPortable, () => proverPortable.fieldMulRaw(1), a, b),
          );
          if (viaWide !== expected || viaPortable !== expected)
            throw new Error(`${name}(${a}, ${b}): wide ${viaWide}, portable ${viaPortable}, expected ${expected}`);
          checked++;
        }
      }
      expect(checked).toBe(xs.length * 7);
    });
  }
  for (const [name, q, field] of [
    ["fpSqr", S.P, 2],
    ["frSqr", S.R, 3],
  ] as const) {
    test(`${name} (the wide build's own squaring: 10 word products) on raw limbs: the edges and random operands < q, < 2^256, < 8q`, () => {
      const inv = S.invMod(R261 % q, q);
      const xs = operands(q, 200);
      for (const a of xs) {
        const expected = (((a * a) % q) * inv) % q;
        const viaWide = fromLimbs(mulRaw(proverWide, () => proverWide.fieldMulRaw(field), a, 0n));
        const viaPortable = fromLimbs(mulRaw(proverPortable, () => proverPortable.fieldMulRaw(field), a, 0n));
        if (viaWide !== expected || viaPortable !== expected) throw new Error(`${name}(${a}): wide ${viaWide}, portable ${viaPortable}, expected ${expected}`);
        if (field === 2) expect(fromLimbs(mulRaw(wide, () => wide.fpSqrRaw(), a, 0n))).toBe(expected);
      }
      expect(xs.length).toBe(613);
    });
  }
  test("fp2Sqr on raw limbs: coefficients from the edges and random values < 2p (the wide one accepts them; the portable one, < p)", () => {
    const inv = S.invMod(R261 % S.P, S.P);
    const xs = [...operands(S.P, 60).filter((x) => x < 2n * S.P), S.P - 1n, 2n * S.P - 1n];
    const raw = (w: S.TestExports, a: bigint[]) => {
      const ptr = w.io(6 * FP_SIZE);
      const view = new Uint8Array(w.memory.buffer, ptr, 6 * FP_SIZE);
      a.forEach((x, i) => view.set(limbs(x), i * FP_SIZE));
      w.fp2SqrRaw();
      const out = new Uint8Array(w.memory.buffer, w.io(0) + 4 * FP_SIZE, 2 * FP_SIZE);
      return [fromLimbs(out.subarray(0, FP_SIZE)), fromLimbs(out.subarray(FP_SIZE))];
    };
    let checked = 0;
    for (const [i, x] of xs.entries()) {
      for (const y of [xs[(i * 7 + 1) % xs.length]!, x, 0n, 2n * S.P - 1n]) {
        const c0 = (((x * x - y * y) % S.P) + S.P) % S.P;
        const c1 = (2n * x * y) % S.P;
        const expected = [(c0 * inv) % S.P, (c1 * inv) % S.P];
        expect(raw(wide, [x, y])).toEqual(expected);
        // The portable fp2Sqr subtracts with fpSub, which takes reduced operands only.
        if (x < S.P && y < S.P) expect(raw(portable, [x, y])).toEqual(expected);
        checked++;
      }
    }
    expect(checked).toBe(xs.length * 4);
  });
  test("Poseidon (the wide build's S-box squarings, matrix rows with one reduction, one-lane level): poseidonHash and poseidonLevel equal poseidon-lite on both builds", () => {
    const edges = [0n, 1n, 2n, S.R - 1n, S.R - 2n, (1n << 253n) + 1n];
    const xs = [...edges, ...Array.from({ length: 40 }, () => random256() % S.R)];
    const le = (x: bigint) => Buffer.from(x.toString(16).padStart(64, "0"), "hex").reverse();
    const fromLe = (b: Uint8Array) => BigInt(`0x${Buffer.from(b).reverse().toString("hex") || "0"}`);
    const nodes = xs.flatMap((x, i) => [x, xs[(i * 5 + 3) % xs.length]!]);
    nodes.push(7n); // an odd last node: carried up unhashed
    const expected = [...Array.from({ length: xs.length }, (_, i) => litePoseidon2([nodes[2 * i]!, nodes[2 * i + 1]!])), 7n];
    for (const w of [proverWide, proverPortable]) {
      for (let i = 0; i < xs.length; i += 5) {
        const ptr = w.io(64);
        new Uint8Array(w.memory.buffer, ptr, 64).set(Buffer.concat([le(nodes[2 * i]!), le(nodes[2 * i + 1]!)]));
        expect(w.poseidonHash()).toBe(0);
        expect(fromLe(new Uint8Array(w.memory.buffer, w.io(0), 32))).toBe(expected[i]!);
      }
      const ptr = w.io(32 * nodes.length);
      new Uint8Array(w.memory.buffer, ptr, 32 * nodes.length).set(Buffer.concat(nodes.map(le)));
      expect(w.poseidonLevel(nodes.length)).toBeGreaterThanOrEqual(0);
      const out = new Uint8Array(w.memory.buffer, w.io(0), 32 * expected.length);
      expect(Array.from({ length: expected.length }, (_, i) => fromLe(out.subarray(32 * i, 32 * i + 32)))).toEqual(expected);
    }
  });
  test("fp2Mul on raw limbs: coefficients from the edges and random values < 4p (the lazy sums it accepts)", () => {
    const inv = S.invMod(R261 % S.P, S.P);
    const xs = operands(S.P, 30).filter((x) => x < 4n * S.P);
    const raw = (w: S.TestExports, a: bigint[], b: bigint[]) => {
      const ptr = w.io(6 * FP_SIZE);
      const view = new Uint8Array(w.memory.buffer, ptr, 6 * FP_SIZE);
      [...a, ...b].forEach((x, i) => view.set(limbs(x), i * FP_SIZE));
      w.fp2MulRaw();
      const out = new Uint8Array(w.memory.buffer, w.io(0) + 4 * FP_SIZE, 2 * FP_SIZE);
      return [fromLimbs(out.subarray(0, FP_SIZE)), fromLimbs(out.subarray(FP_SIZE))];
    };
    for (const [i, x] of xs.entries()) {
      const a = [x, xs[(i * 7 + 1) % xs.length]!];
      const b = [xs[(i * 11 + 2) % xs.length]!, xs[(i * 13 + 3) % xs.length]!];
      const c0 = (((a[0]! * b[0]! - a[1]! * b[1]!) % S.P) + S.P) % S.P;
      const c1 = (a[0]! * b[1]! + a[1]! * b[0]!) % S.P;
      const expected = [(c0 * inv) % S.P, (c1 * inv) % S.P];
      expect(raw(wide, a, b)).toEqual(expected);
      expect(raw(portable, a, b)).toEqual(expected);
    }
  });
  test("fpMul of the prover's module equals the verifier's", () => {
    for (const a of operands(S.P, 20)) {
      const b = random256() % (8n * S.P);
      expect(fromLimbs(mulRaw(proverWide, () => proverWide.fieldMulRaw(0), a, b))).toBe(fromLimbs(mulRaw(wide, () => wide.fpMulRaw(), a, b)));
    }
  });
});

/** Runs the same operation on both builds and expects the same status and output bytes. */
function same(input: Uint8Array, extra: number, run: (w: S.TestExports) => number): void {
  const a = S.call(portable, input, extra, () => run(portable));
  const b = S.call(wide, input, extra, () => run(wide));
  expect(b.status).toBe(a.status);
  expect(S.bytesToHex(b.io)).toBe(S.bytesToHex(a.io));
}

describe("every operation of the verifier's test build gives the same bytes on both builds", () => {
  const fieldEdges = [0n, 1n, S.P - 1n, S.P, (1n << 256n) - 1n];
  const elements = (n: number) => [...fieldEdges, ...Array.from({ length: n }, () => random256() % S.P)];

  test("Fp: add, sub, mul, inv, neg, sqr (non-canonical inputs rejected alike)", () => {
    const xs = elements(30);
    for (const [i, a] of xs.entries()) {
      const b = xs[(i * 5 + 1) % xs.length]!;
      for (let op = 0; op <= 5; op++) same(S.concat(S.toBytes32(a), S.toBytes32(b)), 32, (w) => w.fpOp(op));
    }
  });
  test("Fp2: add, sub, mul, inv, sqr, ·ξ, conj", () => {
    const xs = elements(20);
    for (const [i, a] of xs.entries()) {
      const parts = [a, xs[(i + 1) % xs.length]!, xs[(i + 2) % xs.length]!, xs[(i * 3) % xs.length]!].map(S.toBytes32);
      for (let op = 0; op <= 6; op++) same(S.concat(...parts), 64, (w) => w.fp2Op(op));
    }
  });
  test("Fp12: mul, sqr, Frobenius p, p², p³, inv, cyclotomic sqr, final exponentiation, conj, ^u", () => {
    for (let t = 0; t < 3; t++) {
      const a = Array.from({ length: 24 }, (_, i) => S.toBytes32(t === 0 && i < 12 ? (i === 0 ? 1n : 0n) : random256() % S.P));
      for (let op = 0; op <= 9; op++) same(S.concat(...a), 384, (w) => w.fp12Op(op, 0));
    }
  });
  test("G1, G2 and the pairing on the EIP-196/197 vectors", async () => {
    const dir = join(import.meta.dir, "../vectors/bn254");
    type Vector = { Input: string };
    const padded = (hex: string, width: number) => {
      const out = new Uint8Array(width);
      out.set(S.hexToBytes(hex).subarray(0, width));
      return out;
    };
    const add: Vector[] = await Bun.file(`${dir}/bn256Add.json`).json();
    const mul: Vector[] = await Bun.file(`${dir}/bn256ScalarMul.json`).json();
    const pairing: Vector[] = await Bun.file(`${dir}/bn256Pairing.json`).json();
    for (const v of add) same(padded(v.Input, 128), 64, (w) => w.g1Add());
    for (const v of mul) same(padded(v.Input, 96), 64, (w) => w.g1Mul());
    for (const v of pairing) {
      const input = S.hexToBytes(v.Input);
      const k = Math.floor(input.length / 192);
      same(input, 0, (w) => w.pairingCheck(k));
      if (k >= 1) {
        same(input.subarray(0, 192), 384, (w) => w.pairing());
        const g2 = input.subarray(64, 192);
        for (let op = 0; op <= 3; op++) same(S.concat(g2, S.toBytes32(random256())), 128, (w) => w.g2Op(op));
      }
    }
  });
});
