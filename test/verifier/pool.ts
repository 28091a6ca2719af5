// A pool of real Groth16 proofs for the differential tests, generated once
// with snarkjs and cached in build/ (gitignored); tests derive hundreds of
// cases from it by mutation. Delete build/test-proofs-*.json to regenerate.
import { existsSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { snarkjs, referenceVerify } from "../support/snarkjs.ts";

const root = join(import.meta.dir, "..", "..");
export const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

export interface Circuit {
  name: string;
  wasm: string;
  zkey: string;
  vkey: any;
  /** A fresh random witness input and the public signals it should produce. */
  input(i: number): Promise<Record<string, unknown>>;
}
export interface PoolEntry {
  proof: any;
  publicSignals: string[];
}

const rand = (bits = 248) => {
  const b = crypto.getRandomValues(new Uint8Array(bits / 8));
  return BigInt("0x" + Buffer.from(b).toString("hex")) % R;
};

/**
 * snarkjs's verifier with the single-threaded curve guaranteed present: any
 * module that loads another ffjavascript copy (circomlibjs does) resets
 * globalThis.curve_bn128 to null, after which snarkjs would start worker
 * threads that never finish under Bun.
 */
export async function reference(vk: unknown, publicSignals: string[], proof: unknown): Promise<boolean> {
  if (!(globalThis as any).curve_bn128) {
    // @ts-ignore — untyped nested dependency (same copy test/support/snarkjs.ts uses)
    const { buildBn128 } = await import("ffjavascript");
    (globalThis as any).curve_bn128 = await buildBn128(true);
  }
  return referenceVerify(vk, publicSignals, proof);
}

let poseidon: any;
/**
 * circomlibjs loads another copy of ffjavascript whose module initialiser
 * sets globalThis.curve_bn128 = null, which would discard the single-threaded
 * curve test/support/snarkjs.ts installed for the reference verifier (snarkjs
 * then starts worker threads and hangs under Bun). Load it lazily and put the
 * curve back.
 */
async function loadPoseidon() {
  const saved = (globalThis as any).curve_bn128;
  // @ts-ignore — untyped
  const { buildPoseidon } = await import("circomlibjs");
  (globalThis as any).curve_bn128 ??= saved;
  return buildPoseidon();
}
export const agentIdentity: Circuit = {
  name: "agent_identity",
  wasm: join(root, "circuits/artifacts/agent_identity.wasm"),
  zkey: join(root, "circuits/artifacts/agent_identity.zkey"),
  vkey: JSON.parse(readFileSync(join(root, "circuits/artifacts/verification_key.json"), "utf8")),
  async input() {
    poseidon ??= await loadPoseidon();
    const secret = rand();
    const commitment = poseidon.F.toObject(poseidon([secret])) as bigint;
    return {
      secret: secret.toString(),
      identity_commitment: commitment.toString(),
      nonce: rand().toString(),
      action_hash: rand().toString(),
      context_hash: rand().toString(),
    };
  },
};

const fixture = (f: string) => join(root, "test/fixtures/verifier", f);
export const sevenInputs: Circuit = {
  name: "seven_inputs",
  wasm: fixture("seven_inputs.wasm"),
  zkey: fixture("seven_inputs.zkey"),
  vkey: JSON.parse(readFileSync(fixture("seven_inputs.vkey.json"), "utf8")),
  async input(i) {
    // Include boundary values: 0, 1 and r − 1 among the public inputs.
    const x = Array.from({ length: 7 }, (_, j) => (j === 1 ? 0n : j === 2 ? 1n : j === 3 ? R - 1n : rand()).toString());
    return { w: (rand() + BigInt(i)).toString(), x };
  },
};
export const noInputs: Circuit = {
  name: "no_inputs",
  wasm: fixture("no_inputs.wasm"),
  zkey: fixture("no_inputs.zkey"),
  vkey: JSON.parse(readFileSync(fixture("no_inputs.vkey.json"), "utf8")),
  async input(i) {
    return i % 2 ? { a: "5", b: "7" } : { a: "7", b: "5" };
  },
};

/** The cached pool for a circuit, generating (≈0.3 s per proof) what is missing. */
export async function proofPool(c: Circuit, size: number): Promise<PoolEntry[]> {
  const file = join(root, "build", `test-proofs-${c.name}.json`);
  let pool: PoolEntry[] = [];
  if (existsSync(file)) {
    const cached = JSON.parse(readFileSync(file, "utf8"));
    // The cache is only valid for the current key (the zkey may be rebuilt).
    if (JSON.stringify(cached.vkey) === JSON.stringify(c.vkey)) pool = cached.pool;
  }
  if (pool.length < size) {
    for (let i = pool.length; i < size; i++) {
      const { proof, publicSignals } = await snarkjs.groth16.fullProve(await c.input(i), c.wasm, c.zkey, undefined, undefined, {
        singleThread: true,
      });
      pool.push({ proof, publicSignals });
    }
    mkdirSync(join(root, "build"), { recursive: true });
    writeFileSync(file, JSON.stringify({ vkey: c.vkey, pool }));
  }
  return pool.slice(0, size);
}
