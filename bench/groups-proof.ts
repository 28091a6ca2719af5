// Benchmark: a Semaphore v4 group proof, both ends, against the stock client
// in one run (bun run bench:groups-proof = bun bench/groups-proof.ts).
//
//   zkagent proof      the agent SDK end to end (src/agent/group.ts
//                      proveGroupMembership: tree rebuilt from the member list,
//                      witness, zkagent's own prover, statement check); "first":
//                      the first proof at a depth in the process (artifacts read
//                      and hash-checked, prover built), then each later proof
//   stock proof        @semaphore-protocol/proof generateProof (snarkjs
//                      fullProve under node, its worker threads), the Group
//                      built once, the package's artifacts passed as paths
//   zkagent verify     the service's WebAssembly verifier (the depth's vk) on
//                      the stock client's proof
//   stock verify       @semaphore-protocol/proof verifyProof under node on the
//                      same proof
//   tree rebuild       the Lean IMT from a member list (poseidon-lite), per size
//
// The prover alone (zkagent's against snarkjs, per stage) is bench:prover.
// The machine is shared: the two sides alternate per depth and every figure
// is a median. Options: --iterations N (proofs per depth and side, default 5),
// --verifications N (per depth and side, default 50), --depths 4,10,20,32
// (at least 4: the group has 16 members),
// --sizes 1000,10000 (tree rebuild), --json (one object on stdout).
import { parseArgs } from "node:util";
import { LeanIMT } from "@zk-kit/lean-imt";
import { poseidon2 } from "poseidon-lite/poseidon2";
import { createSemaphoreIdentity, proveGroupMembership } from "../src/agent";
import { semaphoreFile } from "../src/circuits/semaphore";
import { parseSemaphoreProof, publicSignals, unpackPoints } from "../src/groups/proof-object";
import { serviceVerifier } from "../src/verifier/service";
import { ARTIFACTS_DIR, ROOT } from "../test/agent/stock-semaphore";
import { median } from "./support";

const { values } = parseArgs({
  options: {
    iterations: { type: "string" },
    verifications: { type: "string" },
    depths: { type: "string" },
    sizes: { type: "string" },
    json: { type: "boolean" },
  },
});
const iterations = Number(values.iterations ?? 5);
const verifications = Number(values.verifications ?? 50);
const depths = (values.depths ?? "4,10,20,32").split(",").map(Number);
const sizes = (values.sizes ?? "1000,10000").split(",").map(Number);
const log = (line: string) => (values.json ? process.stderr : process.stdout).write(`${line}\n`);

const ids = Array.from({ length: 16 }, () => createSemaphoreIdentity());
const members = ids.map((id) => id.identity_commitment);
const root = new LeanIMT<bigint>((a, b) => poseidon2([a, b]), members.map(BigInt)).root.toString();
const challenge = (depth: number, i: number) => ({
  challenge_id: "ch_bench",
  nonce: "00",
  action: "purchase",
  group_id: "bench",
  merkle_tree_root: root,
  merkle_tree_depth: depth,
  message: String(1000 + i),
  scope: "42",
  circuit_id: `semaphore-${depth}`,
});

const entry = (pkg: string) => JSON.stringify(Bun.resolveSync(pkg, ROOT));
// One node process per depth: `warm` proofs first (snarkjs's start-up, discarded), then the timed ones, then verifyProof on the last.
const STOCK = `
import { generateProof, verifyProof } from ${entry("@semaphore-protocol/proof")};
import { Identity } from ${entry("@semaphore-protocol/identity")};
import { Group } from ${entry("@semaphore-protocol/group")};
const { privateKey, members, depth, iterations, verifications } = JSON.parse(process.argv[1]);
const identity = Identity.import(privateKey);
const group = new Group(members.map(BigInt));
const dir = ${JSON.stringify(ARTIFACTS_DIR)};
const artifacts = { wasm: dir + "/semaphore-" + depth + ".wasm", zkey: dir + "/semaphore-" + depth + ".zkey" };
let proof = await generateProof(identity, group, "999", "42", depth, artifacts);
const prove = [];
for (let i = 0; i < iterations; i++) {
  const t = performance.now();
  proof = await generateProof(identity, group, String(1000 + i), "42", depth, artifacts);
  prove.push(performance.now() - t);
}
if (!(await verifyProof(proof))) throw new Error("stock verifyProof refused the stock proof");
const verify = [];
for (let i = 0; i < verifications; i++) {
  const t = performance.now();
  await verifyProof(proof);
  verify.push(performance.now() - t);
}
process.stdout.write(JSON.stringify({ prove, verify, proof }));
process.exit(0);`;

async function stock(depth: number): Promise<{ prove: number[]; verify: number[]; proof: unknown }> {
  const payload = JSON.stringify({ privateKey: ids[3]!.private_key, members, depth, iterations, verifications });
  const child = Bun.spawn(["node", "--input-type=module", "-e", STOCK, payload], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`the stock client under node exited ${code}: ${err}`);
  return JSON.parse(out);
}

const results: Record<string, number>[] = [];
for (const depth of depths) {
  const first = performance.now();
  await proveGroupMembership({ privateKey: ids[3]!.private_key, members, challenge: challenge(depth, 0) });
  const firstMs = performance.now() - first;
  const ours: number[] = [];
  for (let i = 1; i <= iterations; i++) {
    const t = performance.now();
    await proveGroupMembership({ privateKey: ids[3]!.private_key, members, challenge: challenge(depth, i) });
    ours.push(performance.now() - t);
  }

  const theirs = await stock(depth);
  const proof = parseSemaphoreProof(theirs.proof);
  if (!proof) throw new Error(`depth ${depth}: the stock proof does not parse`);
  const verifier = await serviceVerifier(JSON.parse(new TextDecoder().decode(await semaphoreFile(depth, "vk"))));
  const points = unpackPoints(proof.points);
  const signals = publicSignals(proof);
  const verifyTimes: number[] = [];
  for (let i = 0; i < verifications; i++) {
    const t = performance.now();
    const verdict = await verifier.verify(points, signals);
    verifyTimes.push(performance.now() - t);
    if (!verdict.ok) throw new Error(`depth ${depth}: zkagent's verifier refused the stock proof (${verdict.reason})`);
  }

  const row = {
    depth,
    zkagent_proof_first_ms: firstMs,
    zkagent_proof_ms: median(ours),
    stock_proof_ms: median(theirs.prove),
    proof_ratio: median(theirs.prove) / median(ours),
    zkagent_verify_ms: median(verifyTimes),
    stock_verify_ms: median(theirs.verify),
    verify_ratio: median(theirs.verify) / median(verifyTimes),
  };
  results.push(row);
  log(
    `depth ${String(depth).padStart(2)}: proof zkagent ${row.zkagent_proof_ms.toFixed(0)} ms (first ${firstMs.toFixed(0)} ms) · stock generateProof ${row.stock_proof_ms.toFixed(0)} ms · stock/zkagent ${row.proof_ratio.toFixed(2)}×` +
      ` | verify zkagent ${row.zkagent_verify_ms.toFixed(2)} ms · stock verifyProof ${row.stock_verify_ms.toFixed(2)} ms · stock/zkagent ${row.verify_ratio.toFixed(2)}×`,
  );
}

const rebuild: Record<string, number> = {};
for (const size of sizes) {
  const leaves = Array.from({ length: size }, (_, i) => BigInt(i + 1) * 7919n);
  const t = performance.now();
  new LeanIMT<bigint>((a, b) => poseidon2([a, b]), leaves);
  rebuild[size] = performance.now() - t;
  log(`tree rebuild, ${size} members: ${rebuild[size]!.toFixed(0)} ms (${((rebuild[size]! / size) * 1000).toFixed(0)} µs per member)`);
}
if (values.json) process.stdout.write(`${JSON.stringify({ iterations, verifications, depths: results, tree_rebuild_ms: rebuild })}\n`);
// The verifier may hold a worker; the figures are out.
process.exit(0);
