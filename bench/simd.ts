// The relaxed-SIMD experiment's measure (scripts/wide/simd.ts): one two-lane
// product (two Fp products, one per f64x2 lane) against two products of the
// wide build's fpMul (benchOp(0, 2n) of the verifier's test module), in
// alternating blocks in one process; each figure is the minimum over blocks,
// per Fp product. Where this engine's relaxed_madd does not fuse (JavaScriptCore
// on x86-64), the two-lane products are wrong and the figure is only what the
// instruction sequence costs (a fused lowering would replace a multiply and
// an add by one instruction).
//
//   bun bench/simd.ts [--blocks 200]
import { parseArgs } from "node:util";
import { instantiate } from "@assemblyscript/loader";
import { buildPath, buildWasm, isStale, TEST_WASM_PATH } from "../scripts/asc-build";
import { relaxedMaddFuses, simdModuleBinary } from "../scripts/wide/simd";

const { values } = parseArgs({ options: { blocks: { type: "string" } } });
const BLOCKS = Number(values.blocks ?? 200);
if (isStale(TEST_WASM_PATH)) buildWasm(TEST_WASM_PATH);
type Loops = { memory: WebAssembly.Memory; io(size: number): number; benchOp(op: number, n: number): void };
const wide = (await instantiate<Loops>(await WebAssembly.compile(await Bun.file(buildPath(TEST_WASM_PATH, "wide")).arrayBuffer()), {}))
  .exports as unknown as Loops;
const simd = (await WebAssembly.instantiate(await simdModuleBinary(), {})).instance.exports as unknown as {
  memory: WebAssembly.Memory;
  bench2(n: number): void;
};
// Operands below 2^256 in 52-bit limbs (both lanes), as the product requires.
const limbs = new BigUint64Array(simd.memory.buffer, 0, 20);
for (let i = 0; i < 20; i++) limbs[i] = (BigInt(0x1234567 * (i + 3)) * 0x9e3779b1n) & ((1n << 52n) - 1n);
limbs[8] = limbs[9] = limbs[18] = limbs[19] = 0x1234n;
const N = 2_000; // Fp products a block
const runs = {
  "wide fpMul ×2": () => wide.benchOp(0, N),
  "two-lane SIMD": () => simd.bench2(N / 2),
};
const times: Record<string, number[]> = { "wide fpMul ×2": [], "two-lane SIMD": [] };
for (let b = 0; b < BLOCKS; b++)
  for (const [name, run] of Object.entries(runs)) {
    const t = Bun.nanoseconds();
    run();
    times[name]!.push((Bun.nanoseconds() - t) / N);
  }
const pick = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!;
for (const [name, xs] of Object.entries(times)) console.log(`${name.padEnd(16)} ${pick(xs, 0).toFixed(1)} ns per Fp product (p10 ${pick(xs, 0.1).toFixed(1)})`);
console.log(`relaxed_madd fuses on this engine: ${await relaxedMaddFuses()} (the two-lane products are exact only if it does)`);
const ratio = pick(times["wide fpMul ×2"]!, 0) / pick(times["two-lane SIMD"]!, 0);
console.log(`two-lane / wide: ${ratio.toFixed(2)}× the speed`);
