// Shared by test/prover: the circuits under test, and snarkjs's verifier as
// an independent reference run under Node in ONE child process for a whole
// batch (snarkjs's verify starts worker threads that never finish under Bun).
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "../..");
export const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

export interface CircuitFiles {
  name: string;
  zkey: Uint8Array;
  wasm: Uint8Array;
  vkey: unknown;
}

const read = (path: string) => new Uint8Array(readFileSync(join(ROOT, path)));
const fixture = (name: string): CircuitFiles => ({
  name,
  zkey: read(`test/fixtures/verifier/${name}.zkey`),
  wasm: read(`test/fixtures/verifier/${name}.wasm`),
  vkey: JSON.parse(readFileSync(join(ROOT, `test/fixtures/verifier/${name}.vkey.json`), "utf8")),
});

export const agentCircuit: CircuitFiles = {
  name: "agent_identity",
  zkey: read("circuits/artifacts/agent_identity.zkey"),
  wasm: read("circuits/artifacts/agent_identity.wasm"),
  vkey: JSON.parse(readFileSync(join(ROOT, "circuits/artifacts/verification_key.json"), "utf8")),
};
/** Seven public inputs x[0..6] and a private w (test/fixtures/verifier/seven_inputs.circom). */
export const sevenInputs = fixture("seven_inputs");
/** No public input; private a·b = 35 asserted (test/fixtures/verifier/no_inputs.circom). */
export const noInputs = fixture("no_inputs");

export const randomField = (): bigint => {
  const b = crypto.getRandomValues(new Uint8Array(32));
  let x = 0n;
  for (const v of b) x = (x << 8n) | BigInt(v);
  return x % R;
};

export interface ReferenceCase {
  vkey: unknown;
  publicSignals: string[];
  proof: unknown;
}

const SCRIPT = `
import * as snarkjs from ${JSON.stringify(join(ROOT, "node_modules/snarkjs/main.js"))};
let text = "";
for await (const chunk of process.stdin) text += chunk;
const quiet = { log() {}, info() {}, debug() {}, warn() {}, error() {} };
const out = [];
for (const c of JSON.parse(text)) out.push(await snarkjs.groth16.verify(c.vkey, c.publicSignals, c.proof, quiet));
process.stdout.write(JSON.stringify(out));
process.exit(0);`;

/** snarkjs groth16.verify under node for every case, in one child process: one verdict per case. */
export async function referenceVerifyAll(cases: ReferenceCase[]): Promise<boolean[]> {
  const child = Bun.spawn(["node", "--input-type=module", "-e", SCRIPT], { cwd: ROOT, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  child.stdin.write(JSON.stringify(cases));
  await child.stdin.end();
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`snarkjs under node exited ${code}: ${stderr}`);
  return JSON.parse(stdout);
}
