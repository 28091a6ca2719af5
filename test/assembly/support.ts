// Shared helpers for the wasm tests: a fresh instance of the test build
// (build/verifier-test.wasm, entry assembly/testing.ts), byte codecs for its
// ABI, and a BigInt twin of Fp / Fp2 / G1 / G2.
import { instantiate } from "@assemblyscript/loader";
import type { VerifierExports } from "../../src/verifier/wasm.ts";
import { TEST_WASM_PATH, buildPath, buildWasm, isStale } from "../../scripts/asc-build.ts";
import { WASM_BUILD, type WasmBuild } from "../../src/wasm-engine.ts";

export const P = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
export const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/** The test build's exports: the production ABI plus the operations of assembly/testing.ts. */
export type TestExports = VerifierExports & {
  fpOp(op: number): number;
  fp2Op(op: number): number;
  fp2MulRaw(): void;
  fp2SqrRaw(): void;
  fp12Op(op: number, expLen: number): number;
  g1Add(): number;
  g1Mul(): number;
  g2Op(op: number): number;
  pairingCheck(k: number): number;
  pairing(): number;
  benchOp(op: number, n: number): void;
  benchStage(stage: number): void;
};

const testModules = new Map<WasmBuild, Promise<WebAssembly.Module>>();
/**
 * A fresh instance of the test build (built first when stale, as the preload
 * does), by default in the process's build (src/wasm-engine.ts: the wide one
 * under Bun, the portable one with ZKAGENT_WASM=portable).
 */
export async function newWasm(build: WasmBuild = WASM_BUILD): Promise<TestExports> {
  let testModule = testModules.get(build);
  if (!testModule) {
    testModule = (async () => {
      if (isStale(TEST_WASM_PATH)) buildWasm(TEST_WASM_PATH);
      return WebAssembly.compile(await Bun.file(buildPath(TEST_WASM_PATH, build)).arrayBuffer());
    })();
    testModules.set(build, testModule);
  }
  const { exports } = await instantiate<TestExports>(await testModule, {});
  return exports as unknown as TestExports;
}

export const mod = (a: bigint, m = P) => ((a % m) + m) % m;
export const powMod = (b: bigint, e: bigint, m = P) => {
  let r = 1n;
  b = mod(b, m);
  while (e > 0n) {
    if (e & 1n) r = (r * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return r;
};
export const invMod = (a: bigint, m = P) => (a === 0n ? 0n : powMod(a, m - 2n, m));

export const toBytes32 = (x: bigint): Uint8Array => {
  const out = new Uint8Array(32);
  for (let i = 31; i >= 0; i--) {
    out[i] = Number(x & 0xffn);
    x >>= 8n;
  }
  return out;
};
export const fromBytes = (b: Uint8Array): bigint => {
  let x = 0n;
  for (const v of b) x = (x << 8n) | BigInt(v);
  return x;
};
export const concat = (...parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};
export const hexToBytes = (h: string) => Uint8Array.from(Buffer.from(h, "hex"));
export const bytesToHex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** Writes input into the I/O buffer (sized for input + extra) and calls fn. */
export function call(w: VerifierExports, input: Uint8Array, extra: number, fn: () => number): { status: number; io: Uint8Array } {
  const ptr = w.io(input.length + extra);
  new Uint8Array(w.memory.buffer, ptr, input.length + extra).fill(0);
  new Uint8Array(w.memory.buffer, ptr, input.length).set(input);
  const status = fn();
  const p2 = w.io(0);
  return { status, io: new Uint8Array(w.memory.buffer, p2, input.length + extra).slice() };
}

// --- BigInt twin: Fp2 = Fp[u]/(u²+1) as [c0, c1] ------------------------------------
/** x as the modules' nine 29-bit little-endian limbs (36 bytes), limb 8 taking every bit above 232 (as lazy sums leave it). */
export function limbs(x: bigint): Uint8Array {
  const out = new Uint8Array(36);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) view.setUint32(4 * i, Number((x >> BigInt(29 * i)) & 0x1fffffffn), true);
  view.setUint32(32, Number(x >> 232n), true);
  return out;
}
/** The number nine 29-bit limbs hold (lazy forms included). */
export function fromLimbs(b: Uint8Array): bigint {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let x = 0n;
  for (let i = 8; i >= 0; i--) x = (x << 29n) + BigInt(view.getUint32(4 * i, true));
  return x;
}

export type F2 = [bigint, bigint];
export const f2 = {
  add: (a: F2, b: F2): F2 => [mod(a[0] + b[0]), mod(a[1] + b[1])],
  sub: (a: F2, b: F2): F2 => [mod(a[0] - b[0]), mod(a[1] - b[1])],
  mul: (a: F2, b: F2): F2 => [mod(a[0] * b[0] - a[1] * b[1]), mod(a[0] * b[1] + a[1] * b[0])],
  sqr: (a: F2): F2 => f2.mul(a, a),
  neg: (a: F2): F2 => [mod(-a[0]), mod(-a[1])],
  inv: (a: F2): F2 => {
    const t = invMod(mod(a[0] * a[0] + a[1] * a[1]));
    return [mod(a[0] * t), mod(-a[1] * t)];
  },
  eq: (a: F2, b: F2) => a[0] === b[0] && a[1] === b[1],
  isZero: (a: F2) => a[0] === 0n && a[1] === 0n,
  pow: (a: F2, e: bigint): F2 => {
    let r: F2 = [1n, 0n];
    while (e > 0n) {
      if (e & 1n) r = f2.mul(r, a);
      a = f2.mul(a, a);
      e >>= 1n;
    }
    return r;
  },
  /** Square root in Fp2 (p ≡ 3 mod 4), or undefined. Adj–Rodríguez-Henríquez 2012, Alg. 9. */
  sqrt: (a: F2): F2 | undefined => {
    const a1 = f2.pow(a, (P - 3n) / 4n);
    const alpha = f2.mul(a1, f2.mul(a1, a));
    const x0 = f2.mul(a1, a);
    let x: F2;
    if (f2.eq(alpha, [P - 1n, 0n])) x = f2.mul([0n, 1n], x0);
    else {
      const b = f2.pow(f2.add([1n, 0n], alpha), (P - 1n) / 2n);
      x = f2.mul(b, x0);
    }
    return f2.eq(f2.sqr(x), a) ? x : undefined;
  },
};
/** EIP-197 order: c1 ‖ c0. */
export const f2Bytes = (a: F2) => concat(toBytes32(a[1]), toBytes32(a[0]));
export const f2FromBytes = (b: Uint8Array): F2 => [fromBytes(b.subarray(32, 64)), fromBytes(b.subarray(0, 32))];

// --- BigInt twin: curve arithmetic (affine, null = infinity) ------------------------
export type G1 = { x: bigint; y: bigint } | null;
export type G2 = { x: F2; y: F2 } | null;
export const XI: F2 = [9n, 1n];
export const TWIST_B = f2.mul([3n, 0n], f2.inv(XI));
export const G1_GEN: G1 = { x: 1n, y: 2n };
export const G2_GEN: G2 = {
  x: [
    10857046999023057135944570762232829481370756359578518086990519993285655852781n,
    11559732032986387107991004021392285783925812861821192530917403151452391805634n,
  ],
  y: [
    8495653923123431417604973247489272438418190587263600148770280649306958101930n,
    4082367875863433681332203403145435568316851327593401208105741076214120093531n,
  ],
};

export function g1Add(a: G1, b: G1): G1 {
  if (!a) return b;
  if (!b) return a;
  let l: bigint;
  if (a.x === b.x) {
    if (mod(a.y + b.y) === 0n) return null;
    l = mod(3n * a.x * a.x * invMod(2n * a.y));
  } else l = mod((b.y - a.y) * invMod(b.x - a.x));
  const x = mod(l * l - a.x - b.x);
  return { x, y: mod(l * (a.x - x) - a.y) };
}
export function g1Mul(a: G1, k: bigint): G1 {
  let r: G1 = null;
  for (let i = k.toString(2).length - 1; i >= 0; i--) {
    r = g1Add(r, r);
    if ((k >> BigInt(i)) & 1n) r = g1Add(r, a);
  }
  return r;
}
export function g2Add(a: G2, b: G2): G2 {
  if (!a) return b;
  if (!b) return a;
  let l: F2;
  if (f2.eq(a.x, b.x)) {
    if (f2.isZero(f2.add(a.y, b.y))) return null;
    l = f2.mul(f2.mul([3n, 0n], f2.sqr(a.x)), f2.inv(f2.add(a.y, a.y)));
  } else l = f2.mul(f2.sub(b.y, a.y), f2.inv(f2.sub(b.x, a.x)));
  const x = f2.sub(f2.sub(f2.sqr(l), a.x), b.x);
  return { x, y: f2.sub(f2.mul(l, f2.sub(a.x, x)), a.y) };
}
export function g2Mul(a: G2, k: bigint): G2 {
  let r: G2 = null;
  for (let i = k.toString(2).length - 1; i >= 0; i--) {
    r = g2Add(r, r);
    if ((k >> BigInt(i)) & 1n) r = g2Add(r, a);
  }
  return r;
}
export const g1Bytes = (p: G1) => (p ? concat(toBytes32(p.x), toBytes32(p.y)) : new Uint8Array(64));
export const g2Bytes = (p: G2) => (p ? concat(f2Bytes(p.x), f2Bytes(p.y)) : new Uint8Array(128));
export const g2OnCurve = (p: { x: F2; y: F2 }) => f2.eq(f2.sqr(p.y), f2.add(f2.mul(f2.sqr(p.x), p.x), TWIST_B));

/** A point of E'(Fp2) found by hashing a seed to x (no cofactor clearing): almost never in G2. */
export function twistPointFromSeed(seed: bigint): { x: F2; y: F2 } {
  for (let i = 0n; ; i++) {
    const x: F2 = [mod(seed * 1000003n + i), mod(seed * 7919n + 3n * i + 1n)];
    const y = f2.sqrt(f2.add(f2.mul(f2.sqr(x), x), TWIST_B));
    if (y) return { x, y };
  }
}

export const randomBelow = (m: bigint): bigint => {
  const bytes = crypto.getRandomValues(new Uint8Array(40));
  return fromBytes(bytes) % m;
};
