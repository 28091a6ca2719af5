// bench:group-proof — a group proof at the depths the service ships: the
// stock Semaphore v4 client's generateProof (snarkjs fullProve under node,
// its worker threads) and this service's WebAssembly verifier on the same
// proof, against snarkjs's groth16.verify under node on the same machine in
// the same run (bench/verifier-snarkjs.mjs is not reused: that one reads the
// shipped circuit).
//
//   bun bench/group-proof.ts [--depths 1,10,20,32] [--verifications 50]
import { parseArgs } from "node:util";
import { Identity } from "@semaphore-protocol/identity";
import { semaphoreFile } from "../src/circuits/semaphore";
import { groupMessage, groupScope, parseSemaphoreProof, publicSignals, unpackPoints } from "../src/groups/statement";
import { serviceVerifier } from "../src/verifier/service";
import { stockProofs } from "../test/support/semaphore";

const { values } = parseArgs({ options: { depths: { type: "string" }, verifications: { type: "string" } } });
const DEPTHS = (values.depths ?? "1,10,20,32").split(",").map(Number);
const N = Number(values.verifications ?? 50);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const members = ["bench-a", "bench-b"].map((seed) => new Identity(seed).commitment.toString());
const message = groupMessage({ nonce: "ab".repeat(31), action: "purchase", context: null }).toString();
const scope = groupScope("bench-key", "bench-group").toString();
// The first proof of a node process also pays snarkjs's start-up: one more at the first depth, discarded.
const results = (await stockProofs([DEPTHS[0]!, ...DEPTHS].map((depth) => ({ privateKey: "bench-a", members, message, scope, depth })))).slice(1);

console.log("depth  stock generateProof (node)   zkagent verify (median of N)");
for (const [i, depth] of DEPTHS.entries()) {
  const result = results[i]!;
  if (result.error) throw new Error(result.error);
  const proof = parseSemaphoreProof(result.proof)!;
  const verifier = await serviceVerifier(JSON.parse(new TextDecoder().decode(await semaphoreFile(depth, "vk"))));
  const snarkjsProof = unpackPoints(proof.points);
  const signals = publicSignals(proof);
  const times: number[] = [];
  for (let k = 0; k < N; k++) {
    const t = performance.now();
    const verdict = await verifier.verify(snarkjsProof, signals);
    times.push(performance.now() - t);
    if (!verdict.ok) throw new Error(`depth ${depth}: ${verdict.reason}`);
  }
  console.log(`${String(depth).padStart(5)}  ${result.ms!.toFixed(0).padStart(8)} ms                   ${median(times).toFixed(2)} ms`);
}
process.exit(0);
