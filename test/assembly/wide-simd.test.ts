// The relaxed-SIMD experiment (scripts/wide/simd.ts, not part of any build):
// a two-lane Montgomery product on 52-bit limbs in f64 lanes, the exact
// product split by f64x2.relaxed_madd. Its results are checked against BigInt
// where the engine fuses the multiply-add (V8, run here as Node with its
// relaxed-SIMD flag), and under Bun the test pins down why it is not shipped:
// the product is exact exactly when the engine's relaxed_madd fuses, which
// JavaScriptCore on x86-64 does not (docs/performance.md, "Relaxed SIMD
// (tried)").
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { P, R } from "../../scripts/asc-constants.ts";
import { relaxedMaddFuses, relaxedMaddProbe, simdModuleBinary } from "../../scripts/wide/simd.ts";

const M52 = (1n << 52n) - 1n;
const TWO256 = 1n << 256n;
const random = (bound: bigint): bigint => BigInt(`0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("hex")}`) % bound;
const pow = (b: bigint, e: bigint, m: bigint): bigint => {
  let r = 1n;
  for (b %= m; e; e >>= 1n, b = (b * b) % m) if (e & 1n) r = (r * b) % m;
  return r;
};

/** Operand pairs for modulus q: the edges (0, 1, q − 1, q, 2q − 1, 2^256 − 1 and near it, all-ones limbs) and random values below q, 2q and 2^256 (the kernel's input bound). */
function operands(q: bigint, n: number): [bigint, bigint][] {
  const edges = [0n, 1n, q - 1n, q, 2n * q - 1n, TWO256 - 1n, TWO256 - q, 1n << 255n, M52, (M52 << 52n) | M52];
  const pairs: [bigint, bigint][] = [];
  for (const a of edges) for (const b of edges) pairs.push([a, b]);
  for (let i = 0; i < n; i++) pairs.push([random(q), random(q)], [random(2n * q), random(TWO256)], [random(TWO256), random(TWO256)]);
  return pairs;
}

/** Pairs as the module's memory wants them: a pair of pairs per call, limb i of both lanes at +16i; [a0, b0, a1, b1] × 5 limbs as 64-bit words. */
const toWords = (x: bigint): bigint[] => [0, 1, 2, 3, 4].map((i) => (x >> BigInt(52 * i)) & M52);

/** The outputs of mul2 for the pairs (two per call), run by this engine. */
async function runHere(bytes: Uint8Array, pairs: [bigint, bigint][]): Promise<bigint[]> {
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const ex = instance.exports as { memory: WebAssembly.Memory; mul2(a: number, b: number, out: number): void };
  const mem = new BigUint64Array(ex.memory.buffer);
  const out: bigint[] = [];
  for (let c = 0; c < pairs.length; c += 2) {
    const lanes = [pairs[c]!, pairs[c + 1] ?? pairs[c]!];
    for (let lane = 0; lane < 2; lane++) {
      const [a, b] = lanes[lane]!;
      toWords(a).forEach((w, i) => (mem[2 * i + lane] = w));
      toWords(b).forEach((w, i) => (mem[10 + 2 * i + lane] = w));
    }
    ex.mul2(0, 80, 160);
    for (let lane = 0; lane < Math.min(2, pairs.length - c); lane++) {
      let v = 0n;
      for (let i = 4; i >= 0; i--) v = (v << 52n) + mem[20 + 2 * i + lane]!;
      out.push(v);
    }
  }
  return out;
}

/** The same under Node (V8) with relaxed SIMD enabled: the module and the operands go through a file, the outputs come back as JSON. */
async function runUnderNode(bytes: Uint8Array, pairs: [bigint, bigint][]): Promise<{ fused: boolean; out: bigint[] }> {
  const probe = await relaxedMaddProbe();
  const dir = mkdtempSync(join(tmpdir(), "zkagent-simd-"));
  try {
    writeFileSync(join(dir, "m.wasm"), bytes);
    writeFileSync(join(dir, "pairs.json"), JSON.stringify(pairs.map(([a, b]) => [a.toString(), b.toString()])));
    const script = `
      import { readFileSync } from "node:fs";
      const pairs = JSON.parse(readFileSync("pairs.json", "utf8")).map(([a, b]) => [BigInt(a), BigInt(b)]);
      const { instance } = await WebAssembly.instantiate(readFileSync("m.wasm"), {});
      const mem = new BigUint64Array(instance.exports.memory.buffer);
      const words = (x) => [0, 1, 2, 3, 4].map((i) => (x >> BigInt(52 * i)) & ${M52}n);
      const out = [];
      for (let c = 0; c < pairs.length; c += 2) {
        const lanes = [pairs[c], pairs[c + 1] ?? pairs[c]];
        for (let lane = 0; lane < 2; lane++) {
          words(lanes[lane][0]).forEach((w, i) => (mem[2 * i + lane] = w));
          words(lanes[lane][1]).forEach((w, i) => (mem[10 + 2 * i + lane] = w));
        }
        instance.exports.mul2(0, 80, 160);
        for (let lane = 0; lane < Math.min(2, pairs.length - c); lane++) {
          let v = 0n;
          for (let i = 4; i >= 0; i--) v = (v << 52n) + mem[20 + 2 * i + lane];
          out.push(v.toString());
        }
      }
      const probe = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(${JSON.stringify([...probe])})));
      const x = 2 ** 52 - 1;
      console.log(JSON.stringify({ fused: probe.exports.f(x, x, -(x * x)) === 1, out }));`;
    const child = Bun.spawnSync(["node", "--experimental-wasm-relaxed-simd", "--input-type=module", "-e", script], {
      cwd: dir,
      stdout: "pipe",
      stderr: "pipe",
    });
    if (child.exitCode !== 0) throw new Error(`node failed: ${child.stderr.toString()}`);
    const { fused, out } = JSON.parse(child.stdout.toString()) as { fused: boolean; out: string[] };
    return { fused, out: out.map(BigInt) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The mismatches of outputs against a·b·2^−260 mod q, with the output bound [0, 2q) the kernel promises. */
function mismatches(q: bigint, pairs: [bigint, bigint][], out: bigint[]): number {
  const rInv = pow(1n << 260n, q - 2n, q);
  return pairs.filter(([a, b], i) => {
    const v = out[i]!;
    return v < 0n || v >= 2n * q || v % q !== (((a * b) % q) * rInv) % q;
  }).length;
}

describe.each([
  ["Fp", P],
  ["Fr", R],
])("two-lane product modulo %s", (_, q) => {
  const pairs = operands(q, 300);

  test("where relaxed_madd fuses (Node/V8 with relaxed SIMD), every product is a·b·2^−260 mod q, below 2q", async () => {
    const bytes = await simdModuleBinary(q);
    const { fused, out } = await runUnderNode(bytes, pairs);
    // V8 lowers relaxed_madd to vfmadd on x86-64 with FMA3 and to fmla on arm64.
    expect(fused).toBe(true);
    expect(out.length).toBe(pairs.length);
    expect(mismatches(q, pairs, out)).toBe(0);
  }, 60_000);

  test("under this engine it is exact exactly when relaxed_madd fuses (JavaScriptCore on x86-64 multiplies, then adds)", async () => {
    const fused = await relaxedMaddFuses();
    const bad = mismatches(q, pairs, await runHere(await simdModuleBinary(q), pairs));
    if (fused) expect(bad).toBe(0);
    else expect(bad).toBeGreaterThan(pairs.length / 2);
  });
});
